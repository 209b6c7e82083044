package api

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// RateLimit is how many of something (requests, backfill occurrences) a
// subscription may have: a token bucket of Burst refilled at PerSecond.
// A PerSecond of zero turns the limit off.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// maxLimiters bounds the buckets kept at once. With the API open anyone
// can name new subscriptions; past this many, one bucket is dropped for
// each new one (its subscription starts again with a full bucket).
const maxLimiters = 1 << 16

// limiters holds one token bucket per key (a subscription). A bucket
// idle long enough to have refilled is the same as a new one, so sweeps
// drop those without changing any answer.
type limiters struct {
	perSecond float64
	burst     int
	now       func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

// bucket is one key's tokens: as many as it held when last seen, to
// which the rate has added since, up to the burst.
type bucket struct {
	tokens   float64
	lastSeen time.Time
}

// newLimiters returns the buckets of cfg, or nil when it limits nothing.
func newLimiters(cfg RateLimit) *limiters {
	if cfg.PerSecond <= 0 {
		return nil
	}
	burst := max(cfg.Burst, 1)
	return &limiters{perSecond: cfg.PerSecond, burst: burst, now: time.Now, buckets: map[string]*bucket{}}
}

// refill is how long an empty bucket takes to fill.
func (l *limiters) refill() time.Duration {
	return l.duration(float64(l.burst))
}

// duration is how long the rate takes to add tokens.
func (l *limiters) duration(tokens float64) time.Duration {
	return time.Duration(tokens / l.perSecond * float64(time.Second))
}

// wait takes a token from key's bucket; when it is empty, it returns how
// long until the next token, and takes nothing.
func (l *limiters) wait(key string) time.Duration {
	return l.take(key, 1)
}

// take takes n tokens, at most the burst, from key's bucket; when it
// holds fewer, it returns how long until it holds n, and takes nothing.
func (l *limiters) take(key string, n int) time.Duration {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(key, now)
	if short := float64(n) - b.tokens; short > 0 {
		return l.duration(short)
	}
	b.tokens -= float64(n)
	return 0
}

// give hands n tokens taken back to key's bucket, up to the burst.
func (l *limiters) give(key string, n int) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(key, now)
	b.tokens = min(b.tokens+float64(n), float64(l.burst))
}

// bucket returns key's bucket as it is at now: refilled since it was
// last seen, or full if it is new. The caller holds mu.
func (l *limiters) bucket(key string, now time.Time) *bucket {
	b, ok := l.buckets[key]
	if !ok {
		l.makeRoom(now)
		b = &bucket{tokens: float64(l.burst)}
		l.buckets[key] = b
	} else if elapsed := now.Sub(b.lastSeen); elapsed > 0 {
		b.tokens = min(float64(l.burst), b.tokens+elapsed.Seconds()*l.perSecond)
	}
	b.lastSeen = now
	return b
}

// makeRoom drops refilled buckets at most once a minute (or refill
// period), and any one bucket when there are still too many. The caller
// holds mu.
func (l *limiters) makeRoom(now time.Time) {
	if now.Sub(l.lastSweep) >= max(l.refill(), time.Minute) {
		l.lastSweep = now
		for k, b := range l.buckets {
			if now.Sub(b.lastSeen) >= l.refill() {
				delete(l.buckets, k)
			}
		}
	}
	for k := range l.buckets {
		if len(l.buckets) < maxLimiters {
			break
		}
		delete(l.buckets, k)
	}
}

// rateLimit answers 429 TooManyRequests, with Retry-After, to a request
// whose subscription has used up its requests. Requests without a
// subscription in the path count against their principal, or with the
// API open, their client address.
func (s *Server) rateLimit(c *gin.Context) {
	if s.limits == nil {
		c.Next()
		return
	}
	key := "subscription:" + c.Param("subscriptionId")
	if c.Param("subscriptionId") == "" {
		key = "client:" + c.ClientIP()
		if p, ok := principalOf(c); ok {
			key = "principal:" + p.Name
		}
	}
	if d := s.limits.wait(key); d > 0 {
		retryAfter(c, d)
		abort(c, http.StatusTooManyRequests, "TooManyRequests",
			"too many requests for this subscription; retry after the number of seconds in Retry-After")
		return
	}
	c.Next()
}

// retryAfter says in Retry-After to come back after d, in whole seconds,
// at least one.
func retryAfter(c *gin.Context, d time.Duration) {
	c.Header("Retry-After", strconv.Itoa(int(max(1, math.Ceil(d.Seconds())))))
}
