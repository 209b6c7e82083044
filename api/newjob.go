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
