package api

import (
	"context"
	"errors"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/recurhq/recur/jobs"
)

// Reads answer from what Temporal persisted, never from a query: the job
// and collection workflows keep their public views in their memos
// (jobs.MemoJob, jobs.MemoCollection), which describe returns as the
// workflow's last completed task left them and the visibility store
// returns with every listed workflow. With every worker down, reads still
// answer with the last written state.

// errNoView is describeView's answer for a workflow that is not running
// or keeps no view under the key: deleted, or never defined.
var errNoView = errors.New("no public view")

// describeView decodes the public view the running workflow keeps under
// key into view.
func (s *Server) describeView(ctx context.Context, workflowID, key string, view any) error {
	resp, err := s.temporal.DescribeWorkflowExecution(ctx, workflowID, "")
	if err != nil {
		return err
	}
	info := resp.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return errNoView
	}
	return s.memoView(info.GetMemo(), key, view)
}

// memoView decodes the memo's key into view, through the API's data
// converter: with payload encryption the memo is encrypted.
func (s *Server) memoView(m *commonpb.Memo, key string, view any) error {
	p, ok := m.GetFields()[key]
	if !ok {
		return errNoView
	}
	return s.dataConverter().FromPayload(p, view)
}

// job returns the job k names as its workflow last wrote it, secrets
// redacted, or a NotFound error when there is none or it was deleted.
func (s *Server) job(ctx context.Context, k jobs.Key) (jobs.Job, error) {
	view, err := s.jobView(ctx, k)
	return view.Job, err
}

// jobView is job with what its workflow keeps to plan its runs.
func (s *Server) jobView(ctx context.Context, k jobs.Key) (jobs.JobView, error) {
	var view jobs.JobView
	err := s.describeView(ctx, k.JobWorkflowID(), jobs.MemoJob, &view)
	if errors.Is(err, errNoView) || err == nil && view.Deleted {
		err = jobs.NotFound("job " + k.Job)
	}
	return view, notFoundAs(err, "job "+k.Job)
}

// collection returns the collection k names, or a NotFound error when
// there is none, it was deleted or never defined.
func (s *Server) collection(ctx context.Context, k jobs.Key) (jobs.Collection, error) {
	var view jobs.CollectionView
	err := s.describeView(ctx, k.CollectionWorkflowID(), jobs.MemoCollection, &view)
	if errors.Is(err, errNoView) || err == nil && view.Deleted {
		err = jobs.NotFound("job collection " + k.Collection)
	}
	return view.Collection, notFoundAs(err, "job collection "+k.Collection)
}

// definition returns the job's whole definition, secrets included, from
// its workflow: a PATCH merges into it. Unlike the reads, it needs a
// worker, as every write does.
func (s *Server) definition(ctx context.Context, k jobs.Key) (jobs.Job, error) {
	var view jobs.JobView
	err := s.query(ctx, k.JobWorkflowID(), jobs.QueryJob, &view)
	if err == nil && view.Deleted {
		err = jobs.NotFound("job " + k.Job)
	}
	return view.Job, notFoundAs(err, "job "+k.Job)
}
