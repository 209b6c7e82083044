package api

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/jobs"
)

// startJob creates a new job whose collection admitted it (adm) in one
// call: it starts the job's workflow as NewJobStart says, so that the
// answer waits for no workflow task, as a Schedule's creation waits for
// none; the workflow plans the job in its first task. It returns nil,
// starting nothing, when a workflow of the job runs already (the PUT is
// then an update to it) and when the definition has no occurrence to
// come.
//
// The start must be recorded before the admission's Until, when the
// collection looks for the job's workflow and gives the name up if none
// runs: the call is bounded to well before it.
func (s *Server) startJob(ctx context.Context, k jobs.Key, def jobs.Job, created time.Time, adm jobs.Admission) (*jobs.Job, error) {
	opts, in, ok := NewJobStart(k, def, created, adm)
	if !ok {
		return nil, nil
	}
	leave, err := s.updates.enter(ctx, opts.ID)
	if err != nil {
		return nil, err
	}
	defer leave()
	sctx, cancel := context.WithDeadline(ctx, adm.Until.Add(-2*jobs.AdmissionMargin))
	defer cancel()
	run, err := s.temporal.ExecuteWorkflow(sctx, opts, jobs.JobWorkflowName, in)
	var running *serviceerror.WorkflowExecutionAlreadyStarted
	switch {
	case errors.As(err, &running):
		return nil, nil
	case err != nil:
		return nil, err
	}
	s.runs.put(opts.ID, run.GetRunID())
	job := in.State.Job
	return &job, nil
}

// NewJobStart returns how the API starts the workflow of a new job k,
// def accepted at created, that its collection admitted (adm): with the
// job's state as its input (jobs.NewJob), the definition validated once
// and in history from the start, and the memo every read of the job
// reads. ok is false for a definition with no occurrence to come.
func NewJobStart(k jobs.Key, def jobs.Job, created time.Time, adm jobs.Admission) (opts client.StartWorkflowOptions, in jobs.JobInput, ok bool) {
	origin := uuid.NewString()
	st, ok := jobs.NewJob(k, def, created, origin, adm.Terms.Disabled)
	if !ok {
		return opts, in, false
	}
	view, status := st.Views(false)
	opts = jobStart(k, def)
	opts.TaskQueue = jobs.TaskQueue
	opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL
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
func (s *Server) newJob(ctx context.Context, k jobs.Key, def jobs.Job, created time.Time, cond jobs.Preconditions) (*jobs.Job, *jobs.Admission, error) {
	if _, ok := s.runs.get(k.JobWorkflowID()); ok {
		return nil, nil, nil
	}
	req := jobs.MembershipRequest{Job: k.Job, ShortestGap: jobs.ShortestGap(def, created)}
	if cond.IfMatch == "" {
		if h, ok := s.admissions.take(ctx, s, k); ok {
			if h.Terms.Check(req.ShortestGap, k.Collection) == nil {
				return s.createOnLease(ctx, k, def, created, h, req)
			}
			// The collection's word on the terms, by name.
			s.admissions.giveBack(h)
		}
	}
	adm, err := s.admission(ctx, k, req)
	if err != nil || adm == nil || cond.IfMatch != "" {
		return nil, adm, err
	}
	started, err := s.startJob(ctx, k, def, created, *adm)
	return started, adm, err
}

// createOnLease starts the workflow of the new job k on a slot of lease h
// and claims its name at once, and waits for both: the claim admits the
// job on the slot and reserves its name until the lease's end, when the
// collection looks at its workflow. A job started and then refused (its
// collection was deleted, or its terms changed) is deleted again before
// the refusal is answered. A claim with no answer (the collection did not
// answer in time) abandons the lease: the collection looks at it once it
// runs out, and finds the job started.
func (s *Server) createOnLease(ctx context.Context, k jobs.Key, def jobs.Job, created time.Time, h *heldLease, req jobs.MembershipRequest) (*jobs.Job, *jobs.Admission, error) {
	req.Lease = h.ID
	type claim struct {
		answer jobs.AdmitAnswer
		err    error
	}
	claimed := make(chan claim, 1)
	go func() {
		answer, _, err := s.admissions.ask(ctx, s, k, req)
		claimed <- claim{answer, err}
	}()
	started, err := s.startJob(ctx, k, def, created, h.Admission())
	c := <-claimed
	kept := c.err == nil
	if kept && c.answer.Error != nil && started != nil {
		kept = s.undoStart(ctx, k) == nil
	}
	s.admissions.claimed(s, k, h, kept)
	switch {
	case c.err != nil:
		return nil, nil, c.err
	case c.answer.Error != nil:
		return nil, nil, c.answer.Error
	case err != nil || started != nil:
		return started, nil, err
	}
	// A workflow of the job runs (or the definition has no occurrence
	// to come): the PUT is an update, with the admission of the name the
	// claim reserved.
	return nil, c.answer.Admission, nil
}

// undoStart deletes the job k whose workflow this PUT started, whose
// collection then refused it, whatever becomes of the PUT's caller.
func (s *Server) undoStart(ctx context.Context, k jobs.Key) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RequestTimeout)
	defer cancel()
	return s.updateJob(ctx, k, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{})
}
