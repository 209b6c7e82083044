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
	"github.com/recurhq/recur/lifecycle"
)

// acts names the activities in workflow code: the SDK takes a method of a
// nil receiver for the activity registered under its name (worker.Register).
var acts *activities.Activities

// occurrence is one run of a job's action: the main action with the job's
// retry policy and, when that fails for good, the error action. The main
// action's first attempt is a local activity with a budget (first): most
// answer within it, at the cost of no activity's events. One that outlasts
// the budget is handed off and awaited by an activity, and every attempt
// after the first, and the error action, are activities of the job
// workflow on its own task queue: the workflow task that schedules one
// completes at once, so a message to the job is taken while the action
// runs, where a local activity would hold the task open until the action's
// end or the task's heartbeat
// (bench/history/2026-11-26-local-activity-or-activity.md).
type occurrence struct {
	lifecycle.Run
	key    jobs.Key
	action jobs.Action
}

// run runs the occurrence. A run cancelled (its job was deleted) ends at
// once with no result: the attempt in flight may still reach its target,
// but nothing more is sent, the error action included.
func (o occurrence) run(ctx workflow.Context) lifecycle.Ended {
	observeStart(ctx, o)
	result, row, resp := o.act(ctx, o.action.ActionSpec, jobs.MainAction)
	if ctx.Err() != nil {
		observeCancelled(ctx, o)
		return lifecycle.Ended{Run: o.Run, Cancelled: true}
	}
	observeEnd(ctx, o, result)
	if o.Kind == lifecycle.Scheduled {
		row.Lateness = jobs.DurationOf(o.Lateness())
	}
	e := lifecycle.Ended{Run: o.Run, Result: result, Rows: []jobs.HistoryRow{row}}
	if result.Faulted {
		e.Failure = o.failure(result, row, resp)
	}
	if result.Status == jobs.ExecutionFailed && o.action.ErrorAction != nil {
		spec := *o.action.ErrorAction
		if spec.RetryPolicy == nil {
			spec.RetryPolicy = o.action.RetryPolicy
		}
		_, row, _ := o.act(ctx, spec, jobs.ErrorAction)
		e.Rows = append(e.Rows, row)
		if e.Failure != nil {
			e.Failure.ErrorAction = row.Status
		}
	}
	return e
}

// failure is the record of the occurrence whose main action failed for
// good with result, row and its last answer resp: what the API lists and
// what a re-run sends again.
func (o occurrence) failure(result jobs.RunResult, row jobs.HistoryRow, resp jobs.HTTPResponse) *jobs.Failure {
	resp.Body = jobs.CutBody(resp.Body, jobs.MaxFailureBody)
	kind := o.Kind.Name()
	return &jobs.Failure{
		ID: jobs.FailureID(o.Nominal, kind, o.ID), Nominal: o.Nominal, Kind: kind, OccurrenceID: o.ID,
		SignedAs: o.SignedAs, RerunOf: o.RerunOf, Action: o.action, Started: *row.StartTime, Ended: *row.EndTime, Response: resp,
		Message: row.Message, Attempts: result.Attempts, FailedAttempts: result.FailedAttempts,
	}
}

