// Package recurtest runs a whole recur in process for tests and tools: a
// Temporal server (temporaltest), recur's search attributes, a worker with
// recur's workflows and activities, and the REST API behind httptest.
package recurtest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/grpc"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/egress"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/metrics"
	"github.com/recurhq/recur/store"
	"github.com/recurhq/recur/temporalserver"
	recurworker "github.com/recurhq/recur/worker"
)

// Stack is a running recur.
type Stack struct {
	Temporal *temporaltest.TestServer
	API      *httptest.Server
	// Keys encrypt the payloads the stack writes to Temporal (its default
	// client's data converter); nil when Config.Plain.
	Keys *codec.Keys
	// Metrics is the registry the API serves at /metrics; the stack's
	// clients, worker, workflows and activities report into it.
	Metrics *metrics.Set

	worker     worker.Worker // recur's, of jobs.TaskQueue and of its attempts
	stopWorker func()        // stops it, once
	// newActivities makes the activities of one worker process,
	// configured as the stack's Config says.
	newActivities func() *activities.Activities
	stickyTimeout time.Duration // Config.StickyTimeout
}

// Config configures a stack.
type Config struct {
	// Keys encrypt what the stack writes to Temporal, as recur does; nil
	// is one fresh key.
	Keys *codec.Keys
	// Plain writes payloads unencrypted: the histories workflows/testdata
	// replays are recorded so.
	Plain bool
	// Activities configure the activities, as Start's opts.
	Activities []func(*activities.Activities)
	// Auth authenticates the API's requests; nil leaves it open.
	Auth api.Authenticator
	// RateLimit limits each subscription's API requests; zero is none.
	RateLimit api.RateLimit
	// Logger gets the API's log and that of the stack's Temporal clients
	// (worker, workflows, activities); nil is the test server's default.
	Logger *slog.Logger
	// WorkflowTargets are where Workflow actions may start workflows,
	// for the API and the activities alike; the zero value allows none.
	WorkflowTargets jobs.WorkflowTargets
	// OperationWait is the API's (api.Options.OperationWait).
	OperationWait time.Duration
	// MaxCollectionsPerSubscription is the API's
	// (api.Options.MaxCollectionsPerSubscription); zero is no cap.
	MaxCollectionsPerSubscription int
	// Backfill is the API's (api.Options.Backfill): the zero value paces
	// backfills at jobs.DefaultBackfillPace, with no budget per
	// subscription.
	Backfill api.BackfillLimits
	// MinInterval is the API's floor (api.Options.MinInterval); zero is
	// jobs.DefaultMinInterval.
	MinInterval time.Duration
	// StickyTimeout is the workers' sticky schedule-to-start timeout
	// (recur's --sticky-timeout); zero is the SDK's 5 s.
	StickyTimeout time.Duration
	// ServerOptions are passed on to the Temporal server.
	ServerOptions []temporal.ServerOption
}

// Egress is the policy of a stack's outbound calls unless opts set
// another client: loopback allowed, as the targets of tests are httptest
// servers and emulators on 127.0.0.1, and redirects followed, so that
// tests of targets that redirect in a loop see the 10-redirect limit.
// recur serve and recur worker allow neither by default.
var Egress = egress.Policy{AllowLoopback: true, FollowRedirects: true}

// Start starts a stack; opts configure its activities (the endpoints of
// emulators, say, or a.Client = policy.Client() for another egress
// policy). Its outbound calls follow Egress. The caller stops it.
func Start(opts ...func(*activities.Activities)) (*Stack, error) {
	return StartWith(Config{Activities: opts})
}

