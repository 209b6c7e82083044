package store

import (
	"context"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
)

// A describe or an update by workflow ID alone makes Temporal's history
// service read which run is current from its database, while one of a
// run it holds in memory reads nothing: on recur dev every such read
// waits its turn on the one SQLite connection behind the writes. So reads
// describe, and writes update, the run this process last saw running. A
// running run is always the workflow's current one, so its view is the
// one a describe by ID would give; once it has ended (continued as new,
// deleted, its job defined anew) Temporal says so, and the call goes to
// the current run instead.

// maxRuns bounds the runs remembered: a workflow ID and a run ID take
// about 150 bytes, so some 10 MiB in all.
const maxRuns = 65536

// runs remembers the running run of recently read or written workflows,
// by workflow ID.
type runs struct{ ids *bounded[string] }

func newRuns(size int) *runs { return &runs{ids: newBounded[string](size)} }

func (r *runs) get(workflowID string) (string, bool) { return r.ids.get(workflowID) }

// put remembers run as workflowID's running run.
func (r *runs) put(workflowID, run string) {
	if run != "" {
		r.ids.put(workflowID, run)
	}
}

// forget drops run, unless another run replaced it meanwhile.
func (r *runs) forget(workflowID, run string) {
	r.ids.deleteIf(workflowID, func(remembered string) bool { return remembered == run })
}

// drop forgets workflowID's run, whichever it is: its job was deleted,
// and a PUT of its name is a creation, not an update of that run.
func (r *runs) drop(workflowID string) {
	r.ids.deleteIf(workflowID, func(string) bool { return true })
}

// describe returns what Temporal holds of the workflow's current run: the
// remembered run while it runs, else the current run, remembered when it
// runs.
func (s *Store) describe(ctx context.Context, workflowID string) (*workflowpb.WorkflowExecutionInfo, error) {
	if run, ok := s.runs.get(workflowID); ok {
		resp, err := s.temporal.DescribeWorkflowExecution(ctx, workflowID, run)
		if info := resp.GetWorkflowExecutionInfo(); err == nil && info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return info, nil
		}
		if err != nil && !WorkflowMissing(err) {
			return nil, err // Temporal did not answer: a second call would wait as long
		}
		// Ended, or gone with its history: the current run answers.
		s.runs.forget(workflowID, run)
	}
	resp, err := s.temporal.DescribeWorkflowExecution(ctx, workflowID, "")
	if err != nil {
		return nil, err
	}
	info := resp.GetWorkflowExecutionInfo()
	if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		s.runs.put(workflowID, info.GetExecution().GetRunId())
	}
	return info, nil
}
