package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/lifecycle"
)

// startJob creates a new job whose collection admitted it (adm) in one
// call: it starts the job's workflow as NewJobStart says, so that the
// answer waits for no workflow task, as a Schedule's creation waits for
// none; the workflow plans the job in its first task. It returns the job
// and its workflow's run ID, or nil, starting nothing, when a workflow of
// the job runs already (the PUT is then an update to it) and when the
// definition has no occurrence to come.
//
// The start must be recorded before the admission's Until, when the
// collection looks for the job's workflow and gives the name up if none
// runs: the call is bounded to well before it.
func (s *Store) startJob(ctx context.Context, k jobs.Key, def jobs.Job, created time.Time, adm jobs.Admission) (*jobs.Job, string, error) {
	opts, in, ok := NewJobStart(k, def, created, adm)
	if !ok {
		return nil, "", nil
	}
	leave, err := s.updates.enter(ctx, opts.ID)
	if err != nil {
		return nil, "", err
	}
	defer leave()
	if opts.StartDelay = firstTaskDelay(in.State.Next, time.Now()); opts.StartDelay > 0 {
		opts.EnableEagerStart = false // Temporal starts no workflow eagerly with a delay
	}
	sctx, cancel := context.WithDeadline(ctx, adm.Until.Add(-2*jobs.AdmissionMargin))
	defer cancel()
	run, err := s.temporal.ExecuteWorkflow(sctx, opts, jobs.JobWorkflowName, in)
	var running *serviceerror.WorkflowExecutionAlreadyStarted
	switch {
	case errors.As(err, &running):
		return nil, "", nil
	case err != nil:
		return nil, "", err
	}
	s.runs.put(opts.ID, run.GetRunID())
	changed(ctx, opts.ID, run.GetRunID())
	job := in.State.Job
	return &job, run.GetRunID(), nil
}

// firstTaskLead is how long before a new job's first occurrence its
// workflow's first task has run at the latest: a burst of jobs created
// together and due together has their first tasks behind it by then, and
// the occurrence is a timer of a workflow the worker holds.
const firstTaskLead = time.Minute

// firstTaskDelay returns how long the start of a new job's workflow, whose
// first occurrence is next, delays its first workflow task: a moment drawn
// at random up to firstTaskLead before next, none for a job due sooner
// (or never). The start then costs no workflow task, and the first tasks
// of many jobs created together spread over the time before they are due
// instead of queueing behind the creations; a write to the job, an update,
// runs its first task at once.
func firstTaskDelay(next *time.Time, now time.Time) time.Duration {
	if next == nil {
		return 0
	}
	room := next.Sub(now) - firstTaskLead
	if room <= 0 {
		return 0
	}
	return rand.N(room)
}

// NewJobStart returns how the API starts the workflow of a new job k,
// def accepted at created, that its collection admitted (adm): with the
// job's state as its input (lifecycle.NewState), the definition validated once
// and in history from the start, and the memo every read of the job
// reads. ok is false for a definition with no occurrence to come.
func NewJobStart(k jobs.Key, def jobs.Job, created time.Time, adm jobs.Admission) (opts client.StartWorkflowOptions, in jobs.JobInput, ok bool) {
	origin := uuid.NewString()
	st, ok := lifecycle.NewState(k, def, created, origin, adm.Terms.Disabled)
	if !ok {
		return opts, in, false
	}
	view, status := st.Views(false)
	opts = jobStart(k, def)
	opts.TaskQueue = jobs.TaskQueue
	opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL
	// A workflow of the job running already (another write started it)
	// is an error, not the run ExecuteWorkflow returns by default: this
	// PUT did not create it, and its definition must reach it by update.
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true
	// The start's answer carries the job's first workflow task to this
	// process's worker, when it has one with room: the task skips the
	// task queue, where a burst of creations queues first tasks behind
	// one another, and a write to the new job waits for its first task.
	opts.EnableEagerStart = true
	opts.Memo = map[string]any{jobs.MemoJob: view, jobs.MemoStatus: status}
	opts.TypedSearchAttributes = k.SearchAttributes(jobs.KindJob, jobs.AttrState.ValueSet(string(st.Job.Properties.State)))
	return opts, jobs.JobInput{Key: k, State: st, Origin: origin, Admission: &adm}, true
}

// newJob creates k as a new job, defined by def accepted at created,
// unless a workflow of the job runs already: its collection admits it,
// on a slot of a lease or by name (admit.go). It returns the job created,
// or nil and the admission the PUT's update then carries (nil when the
// collection holds the name, or when this process saw the job's workflow
// running: a redefinition, which the job's terms mostly allow).
func (s *Store) newJob(ctx context.Context, k jobs.Key, def jobs.Job, created time.Time, cond jobs.Preconditions) (*jobs.Job, *jobs.Admission, error) {
	if _, ok := s.runs.get(k.JobWorkflowID()); ok {
		return nil, nil, nil
	}
	req := jobs.MembershipRequest{Job: k.Job, ShortestGap: jobs.ShortestGap(def, created)}
	// startedNothing: a start on a lease found the job's workflow running
	// (or no occurrence to come); a second start would find the same.
	startedNothing := false
	if cond.IfMatch == "" {
		if h, ok := s.admissions.take(ctx, s, k); ok {
			if h.Terms.Check(req.ShortestGap, k.Collection) != nil {
				// The collection's word on the terms, by name.
				s.admissions.giveBack(s, k, h)
			} else if started, err := s.createOnLease(ctx, k, def, created, h, req); err != nil || started != nil {
				return started, nil, err
			} else {
				startedNothing = true
			}
		}
	}
	adm, err := s.admission(ctx, k, req)
	if err != nil || adm == nil || cond.IfMatch != "" || startedNothing {
		return nil, adm, err
	}
	started, _, err := s.startJob(ctx, k, def, created, *adm)
	return started, adm, err
}

// createOnLease starts the workflow of the new job k on a slot of lease
// h and answers at once: the name is claimed in the next batch of the
// collection's admissions (admissions.claim), which admits it on the
// slot, and the collection takes the job in whatever becomes of this
// process, from the claim or from its look at the lease. It returns
// nil, and the slot, when a workflow of the job runs already (or the
// definition has no occurrence to come). A start that failed may have
// been recorded: its lease is left for the collection to look at.
func (s *Store) createOnLease(ctx context.Context, k jobs.Key, def jobs.Job, created time.Time, h *heldLease, req jobs.MembershipRequest) (*jobs.Job, error) {
	started, run, err := s.startJob(ctx, k, def, created, h.Admission())
	switch {
	case err != nil:
		s.admissions.claimed(s, k, h, false)
	case started == nil:
		s.admissions.giveBack(s, k, h)
	default:
		req.Run = run
		s.admissions.claim(s, k, req, h)
	}
	return started, err
}

// undoStart deletes the job k whose workflow a PUT started on a lease,
// whose collection then refused the claim of its name: it is gone, and its
// workflow had not heard of it.
func (s *Store) undoStart(k jobs.Key) error {
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	return s.updateJob(ctx, k, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{})
}