// StartWith starts a stack as cfg says. Every client of the stack but
// the one of Workflow actions (plain, so that the workflows they start
// read their input without recur's key) encrypts with cfg.Keys. The caller
// stops it.
func StartWith(cfg Config) (*Stack, error) {
	opts := cfg.Activities
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	set := metrics.New(logger)
	base := client.Options{MetricsHandler: set.Temporal,
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{store.LeanLists()}}}
	if cfg.Logger != nil {
		base.Logger = sdklog.NewStructuredLogger(cfg.Logger)
	}
	apiOpts := api.Options{Auth: cfg.Auth, RateLimit: cfg.RateLimit, Logger: cfg.Logger, Metrics: set.Registry,
		WorkflowTargets: cfg.WorkflowTargets, OperationWait: cfg.OperationWait,
		MaxCollectionsPerSubscription: cfg.MaxCollectionsPerSubscription, Backfill: cfg.Backfill, MinInterval: cfg.MinInterval}
	if cfg.Plain {
		cfg.Keys = nil
	} else {
		if cfg.Keys == nil {
			k, err := codec.Generate()
			if err != nil {
				_ = set.Close()
				return nil, err
			}
			cfg.Keys = k
		}
		base.DataConverter = codec.DataConverter(cfg.Keys)
		base.FailureConverter = codec.FailureConverter(base.DataConverter)
		apiOpts.DataConverter, apiOpts.Codec = base.DataConverter, codec.Handler(cfg.Keys)
	}
	ts := temporaltest.NewServer(temporaltest.WithBaseClientOptions(base), temporaltest.WithBaseServerOptions(cfg.ServerOptions...))
	c := ts.GetDefaultClient()
	apiOpts.Namespace = ts.GetDefaultNamespace()
	plain := ts.NewClientWithOptions(client.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := temporalserver.RegisterSearchAttributes(ctx, c, ts.GetDefaultNamespace(), jobs.SearchAttributeTypes()); err != nil {
		ts.Stop()
		_ = set.Close()
		return nil, fmt.Errorf("register search attributes: %w", err)
	}
	newActivities := func() *activities.Activities {
		acts := activities.New(Egress)
		acts.Temporal, acts.WorkflowTargets, acts.DataConverter = plain, cfg.WorkflowTargets, base.DataConverter
		for _, opt := range opts {
			opt(acts)
		}
		return acts
	}
	w, err := startWorker(c, newActivities(), cfg.StickyTimeout)
	if err != nil {
		ts.Stop()
		_ = set.Close()
		return nil, fmt.Errorf("start the worker: %w", err)
	}
	return &Stack{Temporal: ts, API: httptest.NewServer(api.New(c, apiOpts)), Keys: cfg.Keys, Metrics: set,
		worker: w, stopWorker: sync.OnceFunc(w.Stop), newActivities: newActivities, stickyTimeout: cfg.StickyTimeout}, nil
}

// startWorker starts recur's worker with acts, as recur does (the worker of
// jobs.TaskQueue and that of its process's attempts), with the panic
// policy temporaltest gives its own workers, so that a workflow that
// panics or turns non-deterministic fails at once.
func startWorker(c client.Client, acts *activities.Activities, stickyTimeout time.Duration) (worker.Worker, error) {
	w := recurworker.New(c, acts, worker.Options{WorkflowPanicPolicy: worker.FailWorkflow, StickyScheduleToStartTimeout: stickyTimeout})
	return w, w.Start()
}

// StopWorkers stops the stack's worker: its API and Temporal go on.
func (s *Stack) StopWorkers() {
	s.stopWorker()
}

// StartWorker starts one more worker like the stack's own (recur's
// workflows and activities, configured alike, with attempts of its own)
// that
// polls through c: a tool that dials Temporal its own way, through a
// proxy it can cut, gets a worker it can lose. The caller stops it; the
// stack's Stop does not.
func (s *Stack) StartWorker(c client.Client) (worker.Worker, error) {
	return startWorker(c, s.newActivities(), s.stickyTimeout)
}

// Stop stops the API, the stack's worker and the server.
func (s *Stack) Stop() {
	s.API.Close()
	s.stopWorker()
	s.Temporal.Stop()
	_ = s.Metrics.Close()
}
