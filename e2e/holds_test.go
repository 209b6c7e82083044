package e2e

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/server/api/historyservice/v1"
	"go.temporal.io/server/api/matchingservice/v1"
	serverclient "go.temporal.io/server/client"
	"go.temporal.io/server/common"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/common/testing/testhooks"
	"go.temporal.io/server/temporal"
	"google.golang.org/grpc"

	"github.com/recurhq/recur/internal/recurtest"
)

// serverHolds is a client factory of the Temporal server whose clients
// hold some of the server's own calls, as a busy server holds them: the
// workflow tasks its matching clients add (holdAdds), the signals of one
// name its history clients deliver from workflow to workflow
// (holdSignals), and the answers to the updates of one name the frontend
// passes on to the history service (holdAnswers).
type serverHolds struct {
	addDelay atomic.Int64
	signals  namedHold // of the signals delivered
	answers  namedHold // of the answers to updates
}

// holdAdds holds each workflow task added from now on for d before it is
// added, or until the call's context ends; 0 holds none.
func (h *serverHolds) holdAdds(d time.Duration) { h.addDelay.Store(int64(d)) }

// holdSignals holds the signals named name delivered from now on until
// release, or until each call's context ends (the server then tries the
// delivery again).
func (h *serverHolds) holdSignals(name string) (release func()) { return h.signals.hold(name) }

// holdAnswers holds the answers to the updates named name sent from now
// on until release, or until each call's context ends: the update is
// taken, its answer late.
func (h *serverHolds) holdAnswers(name string) (release func()) { return h.answers.hold(name) }

// namedHold holds the calls of one name until released.
type namedHold struct {
	mu       sync.Mutex
	name     string        // "" for none
	released chan struct{} // closed when they may go
}

// hold holds the calls named name from now on until release.
func (h *namedHold) hold(name string) (release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	released := make(chan struct{})
	h.name, h.released = name, released
	return sync.OnceFunc(func() { close(released) })
}

// of is what a call named name waits on, nil if none.
func (h *namedHold) of(name string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if name == "" || name != h.name {
		return nil
	}
	return h.released
}

// newHeldStack starts a stack whose Temporal server's calls the returned
// holds hold, with its collection.
func newHeldStack(t *testing.T) (*stack, *serverHolds) {
	t.Helper()
	holds := &serverHolds{}
	s := newStackWith(t, recurtest.Config{ServerOptions: []temporal.ServerOption{temporal.WithClientFactoryProvider(holds)}})
	s.putCollection(t)
	return s, holds
}

func (h *serverHolds) NewFactory(rpc common.RPCFactory, monitor membership.Monitor, metricsHandler metrics.Handler,
	dc *dynamicconfig.Collection, hooks testhooks.TestHooks, shards int32, logger, throttled log.Logger) serverclient.Factory {
	return heldFactory{serverclient.NewFactoryProvider().NewFactory(rpc, monitor, metricsHandler, dc, hooks, shards, logger, throttled), h}
}

type heldFactory struct {
	serverclient.Factory
	holds *serverHolds
}

func (f heldFactory) NewMatchingClientWithTimeout(names serverclient.NamespaceIDToNameFunc, timeout, longPoll time.Duration) (matchingservice.MatchingServiceClient, error) {
	c, err := f.Factory.NewMatchingClientWithTimeout(names, timeout, longPoll)
	return heldMatching{c, f.holds}, err
}

func (f heldFactory) NewHistoryClientWithTimeout(timeout time.Duration) (historyservice.HistoryServiceClient, error) {
	c, err := f.Factory.NewHistoryClientWithTimeout(timeout)
	return heldHistory{c, f.holds}, err
}

type heldMatching struct {
	matchingservice.MatchingServiceClient
	holds *serverHolds
}

func (m heldMatching) AddWorkflowTask(ctx context.Context, req *matchingservice.AddWorkflowTaskRequest, opts ...grpc.CallOption) (*matchingservice.AddWorkflowTaskResponse, error) {
	if d := time.Duration(m.holds.addDelay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return m.MatchingServiceClient.AddWorkflowTask(ctx, req, opts...)
}

type heldHistory struct {
	historyservice.HistoryServiceClient
	holds *serverHolds
}

func (c heldHistory) SignalWorkflowExecution(ctx context.Context, req *historyservice.SignalWorkflowExecutionRequest, opts ...grpc.CallOption) (*historyservice.SignalWorkflowExecutionResponse, error) {
	if released := c.holds.signals.of(req.GetSignalRequest().GetSignalName()); released != nil {
		select {
		case <-released:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return c.HistoryServiceClient.SignalWorkflowExecution(ctx, req, opts...)
}

func (c heldHistory) UpdateWorkflowExecution(ctx context.Context, req *historyservice.UpdateWorkflowExecutionRequest, opts ...grpc.CallOption) (*historyservice.UpdateWorkflowExecutionResponse, error) {
	resp, err := c.HistoryServiceClient.UpdateWorkflowExecution(ctx, req, opts...)
	if answered := c.holds.answers.of(req.GetRequest().GetRequest().GetInput().GetName()); answered != nil {
		select {
		case <-answered:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return resp, err
}
