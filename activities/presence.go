package activities

import (
	"context"
	"errors"
	"sync"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"

	"github.com/recurhq/recur/jobs"
)

// presenceLookups bounds the describes JobPresence has in flight.
const presenceLookups = 16

// JobPresence is an activity of the collection workflow: it says, of
// each job workflow ID, whether its workflow runs and whether the job is
// defined (its memo holds its view), for the names the collection reserved
// ahead of their PUTs (workflows/reservation.go). It asks Temporal through
// the worker's own client: the job workflows are in the worker's
// namespace, whatever Temporal client Workflow actions are given.
func (a *Activities) JobPresence(ctx context.Context, workflowIDs []string) ([]jobs.JobPresence, error) {
	c := activity.GetClient(ctx)
	out := make([]jobs.JobPresence, len(workflowIDs))
	errs := make([]error, len(workflowIDs))
	sem := make(chan struct{}, presenceLookups)
	var wg sync.WaitGroup
	for i, id := range workflowIDs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			d, err := c.DescribeWorkflowExecution(ctx, id, "")
			var notFound *serviceerror.NotFound
			switch {
			case errors.As(err, &notFound):
			case err != nil:
				errs[i] = err
			default:
				info := d.GetWorkflowExecutionInfo()
				out[i].Running = info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
				_, out[i].Defined = info.GetMemo().GetFields()[jobs.MemoJob]
			}
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}
