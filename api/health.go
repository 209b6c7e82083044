package api

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// healthz answers while the process is up.
func (s *Server) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// readyz answers 200 when Temporal is reachable, the namespace exists and
// Options.Ready, if set, has succeeded: a load balancer that sends writes
// on a 200 must not meet the 500 of a search attribute the frontend does
// not know yet.
func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 5*time.Second)
	defer cancel()
	if err := s.store.CheckHealth(ctx); err != nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "reason": "temporal is not reachable"})
		return
	}
	if err := s.store.DescribeNamespace(ctx); err != nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "reason": "namespace " + s.namespace + " is not ready"})
		return
	}
	if err := s.ready.pass(ctx); err != nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "reason": "recur's search attributes are not usable in namespace " + s.namespace + " yet"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready", "namespace": s.namespace})
}

// errNotReady answers requests until Options.Ready has succeeded.
var errNotReady = &apiError{status: http.StatusServiceUnavailable, code: "ServiceUnavailable",
	message: "recur is starting: its search attributes are not usable in Temporal yet; try again later"}

// readiness remembers that Options.Ready succeeded; it never fails again
// after that. Until then, one request per probeEvery calls it and the
// others are answered at once, so that a burst of requests at start does
// not become a burst of visibility queries.
type readiness struct {
	check func(context.Context) error

	mu     sync.Mutex
	ready  bool
	probes probeTurns
}

// pass returns nil once the check has succeeded, probing when one is due,
// and errNotReady until then. A nil readiness is always ready.
func (r *readiness) pass(ctx context.Context) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	if r.ready {
		r.mu.Unlock()
		return nil
	}
	if !r.probes.take() {
		r.mu.Unlock()
		return errNotReady
	}
	r.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if r.check(ctx) != nil {
		return errNotReady
	}
	r.mu.Lock()
	r.ready = true
	r.mu.Unlock()
	return nil
}

// probeEvery is how often, while Temporal is down or recur not ready in
// it, one request probes it; the others answer 503 at once.
const probeEvery = time.Second

// probeTurns hands out a turn to probe at most once per probeEvery; its
// owner's lock guards it.
type probeTurns struct{ last time.Time }

// take reports whether a probe is due now, and if so starts its turn.
func (p *probeTurns) take() bool {
	if time.Since(p.last) < probeEvery {
		return false
	}
	p.last = time.Now()
	return true
}

// outage remembers that Temporal was unreachable, so that during an outage
// requests answer 503 at once instead of each waiting out its timeout.
type outage struct {
	mu     sync.Mutex
	down   bool
	probes probeTurns
}

// pass reports whether a request may go to Temporal: always while it is
// up; while it is down, only after a probe (at most one per probeEvery)
// finds it back.
func (o *outage) pass(ctx context.Context, probe func(context.Context) error) bool {
	o.mu.Lock()
	if !o.down {
		o.mu.Unlock()
		return true
	}
	if !o.probes.take() {
		o.mu.Unlock()
		return false
	}
	o.mu.Unlock()

	if probe(ctx) != nil {
		return false
	}
	o.mu.Lock()
	o.down = false
	o.mu.Unlock()
	return true
}

// suspect is told of a request that found Temporal unreachable or too
// slow, and closes the gate if a probe confirms it. A request that timed
// out may have met a loaded Temporal, not a down one: closing the gate
// on it would turn every request of the next second into a 503, and a
// burst of PUTs into a cascade of them.
func (o *outage) suspect(ctx context.Context, probe func(context.Context) error) {
	if probe(ctx) != nil {
		o.markDown()
	}
}

func (o *outage) markDown() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.down {
		o.down, o.probes.last = true, time.Now()
	}
}

// temporalGate answers 503 at once while Temporal is known to be down or
// recur not yet ready in it (Options.Ready), and notes an outage that a
// request ran into.
func (s *Server) temporalGate(c *gin.Context) {
	probe := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, probeEvery)
		defer cancel()
		return s.store.CheckHealth(ctx)
	}
	if !s.outage.pass(c.Request.Context(), probe) {
		writeError(c, s.log, errTemporalUnreachable)
		return
	}
	if err := s.ready.pass(c.Request.Context()); err != nil {
		writeError(c, s.log, err)
		return
	}
	c.Next()
	if c.GetBool(keyTemporalDown) {
		s.outage.suspect(context.WithoutCancel(c.Request.Context()), probe)
	}
}
