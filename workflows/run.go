package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// errTypeRunFailed is the type of a run workflow's failure; its details
// are the RunResult.
const errTypeRunFailed = "RunFailed"

// DefaultActionTimeout bounds one attempt of an action.
const DefaultActionTimeout = 60 * time.Second

// Run is the workflow of one occurrence: it runs the job's action with
// the job's retry policy. A run whose action fails for good fails, so the
// Web UI shows it as Failed; its error carries the RunResult.
func Run(ctx workflow.Context, in jobs.RunInput) (jobs.RunResult, error) {
	retries, err := in.Action.RetryPolicy.Resolve("action.retryPolicy")
	if err != nil {
		return failed(jobs.RunResult{Status: jobs.Failed, Message: err.Error()})
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: DefaultActionTimeout + 5*time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    max(retries.Interval, time.Second),
			BackoffCoefficient: 1,
			MaximumAttempts:    int32(retries.Attempts),
		},
	})
	var resp jobs.HTTPResponse
	err = workflow.ExecuteActivity(actx, jobs.HTTPActivityName, jobs.HTTPRequestInput{
		Request:      *in.Action.Request,
		OccurrenceID: workflow.GetInfo(ctx).WorkflowExecution.ID,
		Key:          in.Key,
		Nominal:      in.Nominal,
	}).Get(ctx, &resp)
	if err != nil {
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.HasDetails() {
			_ = appErr.Details(&resp)
		}
		return failed(jobs.RunResult{Status: jobs.Failed, HTTPStatus: resp.StatusCode, Attempts: resp.Attempt, Message: err.Error()})
	}
	return jobs.RunResult{Status: jobs.Succeeded, HTTPStatus: resp.StatusCode, Attempts: resp.Attempt}, nil
}

func failed(r jobs.RunResult) (jobs.RunResult, error) {
	return r, temporal.NewNonRetryableApplicationError(r.Message, errTypeRunFailed, nil, r)
}