// act runs one action with its retry policy and per-attempt timeout, and
// returns its outcome, its history row and its last answer.
func (o occurrence) act(ctx workflow.Context, spec jobs.ActionSpec, name string) (jobs.RunResult, jobs.HistoryRow, jobs.HTTPResponse) {
	started := workflow.Now(ctx)
	result := jobs.RunResult{Status: jobs.ExecutionCompleted}
	var resp jobs.HTTPResponse
	attempts := 1
	retries, err := spec.RetryPolicy.Resolve("retryPolicy")
	if err == nil {
		opts := activityOptions(spec, retries, jobs.OccurrenceSummary(o.key, o.Nominal, name, spec))
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
	end := workflow.Now(ctx)
	return result, jobs.HistoryRow{
		StartTime: &started, EndTime: &end, ExpectedExecutionTime: o.Nominal, ActionName: name,
		Status: result.Status, Message: message, RetryCount: result.Attempts - 1, RepeatCount: o.Repeat,
		Backfill: o.Kind == lifecycle.Backfill, RerunOf: o.RerunOf,
	}, resp
}

// perform runs an action's attempts and returns the last one's answer (a
// failure's from its details), its error unwrapped of the SDK's
// ActivityError (whose message names event IDs and the worker's identity)
// and how many attempts it made. The main action's first attempt starts
// in a local activity (first); the attempts after it are one activity
// with the retry policy (attempts).
func (o occurrence) perform(ctx workflow.Context, spec jobs.ActionSpec, name string, opts workflow.ActivityOptions) (resp jobs.HTTPResponse, attempts int, err error) {
	if name != jobs.MainAction {
		return o.attempts(ctx, spec, name, opts, 0)
	}
	resp, declined, err := o.first(ctx, spec, name, opts)
	if declined {
		return o.attempts(ctx, spec, name, opts, 0)
	}
	policy := opts.RetryPolicy
	lost := workerLost(err) || attemptLost(err)
	var appErr *temporal.ApplicationError
	switch {
	case err == nil, ctx.Err() != nil:
		return resp, 1, err
	case policy.MaximumAttempts == 1 && lost:
		// A lost worker is no answer of the target's: the attempt is given
		// again, as attempts gives a lost last attempt.
		return o.lostAgain(ctx, spec, name, lastAttempt(opts), 1, 1)
	case policy.MaximumAttempts == 1, !lost && errors.As(err, &appErr) && appErr.NonRetryable():
		return resp, 1, err
	}
	// The retry policy's first interval, then its other attempts, each
	// interval after that as the policy would have made it.
	if err := workflow.Sleep(ctx, policy.InitialInterval); err != nil {
		return resp, 1, err
	}
	return o.attempts(ctx, spec, name, afterFirst(opts), 1)
}

// first makes the main action's first attempt in a local activity, which
// answers within the worker's budget or hands the attempt, still running,
// to an activity on the queue of the worker process that started it
// (activities.FirstAttempt). The workflow task that runs the local
// activity takes no write meanwhile: the budget bounds how long a write
// waits for an action. declined says the worker starts no attempt so:
// nothing was sent. A lost await (its process died: nobody polls the
// queue, or its heartbeat stopped) fails like a lost worker's attempt.
func (o occurrence) first(ctx workflow.Context, spec jobs.ActionSpec, name string, opts workflow.ActivityOptions) (resp jobs.HTTPResponse, declined bool, err error) {
	in := jobs.FirstAttemptInput{}
	if spec.Type == jobs.ActionHTTP || spec.Type == jobs.ActionHTTPS {
		in.HTTP = &jobs.HTTPRequestInput{
			ActionName: name, Request: *spec.Request, OccurrenceID: o.ID, SignedAs: o.SignedAs,
			Key: o.key, Nominal: o.Nominal, Timeout: spec.AttemptTimeout(),
		}
	} else {
		in.Action = &jobs.ActionInput{
			ActionName: name, Spec: spec, OccurrenceID: o.ID,
			Key: o.key, Nominal: o.Nominal, Timeout: spec.AttemptTimeout(),
		}
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		// The local activity returns after the worker's budget; this bounds
		// only a worker too busy to run it.
		StartToCloseTimeout: jobs.ActionHeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		Summary:             opts.Summary,
	})
	var attempt jobs.FirstAttempt
	err = workflow.ExecuteLocalActivity(lctx, acts.FirstAttempt, in).Get(ctx, &attempt)
	switch {
	case err != nil:
		resp, err = answer(jobs.HTTPResponse{}, err)
		return resp, false, err
	case attempt.Declined:
		return jobs.HTTPResponse{}, true, nil
	case attempt.Queue == "":
		return attempt.Response, false, nil
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: attempt.Queue,
		// The queue's process polls it at once; nobody polls it once that
		// process is gone.
		ScheduleToStartTimeout: jobs.ActionHeartbeatTimeout,
		StartToCloseTimeout:    opts.StartToCloseTimeout,
		HeartbeatTimeout:       opts.HeartbeatTimeout,
		// Only that process holds the attempt: another try finds it lost.
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
		Summary:     opts.Summary,
	})
	err = workflow.ExecuteActivity(actx, acts.AwaitAttempt, jobs.AwaitAttemptInput{ID: attempt.ID}).Get(ctx, &resp)
	resp, err = answer(resp, err)
	return resp, false, err
}

