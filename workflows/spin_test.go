package workflows_test

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Every workflow test runs in an environment from newEnv, which fails the
// test on a loop that turns without blocking: an await whose condition
// holds at once, too many times in a row. (A loop that never awaits at all
// meets the SDK's deadlock detector, which fails its workflow task.) It
// fails the test too when the job's loop reports that the recurrence
// engine planned no progress, which ends the schedule where it would
// otherwise take the same occurrence again.

// maxAwaitStreak is how many awaits in a row may return at once: each
// such turn must have done work, and work that arrives while the loop
// does other work is bounded.
const maxAwaitStreak = 20

// noProgress is what the job's loop logs when the recurrence engine plans
// an occurrence that is not after the one before (workflows.msgNoProgress).
const noProgress = "planned an occurrence that is not after the one before"

// newEnv returns a test environment whose workflows fail the test when
// they spin.
func newEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	return newEnvWith(t, nil)
}

// newEnvWith is newEnv whose workflows report their series to mh (nil:
// the suite's no-op handler), through more interceptors.
func newEnvWith(t *testing.T, mh client.MetricsHandler, more ...interceptor.WorkerInterceptor) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	out := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	suite.SetLogger(&spinLog{Logger: log.NewStructuredLogger(out), t: t})
	if mh != nil {
		suite.SetMetricsHandler(mh)
	}
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(sdkworker.Options{Interceptors: append([]interceptor.WorkerInterceptor{&spinGuard{t: t}}, more...),
		DeadlockDetectionTimeout: deadlockDetection})
	return env
}

// deadlockDetection is how long a workflow task may run without yielding
// before the test environment calls it a deadlock: a workflow that blocks
// blocks for good, while a task of a few milliseconds on a machine whose
// two cores run fuzzers and builds beside it can be starved past the
// SDK's default of a second.
const deadlockDetection = 10 * time.Second

// spinLog fails the test when the job's loop reports no progress.
type spinLog struct {
	log.Logger
	t *testing.T
}

func (l *spinLog) Error(msg string, keyvals ...any) {
	if strings.Contains(msg, noProgress) {
		l.t.Errorf("%s %v", msg, keyvals)
	}
	l.Logger.Error(msg, keyvals...)
}

// spinGuard fails a workflow whose awaits return at once more than
// maxAwaitStreak times in a row.
type spinGuard struct {
	interceptor.WorkerInterceptorBase
	t *testing.T
}

func (g *spinGuard) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &spinInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, t: g.t}
}

type spinInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	t *testing.T
}

func (i *spinInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&spinOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, t: i.t})
}

type spinOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	t      *testing.T
	streak int // awaits in a row whose condition held at once
}

// errSpin fails the workflow that spins, so that the test ends.
var errSpin = errors.New("the workflow's loop turns without blocking")

func (o *spinOutbound) check(ctx workflow.Context, condition func() bool) error {
	if !condition() {
		o.streak = 0
		return nil
	}
	if o.streak++; o.streak > maxAwaitStreak {
		// The test's failure, not the workflow's: workflowcheck takes the
		// testing package's output for nondeterminism.
		o.t.Errorf("%s: %d awaits in a row returned at once at %s", workflow.GetInfo(ctx).WorkflowType.Name, o.streak, workflow.Now(ctx)) //workflowcheck:ignore
		return fmt.Errorf("%w (%d awaits)", errSpin, o.streak)
	}
	return nil
}

func (o *spinOutbound) Await(ctx workflow.Context, condition func() bool) error {
	if err := o.check(ctx, condition); err != nil {
		return err
	}
	return o.Next.Await(ctx, condition)
}

func (o *spinOutbound) AwaitWithTimeout(ctx workflow.Context, timeout time.Duration, condition func() bool) (bool, error) {
	if err := o.check(ctx, condition); err != nil {
		return false, err
	}
	return o.Next.AwaitWithTimeout(ctx, timeout, condition)
}

func (o *spinOutbound) AwaitWithOptions(ctx workflow.Context, options workflow.AwaitOptions, condition func() bool) (bool, error) {
	if err := o.check(ctx, condition); err != nil {
		return false, err
	}
	return o.Next.AwaitWithOptions(ctx, options, condition)
}
