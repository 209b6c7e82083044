package workflows

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
)

// acts names the activities in workflow code: the SDK takes a method of a
// nil receiver for the activity registered under its name (worker.Register).
var acts *activities.Activities

// occurrence is one run of a job's action: the main action with the job's
// retry policy and, when that fails for good, the error action. Both are
// activities of the job workflow on its own task queue: the workflow task
// that schedules one completes at once, so a message to the job is taken
// while the action runs, where a local activity would hold the task open
// until the action's end or the task's heartbeat (BENCHMARKS.md, "Local
// activity or activity").
type occurrence struct {
	key     jobs.Key
	id      string // the occurrence ID, every attempt's idempotency key
	nominal time.Time
	action  jobs.Action
	repeat  int     // the job's runs so far, this one included
	kind    runKind // why it runs
	started time.Time
}

// runKind says why an occurrence runs.
type runKind int

const (
	scheduled runKind = iota // its nominal time came
	runNow                   // POST .../run, outside the schedule
	backfill                 // POST .../backfill, a past occurrence
)

// ended is an occurrence whose actions have ended.
type ended struct {
	occurrence
	result    jobs.RunResult
	rows      []jobs.HistoryRow // the main action's, then the error action's
	cancelled bool              // by the job's deletion: no result, no rows
}

// run runs the occurrence. A run cancelled (its job was deleted) ends at
// once with no result: the attempt in flight may still reach its target,
// but nothing more is sent, the error action included.
func (o occurrence) run(ctx workflow.Context) ended {
	observeStart(ctx, o)
	result, row := o.act(ctx, o.action.ActionSpec, jobs.MainAction)
	if ctx.Err() != nil {
		occurrenceLogger(ctx, o.key, o.id, o.nominal).Info("occurrence cancelled: its job was deleted")
		return ended{occurrence: o, cancelled: true}
	}
	observeEnd(ctx, o, result)
	e := ended{occurrence: o, result: result, rows: []jobs.HistoryRow{row}}
	if result.Status == jobs.ExecutionFailed && o.action.ErrorAction != nil {
		spec := *o.action.ErrorAction
		if spec.RetryPolicy == nil {
			spec.RetryPolicy = o.action.RetryPolicy
		}
		_, row := o.act(ctx, spec, jobs.ErrorAction)
		e.rows = append(e.rows, row)
	}
	return e
}

// act runs one action with its retry policy and per-attempt timeout, and
// returns its outcome and history row.
func (o occurrence) act(ctx workflow.Context, spec jobs.ActionSpec, name string) (jobs.RunResult, jobs.HistoryRow) {
	started := workflow.Now(ctx)
	result := jobs.RunResult{Status: jobs.ExecutionCompleted}
	var resp jobs.HTTPResponse
	attempts := 1
	retries, err := spec.RetryPolicy.Resolve("retryPolicy")
	if err == nil {
		opts := activityOptions(spec, retries, jobs.OccurrenceSummary(o.key, o.nominal, name, spec))
		resp, attempts, err = o.perform(ctx, spec, name, opts)
	}
	message := resp.Status
	if err != nil {
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) {
			message = cmp.Or(resp.Message, appErr.Message())
		} else {
			message = err.Error()
		}
		result.Status, result.Faulted = jobs.ExecutionFailed, true
		result.FailedAttempts = attempts
	} else {
		result.FailedAttempts = attempts - 1
	}
	if resp.Headers != "" {
		message = fmt.Sprintf("%s (%s)", message, resp.Headers)
	}
	if resp.Body != "" {
		message = fmt.Sprintf("%s: %s", message, resp.Body)
	}
	result.HTTPStatus, result.Message, result.Attempts = resp.StatusCode, message, attempts
	ended := workflow.Now(ctx)
	return result, jobs.HistoryRow{
		StartTime: &started, EndTime: &ended, ExpectedExecutionTime: o.nominal, ActionName: name,
		Status: result.Status, Message: message, RetryCount: result.Attempts - 1, RepeatCount: o.repeat,
		Backfill: o.kind == backfill,
	}
}

// perform runs the activity of an action and returns its answer (a
// failure's from its details), its error unwrapped of the SDK's
// ActivityError (whose message names event IDs and the worker's identity)
// and how many attempts it made. The last attempt lost with its worker is
// given again, as one attempt more: a lost worker is no answer of the
// target's.
func (o occurrence) perform(ctx workflow.Context, spec jobs.ActionSpec, name string, opts workflow.ActivityOptions) (resp jobs.HTTPResponse, attempts int, err error) {
	for lost := 0; ; lost++ {
		resp = jobs.HTTPResponse{}
		err = o.activity(workflow.WithActivityOptions(ctx, opts), spec, name).Get(ctx, &resp)
		var actErr *temporal.ActivityError
		if errors.As(err, &actErr) && errors.Unwrap(actErr) != nil {
			err = errors.Unwrap(actErr)
		}
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.HasDetails() {
			_ = appErr.Details(&resp)
		}
		if !workerLost(err) {
			return resp, attempts + max(resp.Attempt, 1), err
		}
		// Such an attempt leaves no answer: the activity made them all.
		attempts += int(max(opts.RetryPolicy.MaximumAttempts, 1))
		if lost == maxWorkerLosses {
			return resp, attempts, err
		}
		opts = lastAttempt(opts)
	}
}