// answer returns an attempt's answer, resp or, when it failed, that of
// the details of err, and err unwrapped of the SDK's ActivityError.
func answer(resp jobs.HTTPResponse, err error) (jobs.HTTPResponse, error) {
	var actErr *temporal.ActivityError
	if errors.As(err, &actErr) && errors.Unwrap(actErr) != nil {
		err = errors.Unwrap(actErr)
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.HasDetails() {
		_ = appErr.Details(&resp)
	}
	return resp, err
}

// attempts runs the activity of an action with the retry policy of opts,
// after made attempts, and returns its last answer and the attempts made
// in all. The last attempt lost with its worker is given again, as one
// attempt more: a lost worker is no answer of the target's.
func (o occurrence) attempts(ctx workflow.Context, spec jobs.ActionSpec, name string, opts workflow.ActivityOptions, made int) (resp jobs.HTTPResponse, attempts int, err error) {
	return o.lostAgain(ctx, spec, name, opts, made, 0)
}

// lostAgain is attempts after lost attempts lost with their worker.
func (o occurrence) lostAgain(ctx workflow.Context, spec jobs.ActionSpec, name string, opts workflow.ActivityOptions, made, lost int) (resp jobs.HTTPResponse, attempts int, err error) {
	attempts = made
	for ; ; lost++ {
		resp = jobs.HTTPResponse{}
		err = o.activity(workflow.WithActivityOptions(ctx, opts), spec, name).Get(ctx, &resp)
		resp, err = answer(resp, err)
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
			ActionName: name, Request: *spec.Request, OccurrenceID: o.ID, SignedAs: o.SignedAs,
			Key: o.key, Nominal: o.Nominal, Timeout: spec.AttemptTimeout(),
		})
	}
	in := jobs.ActionInput{
		ActionName: name, Spec: spec, OccurrenceID: o.ID,
		Key: o.key, Nominal: o.Nominal, Timeout: spec.AttemptTimeout(),
	}
	if p, ok := activities.PerformerOf(spec.Type); ok {
		return workflow.ExecuteActivity(ctx, p.Name, in)
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

// attemptLost reports whether the await of a first attempt found the
// attempt gone from its process (activities.ErrTypeAttemptLost), or found
// no process polling the queue: the attempt was lost with its worker.
func attemptLost(err error) bool {
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		return timeout.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START
	}
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeAttemptLost
}

// afterFirst is opts for the attempts after the first: one fewer, the
// first of their intervals the policy's second, and their sum the
// schedule-to-close timeout's measure.
func afterFirst(opts workflow.ActivityOptions) workflow.ActivityOptions {
	policy := *opts.RetryPolicy
	if policy.MaximumAttempts > 0 { // 0 is unlimited
		policy.MaximumAttempts--
	}
	policy.InitialInterval = min(time.Duration(float64(policy.InitialInterval)*policy.BackoffCoefficient), policy.MaximumInterval)
	opts.RetryPolicy = &policy
	attempts := time.Duration(max(policy.MaximumAttempts, 1))
	opts.ScheduleToCloseTimeout = attempts*opts.StartToCloseTimeout + (attempts-1)*policy.MaximumInterval + time.Minute
	return opts
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
