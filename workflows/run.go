package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// errTypeRunFailed is the type of a run workflow's failure; its details
// are the RunResult.
const errTypeRunFailed = "RunFailed"

// Run is the workflow of one occurrence: it runs the job's action with the
// job's retry policy and, when that fails for good, the error action. It
// keeps the history rows in its memo and its outcome in RecurStatus. A run
// whose main action fails for good fails, so the Web UI shows it as Failed;
// its error carries the RunResult.
func Run(ctx workflow.Context, in jobs.RunInput) (jobs.RunResult, error) {
	r := &run{in: in}
	return r.run(ctx)
}

type run struct {
	in   jobs.RunInput
	rows []jobs.HistoryRow
}

func (r *run) run(ctx workflow.Context) (jobs.RunResult, error) {
	if r.in.Postponed != "" {
		observePostponed(ctx, r.in)
		r.rows = append(r.rows, jobs.HistoryRow{
			ExpectedExecutionTime: r.in.Nominal, ActionName: jobs.MainAction,
			Status: jobs.Postponed, Message: r.in.Postponed, RepeatCount: r.in.Repeat,
		})
		return jobs.RunResult{Status: jobs.Postponed, Message: r.in.Postponed}, r.record(ctx, jobs.Postponed)
	}
	observeStart(ctx, r.in)
	result := r.action(ctx, r.in.Action.ActionSpec, jobs.MainAction)
	observeEnd(ctx, r.in, result)
	if result.Status == jobs.Failed && r.in.Action.ErrorAction != nil {
		spec := *r.in.Action.ErrorAction
		if spec.RetryPolicy == nil {
			spec.RetryPolicy = r.in.Action.RetryPolicy
		}
		r.action(ctx, spec, jobs.ErrorAction)
	}
	if err := r.record(ctx, result.Status); err != nil {
		return result, err
	}
	if result.Status == jobs.Failed {
		return result, temporal.NewNonRetryableApplicationError(result.Message, errTypeRunFailed, nil, result)
	}
	return result, nil
}

// action runs one action with its retry policy and per-attempt timeout and
// appends its history row.
func (r *run) action(ctx workflow.Context, spec jobs.ActionSpec, name string) jobs.RunResult {
	started := workflow.Now(ctx)
	row := jobs.HistoryRow{StartTime: &started, ExpectedExecutionTime: r.in.Nominal, ActionName: name, RepeatCount: r.in.Repeat}
	result := jobs.RunResult{Status: jobs.Succeeded}
	var resp jobs.HTTPResponse
	retries, err := spec.RetryPolicy.Resolve("retryPolicy")
	if err == nil {
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: spec.AttemptTimeout() + 5*time.Second,
			RetryPolicy:         temporalRetryPolicy(retries),
		})
		activityName, input := r.activity(ctx, spec, name)
		err = workflow.ExecuteActivity(actx, activityName, input).Get(ctx, &resp)
	}
	message := resp.Status
	if err != nil {
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) {
			if appErr.HasDetails() {
				_ = appErr.Details(&resp)
			}
			message = appErr.Message()
		} else {
			message = err.Error()
		}
		result.Status, result.Faulted = jobs.Failed, true
		result.FailedAttempts = max(resp.Attempt, 1)
	} else {
		result.FailedAttempts = resp.Attempt - 1
	}
	if resp.Headers != "" {
		message = fmt.Sprintf("%s (%s)", message, resp.Headers)
	}
	if resp.Body != "" {
		message = fmt.Sprintf("%s: %s", message, resp.Body)
	}
	result.HTTPStatus, result.Message, result.Attempts = resp.StatusCode, message, max(resp.Attempt, 1)
	ended := workflow.Now(ctx)
	row.EndTime, row.Status, row.Message, row.RetryCount = &ended, result.Status, message, result.Attempts-1
	r.rows = append(r.rows, row)
	return result
}

// activity returns the activity that performs spec and its input.
func (r *run) activity(ctx workflow.Context, spec jobs.ActionSpec, name string) (string, any) {
	occurrence := workflow.GetInfo(ctx).WorkflowExecution.ID
	if spec.Type == jobs.ActionHTTP || spec.Type == jobs.ActionHTTPS {
		return jobs.HTTPActivityName, jobs.HTTPRequestInput{
			ActionName: name, Request: *spec.Request, OccurrenceID: occurrence,
			Key: r.in.Key, Nominal: r.in.Nominal, Timeout: spec.AttemptTimeout(),
		}
	}
	activity := map[string]string{
		jobs.ActionStorageQueue:    jobs.StorageQueueActivity,
		jobs.ActionServiceBusQueue: jobs.ServiceBusActivity,
		jobs.ActionServiceBusTopic: jobs.ServiceBusActivity,
		jobs.ActionWorkflow:        jobs.StartWorkflowActivity,
	}[spec.Type]
	return activity, jobs.ActionInput{
		ActionName: name, Spec: spec, OccurrenceID: occurrence,
		Key: r.in.Key, Nominal: r.in.Nominal, Timeout: spec.AttemptTimeout(),
	}
}

// record keeps the history rows in the memo and the outcome in the
// RecurStatus search attribute.
func (r *run) record(ctx workflow.Context, status jobs.ExecutionStatus) error {
	if err := workflow.UpsertMemo(ctx, map[string]any{jobs.MemoHistory: r.rows}); err != nil {
		return err
	}
	return workflow.UpsertTypedSearchAttributes(ctx, jobs.AttrStatus.ValueSet(string(status)))
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
