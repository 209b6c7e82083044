package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/recurhq/recur/jobs"
)

// presenceLookups bounds the describes JobPresence has in flight.
const presenceLookups = 16

// JobPresence is an activity of the collection workflow: it says, of
// each job workflow ID, whether its workflow runs, whether the job is
// defined (its memo holds its view) and whether that view says it was
// deleted, for the names the collection reserved ahead of their PUTs or
// found started on a lease not given back (workflows/reservation.go). It
// asks Temporal through the worker's own client: the job workflows are in
// the worker's namespace, whatever Temporal client Workflow actions are
// given.
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
			if p, ok := info.GetMemo().GetFields()[jobs.MemoJob]; ok {
				var view jobs.JobView
				if err := a.dataConverter().FromPayload(p, &view); err != nil {
					return fmt.Errorf("read the memo of %s: %w", workflowIDs[i], err)
				}
				out[i].Defined, out[i].Deleted = true, view.Deleted
			}
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
		return jobs.Send(ctx, func(ctx context.Context) error {
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
	})
}

// leasedJobsPage is the page size of LeasedJobs' visibility queries.
const leasedJobsPage = 1000

// LeasedJobs is an activity of the collection workflow: it returns the
// names of the collection's jobs whose workflows run and started within
// the window of req, as the visibility store has them, for a lease its API
// process never gave back (workflows/lease.go).
func (a *Activities) LeasedJobs(ctx context.Context, req jobs.LeasedJobsRequest) ([]string, error) {
	c := activity.GetClient(ctx)
	query := jobs.ScopeQuery(jobs.KindJob, req.Collection.CollectionKey(),
		"ExecutionStatus = 'Running'",
		"StartTime BETWEEN "+jobs.Quote(req.Since.UTC().Format(time.RFC3339Nano))+" AND "+jobs.Quote(req.Until.UTC().Format(time.RFC3339Nano)))
	var names []string
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: query, PageSize: leasedJobsPage, NextPageToken: token})
		if err != nil {
			return nil, err
		}
		for _, e := range resp.GetExecutions() {
			p, ok := e.GetSearchAttributes().GetIndexedFields()[jobs.AttrJob.GetName()]
			if !ok {
				continue
			}
			var name string
			if err := converter.GetDefaultDataConverter().FromPayload(p, &name); err != nil {
				return nil, err
			}
			names = append(names, name)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return names, nil
		}
	}
}