// activity starts the activity that performs spec.
func (o occurrence) activity(ctx workflow.Context, spec jobs.ActionSpec, name string) workflow.Future {
	if spec.Type == jobs.ActionHTTP || spec.Type == jobs.ActionHTTPS {
		return workflow.ExecuteActivity(ctx, acts.HTTP, jobs.HTTPRequestInput{
			ActionName: name, Request: *spec.Request, OccurrenceID: o.id,
			Key: o.key, Nominal: o.nominal, Timeout: spec.AttemptTimeout(),
		})
	}
	in := jobs.ActionInput{
		ActionName: name, Spec: spec, OccurrenceID: o.id,
		Key: o.key, Nominal: o.nominal, Timeout: spec.AttemptTimeout(),
	}
	switch spec.Type {
	case jobs.ActionStorageQueue:
		return workflow.ExecuteActivity(ctx, acts.StorageQueue, in)
	case jobs.ActionServiceBusQueue, jobs.ActionServiceBusTopic:
		return workflow.ExecuteActivity(ctx, acts.ServiceBus, in)
	case jobs.ActionWorkflow:
		return workflow.ExecuteActivity(ctx, acts.StartWorkflow, in)
	}
	// Validated at every PUT; a type this code does not know fails the
	// occurrence, not the workflow.
	f, settle := workflow.NewFuture(ctx)
	settle.SetError(temporal.NewNonRetryableApplicationError("unknown action type "+spec.Type, "UnknownActionType", nil))
	return f
}

// activityOptions are those of an action's activity: each attempt bounded
// by the action's timeout, the attempts and the pauses between them by the
// retry policy, and the whole by their sum. It runs on the workflow's task
// queue, recur's; an attempt whose worker falls silent for the heartbeat
// timeout is taken for lost and run again, as a timed-out one is.
func activityOptions(spec jobs.ActionSpec, retries jobs.Retries, summary string) workflow.ActivityOptions {
	policy := temporalRetryPolicy(retries)
	attempt := spec.AttemptTimeout() + 5*time.Second
	attempts := time.Duration(max(policy.MaximumAttempts, 1))
	return workflow.ActivityOptions{
		StartToCloseTimeout:    attempt,
		ScheduleToCloseTimeout: attempts*attempt + (attempts-1)*policy.MaximumInterval + time.Minute,
		HeartbeatTimeout:       jobs.ActionHeartbeatTimeout,
		RetryPolicy:            policy,
		Summary:                summary,
	}
}

// maxWorkerLosses bounds how often an action's last attempt is given
// again after its worker was lost: an action that takes its worker down
// each time (one that exhausts its memory) must end too.
const maxWorkerLosses = 3

// workerLost reports whether an action's activity failed because the
// worker running its last attempt was lost: no heartbeat came, or the
// attempt outlived its start-to-close timeout, which is 5 s longer than
// the attempt's own and so reached only by a worker that stopped.
func workerLost(err error) bool {
	var timeout *temporal.TimeoutError
	if !errors.As(err, &timeout) {
		return false
	}
	switch timeout.TimeoutType() {
	case enumspb.TIMEOUT_TYPE_HEARTBEAT, enumspb.TIMEOUT_TYPE_START_TO_CLOSE:
		return true
	}
	return false
}

// lastAttempt is opts for the one attempt given again after a worker was
// lost.
func lastAttempt(opts workflow.ActivityOptions) workflow.ActivityOptions {
	policy := *opts.RetryPolicy
	policy.MaximumAttempts = 1
	opts.RetryPolicy = &policy
	opts.ScheduleToCloseTimeout = opts.StartToCloseTimeout + time.Minute
	return opts
}

// temporalRetryPolicy translates a job's retry policy: attempts in all,
// the interval between them, and (Exponential) doubling up to a cap.
func temporalRetryPolicy(r jobs.Retries) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval:    max(r.Interval, time.Second),
		BackoffCoefficient: max(r.Backoff, 1),
		MaximumInterval:    max(r.MaxInterval, r.Interval, time.Second),
		MaximumAttempts:    int32(r.Attempts),
	}
}
