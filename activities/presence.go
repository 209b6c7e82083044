package activities

import (
	"context"
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

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
	err := fanOut(len(workflowIDs), presenceLookups, func(i int) error {
		d, err := c.DescribeWorkflowExecution(ctx, workflowIDs[i], "")
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
		case err != nil:
			return err
		default:
			info := d.GetWorkflowExecutionInfo()
			out[i].Running = info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
			_, out[i].Defined = info.GetMemo().GetFields()[jobs.MemoJob]
		}
		return nil
	})
	return out, err
}

// HoldReservedNames is an activity of a collection being deleted: it
// tells each job of req that it is deleted and holds its workflow until
// its reservation's Until, by the update every change of the collection
// is (jobs.UpdateCollectionChanged), sent with start: the workflow starts
// when it does not run yet, so that a PUT carrying the collection's
// admission of that name meets a deleted job and is refused instead of
// defining one in a collection that is gone (workflows/reservation.go).
// It returns once every job shows it, as TellJobs does. An update sent
// again, when an attempt is retried, changes nothing.
func (a *Activities) HoldReservedNames(ctx context.Context, req jobs.HoldRequest) error {
	c := activity.GetClient(ctx)
	return fanOut(len(req.Jobs), tellsInFlight, func(i int) error {
		r := req.Jobs[i]
		k := req.Collection
		k.Job = r.Job
		update := client.UpdateWorkflowOptions{WorkflowID: k.JobWorkflowID(), UpdateID: req.UpdateID,
			UpdateName:   jobs.UpdateCollectionChanged,
			Args:         []any{jobs.CollectionChange{Deleted: true, HoldUntil: r.Until, Gen: r.Gen}},
			WaitForStage: client.WorkflowUpdateStageCompleted}
		start := client.StartWorkflowOptions{
			ID:                       k.JobWorkflowID(),
			TaskQueue:                jobs.TaskQueue,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
			TypedSearchAttributes:    k.SearchAttributes(jobs.KindJob),
			StaticSummary:            "Job `" + k.JobID() + "`, deleted with its collection before its PUT arrived.",
		}
		return untilReady(ctx, func() error {
			h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
				StartWorkflowOperation: c.NewWithStartWorkflowOperation(start, jobs.JobWorkflowName, jobs.JobInput{Key: k}),
				UpdateOptions:          update,
			})
			if err == nil {
				err = h.Get(ctx, nil)
			}
			return err
		})
	})
}
