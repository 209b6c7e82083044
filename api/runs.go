package api

import (
	"context"
	"sync"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
)

// A describe by workflow ID alone makes Temporal's history service read
// which run is current from its database, while a describe of a run it
// holds in memory reads nothing: on recur dev every such read waits its
// turn on the one SQLite connection behind the writes. So reads describe
// the run this process
// last saw running. A running run is always the workflow's current one,
// so its view is the one a describe by ID would give; once it has ended
// (continued as new, deleted, its job defined anew) the describe says so,
// and the read asks for the current run instead.

// maxRuns bounds the runs remembered: a workflow ID and a run ID take
// about 150 bytes, so some 10 MiB in all.
const maxRuns = 65536

// runs remembers the running run of recently read or written workflows.
// When full it forgets the oldest entry first.
type runs struct {
	mu    sync.Mutex
	byID  map[string]string
	order []string // workflow IDs, a ring in the order they were added
	next  int      // where the next one goes in order
}

func newRuns(size int) *runs {
	return &runs{byID: make(map[string]string, size), order: make([]string, 0, size)}
}

func (r *runs) get(workflowID string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	run, ok := r.byID[workflowID]
	return run, ok
}

// put remembers run as workflowID's running run.
func (r *runs) put(workflowID, run string) {
	if run == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byID[workflowID]; ok {
		r.byID[workflowID] = run
		return
	}
	if len(r.order) < cap(r.order) {
		r.order = append(r.order, workflowID)
	} else {
		delete(r.byID, r.order[r.next])
		r.order[r.next] = workflowID
		r.next = (r.next + 1) % len(r.order)
	}
	r.byID[workflowID] = run
}

// forget drops run, unless another run replaced it meanwhile.
func (r *runs) forget(workflowID, run string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID[workflowID] == run {
		// Its slot in order stays until it comes round; a put of the ID
		// before then finds no entry and takes a second slot, which only
		// makes the ring forget sooner.
		delete(r.byID, workflowID)
	}
}

// describe returns what Temporal holds of the workflow's current run: the
// remembered run while it runs, else the current run, remembered when it
// runs.
func (s *Server) describe(ctx context.Context, workflowID string) (*workflowpb.WorkflowExecutionInfo, error) {
	if run, ok := s.runs.get(workflowID); ok {
		resp, err := s.temporal.DescribeWorkflowExecution(ctx, workflowID, run)
		if info := resp.GetWorkflowExecutionInfo(); err == nil && info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return info, nil
		}
		if err != nil && !workflowMissing(err) {
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
