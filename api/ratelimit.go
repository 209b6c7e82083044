package api

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"
)

// RateLimit is the number of requests a subscription may make: a token
// bucket of Burst requests refilled at PerSecond. A PerSecond of zero
// turns the limit off.
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
	limit rate.Limit
	burst int
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	limiter  *rate.Limiter
	lastSeen time.Time
}

// newLimiters returns the buckets of cfg, or nil when it limits nothing.
func newLimiters(cfg RateLimit) *limiters {
	if cfg.PerSecond <= 0 {
		return nil
	}
	burst := max(cfg.Burst, 1)
	return &limiters{limit: rate.Limit(cfg.PerSecond), burst: burst, now: time.Now, buckets: map[string]*bucket{}}
}

// refill is how long an empty bucket takes to fill.
func (l *limiters) refill() time.Duration {
	return time.Duration(float64(l.burst) / float64(l.limit) * float64(time.Second))
}

// wait takes a token from key's bucket; when it is empty, it returns how
// long until the next token, and takes nothing.
func (l *limiters) wait(key string) time.Duration {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		l.makeRoom(now)
		b = &bucket{limiter: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[key] = b
	}
	b.lastSeen = now
	r := b.limiter.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d
	}
	return 0
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
		c.Header("Retry-After", strconv.Itoa(int(max(1, math.Ceil(d.Seconds())))))
		abort(c, http.StatusTooManyRequests, "TooManyRequests",
			"too many requests for this subscription; retry after the number of seconds in Retry-After")
		return
	}
	c.Next()
}
