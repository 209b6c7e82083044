package api

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// healthz answers while the process is up.
func (s *Server) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// readyz answers 200 when Temporal is reachable and the namespace exists.
func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 5*time.Second)
	defer cancel()
	if _, err := s.temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "reason": "temporal is not reachable"})
		return
	}
	if _, err := s.temporal.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: s.namespace}); err != nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "reason": "namespace " + s.namespace + " is not ready"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready", "namespace": s.namespace})
}

// keyTemporalDown marks, in a request's context, that Temporal was
// unreachable while serving it.
const keyTemporalDown = "recur.temporalDown"

// probeEvery is how often, while Temporal is down, one request probes it;
// the others answer 503 at once.
const probeEvery = time.Second

// outage remembers that Temporal was unreachable, so that during an outage
// requests answer 503 at once instead of each waiting out its timeout.
type outage struct {
	mu        sync.Mutex
	down      bool
	lastProbe time.Time
}

// admit reports whether a request may go to Temporal: always while it is
// up; while it is down, only after a probe (at most one per probeEvery)
// finds it back.
func (o *outage) admit(ctx context.Context, probe func(context.Context) error) bool {
	o.mu.Lock()
	if !o.down {
		o.mu.Unlock()
		return true
	}
	if time.Since(o.lastProbe) < probeEvery {
		o.mu.Unlock()
		return false
	}
	o.lastProbe = time.Now()
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
		o.down, o.lastProbe = true, time.Now()
	}
}

// temporalGate answers 503 at once while Temporal is known to be down, and
// notes an outage that a request ran into.
func (s *Server) temporalGate(c *gin.Context) {
	probe := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, probeEvery)
		defer cancel()
		_, err := s.temporal.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err
	}
	if !s.outage.admit(c.Request.Context(), probe) {
		writeError(c, s.log, errTemporalUnreachable)
		return
	}
	c.Next()
	if c.GetBool(keyTemporalDown) {
		s.outage.suspect(context.WithoutCancel(c.Request.Context()), probe)
	}
}
