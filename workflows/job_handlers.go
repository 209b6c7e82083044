package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/lifecycle"
)

// Message handlers validate a message, decide the event it makes and
// have the machine apply it (event), which changes the job's state at once
// and leaves the rest to the loop, which sees it at its next step. The
// machine validates nothing: the handler decided the event from what
// history holds (an update's validator refuses a bad write before it
// enters history), so that a replay makes the same change. Only a PUT
// blocks, while its collection admits the definition (unless the PUT
// carries its admission), and a DELETE, until its collection has the
// request to forget the job.

// wire is a refusal of the machine's as the update's error.
func wire(e *jobs.Error) error {
	if e == nil {
		return nil
	}
	return e.ToApplicationError()
}

// inTime is an update's validator that first refuses a write taken past
// its deadline (jobs.Deadline), which its client was answered 503 for.
// Validators do not run on replay: the time is the task's, as taken.
func inTime[R interface{ Late(time.Time) *jobs.Error }](validate func(workflow.Context, R) error) func(workflow.Context, R) error {
	return func(ctx workflow.Context, req R) error {
		if err := req.Late(workflow.Now(ctx)); err != nil {
			return wire(err)
		}
		return validate(ctx, req)
	}
}

// event has the machine apply an event a message makes: the next step
// acts on it. Time passes first when the loop's wake-up has come and the
// loop has not yet acted on it (dueFirst): what fell due before the
// message was taken is done under the definition it fell due in.
func (j *job) event(ctx workflow.Context, e lifecycle.Event) error {
	if err := j.catchUp(ctx, e); err != nil {
		return err
	}
	_, err := j.apply(ctx, e)
	return err
}

// catchUp has the machine act on what fell due before a message's event e
// when dueFirst says so. A handler whose refusals depend on the job's
// state (a redefinition's: the job completed, its ETag) catches up before
// it checks them, then applies its event without event's catching up.
func (j *job) catchUp(ctx workflow.Context, e lifecycle.Event) error {
	if !j.dueFirst(ctx, e) {
		return nil
	}
	_, err := j.step(ctx)
	return err
}

// dueFirst reports whether the loop's wake-up has come while a message's
// handler runs: a workflow task that came late, behind a burst, holds the
// timer's firing and the message, and the SDK may run the handler before
// the loop sees the timer: a redefinition taken first would plan past
// the occurrence due, which would be neither run nor counted. A DELETE is
// taken as it comes: nothing more reaches the targets of a job that is
// gone.
func (j *job) dueFirst(ctx workflow.Context, e lifecycle.Event) bool {
	if _, deleted := e.(lifecycle.Deleted); deleted || j.timer.fired == nil {
		return false
	}
	// Asked before the time is looked at, so that every history of a job
	// written to while it waits for a wake-up records the version.
	return workflow.GetVersion(ctx, versionDueFirst, workflow.DefaultVersion, 1) != workflow.DefaultVersion &&
		!workflow.Now(ctx).Before(j.timer.at)
}

func (j *job) register(ctx workflow.Context) error {
	j.describe(ctx)
	if err := workflow.SetQueryHandler(ctx, jobs.QueryJob, j.query); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, jobs.QueryPreview, j.preview); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdatePutJob, j.put,
		workflow.UpdateHandlerOptions{Validator: inTime(j.validatePut)}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdatePatchJob, j.patch,
		workflow.UpdateHandlerOptions{Validator: inTime(j.validatePatch)}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdateRunNow, j.runNow,
		workflow.UpdateHandlerOptions{Validator: inTime(j.validateRunNow)}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdateBackfill, j.backfillQueue,
		workflow.UpdateHandlerOptions{Validator: inTime(j.validateBackfill)}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdateRerun, j.rerun,
		workflow.UpdateHandlerOptions{Validator: inTime(j.validateRerun)}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdateDeleteJob, j.delete,
		workflow.UpdateHandlerOptions{Validator: inTime(j.validateDelete)}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, jobs.UpdateCollectionChanged, j.onCollection); err != nil {
		return err
	}
	admitted := workflow.GetSignalChannel(ctx, jobs.SignalAdmitted)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var a jobs.AdmitAnswer
			admitted.Receive(ctx, &a)
			j.admission.receive(a)
		}
	})
	return nil
}

// onCollection applies what the job's collection told it: a deleted
// collection deletes the job; enabling or disabling it enables or
// disables the job, unless the job has ended (final states stay) or it
// heard of a newer change of the collection already. It has no validator:
// a change always applies, and a job that is not defined yet keeps only a
// deletion.
func (j *job) onCollection(ctx workflow.Context, told jobs.CollectionChange) (struct{}, error) {
	if told.Terms != nil && !j.admission.heard(*told.Terms) {
		told.State = ""
	}
	var err error
	switch {
	case told.Deleted:
		j.admission.forgotten = true
		var d lifecycle.Deleted
		// A job that took the held admission had the PUT that carried
		// it: no other PUT carries it, and the job ends at once.
		if told.Gen == 0 || told.Gen != j.admission.took {
			d.HoldUntil = told.HoldUntil
		}
		err = j.event(ctx, d)
	case j.state() == nil:
	case told.State == jobs.Disabled && j.state().Job.Properties.State == jobs.Enabled:
		err = j.event(ctx, lifecycle.Disabled{Reason: jobs.CollectionDisabledReason(j.key)})
	case told.State == jobs.Enabled && j.state().Job.Properties.State == jobs.Disabled:
		def := j.state().Job
		// An enabled job has nothing to explain (jobs.Job.Accept).
		def.Properties.State, def.Properties.StateReason = jobs.Enabled, ""
		if err := j.event(ctx, lifecycle.Defined{Job: def, At: creationTime(ctx)}); err != nil {
			workflow.GetLogger(ctx).Error("enable job", "error", err)
		}
	case told.State == jobs.Enabled && j.state().Job.Properties.State.Final() && len(j.state().Reruns) > 0 &&
		workflow.GetVersion(ctx, versionFinishedReruns, workflow.DefaultVersion, 1) != workflow.DefaultVersion:
		err = j.event(ctx, lifecycle.CollectionEnabled{})
	}
	return struct{}{}, err
}

func (j *job) query() (jobs.JobView, error) {
	if j.state() == nil {
		return jobs.JobView{}, jobs.NotFound("job " + j.key.Job).ToApplicationError()
	}
	return jobs.JobView{Job: j.m.View(), Deleted: j.m.Deleted()}, nil
}

// preview lists the job's next scheduled runs: from the next planned
// occurrence on, as many as count and endTime leave. A query may compute
// freely: it records nothing in history.
func (j *job) preview(req jobs.PreviewRequest) ([]time.Time, error) {
	if err := j.m.IsDefined(); err != nil {
		return nil, err.ToApplicationError()
	}
	st := j.state()
	times, _ := jobs.UpcomingStarts(j.key, st.Job, st.PlannedFrom, st.Runs, st.Next, req.Count)
	return times, nil
}

// creationTime is C: the workflow's clock at the update, in whole seconds.
func creationTime(ctx workflow.Context) time.Time {
	return workflow.Now(ctx).UTC().Truncate(time.Second)
}

// validatePut rejects bad definitions before they reach history, and any
// change to a job that has ended: completed and faulted are final.
func (j *job) validatePut(ctx workflow.Context, req jobs.PutJobRequest) error {
	if err := j.m.Exists(); err != nil {
		return wire(err)
	}
	if j.state() == nil && j.graceLeft(ctx) == 0 {
		// Past its grace a job never defined is on its way out (plan.abandon):
		// the API sends the PUT again, to the workflow that starts next.
		return jobs.NotFound("job " + j.key.Job).ToApplicationError()
	}
	if err := j.m.Preconditions(req.Preconditions); err != nil {
		return wire(err)
	}
	if err := req.Job.Accept(j.key, creationTime(ctx)); err != nil {
		return toWire(err)
	}
	// SameJob compares encoding/json's output, always the same for a value
	// (workflowcheck takes its reflect and its caches for nondeterminism).
	same := func() bool { return jobs.SameJob(j.state().Job, req.Job) } //workflowcheck:ignore
	writable := func() error {
		if err := j.m.Redefinable(); err != nil {
			return wire(err)
		}
		return wire(j.m.Takes(req.Job))
	}
	return req.Apply.Refusal(j.state() != nil, same, writable)
}

// validatePatch is validatePut for a PATCH, which needs the job defined
// as the API saw it.
func (j *job) validatePatch(ctx workflow.Context, req jobs.PatchJobRequest) error {
	if err := j.m.IsDefined(); err != nil {
		return wire(err)
	}
	if err := j.m.Based(req.Base); err != nil {
		return wire(err)
	}
	if err := j.writable(req.Preconditions); err != nil {
		return err
	}
	def, err := j.patched(req.Patch)
	if err != nil {
		return err
	}
	if err := def.Accept(j.key, creationTime(ctx)); err != nil {
		return toWire(err)
	}
	return wire(j.m.Takes(def))
}

// writable refuses a write the preconditions refuse, and any to a job
// that has ended.
func (j *job) writable(p jobs.Preconditions) error {
	if err := j.m.Preconditions(p); err != nil {
		return wire(err)
	}
	return wire(j.m.Redefinable())
}

// patched is the job's definition merged with patch, status left out.
func (j *job) patched(patch []byte) (jobs.Job, error) {
	current := j.state().Job
	current.Properties.Status = nil
	// A pure function of the definition and the patch: the merge visits
	// members in sorted order, and encoding/json's output for a value is
	// always the same (workflowcheck takes its reflect and its caches
	// for nondeterminism).
	def, err := jobs.PatchJob(current, patch) //workflowcheck:ignore
	return def, toWire(err)
}

// put defines or redefines the job once its collection has admitted the
// definition: the new definition is planned from now (C) and takes effect
// from its next occurrence; the status counters stay. A disabled job
// enabled again resumes at the next occurrence to come.
func (j *job) put(ctx workflow.Context, req jobs.PutJobRequest) (jobs.PutJobResult, error) {
	def, err := j.accept(ctx, func() (jobs.Job, error) { return req.Job, nil })
	if err != nil {
		return jobs.PutJobResult{}, err
	}
	return j.redefine(ctx, def, req.Preconditions, "", req.Admission)
}

// patch redefines the job as put does, with its definition patched: the
// workflow merges the patch, since it alone holds the definition's
// secrets.
func (j *job) patch(ctx workflow.Context, req jobs.PatchJobRequest) (jobs.PutJobResult, error) {
	def, err := j.accept(ctx, func() (jobs.Job, error) { return j.patched(req.Patch) })
	if err != nil {
		return jobs.PutJobResult{}, err
	}
	return j.redefine(ctx, def, req.Preconditions, req.Base, nil)
}

// accept returns the definition def gives, accepted (normalized and
// validated) once, in a side effect (acceptOnce). The validator has
// refused the writes it refuses today before they reach history.
func (j *job) accept(ctx workflow.Context, def func() (jobs.Job, error)) (jobs.Job, error) {
	return acceptOnce(ctx, func(ctx workflow.Context) (jobs.Job, error) {
		job, err := def()
		if err == nil {
			err = job.Accept(j.key, creationTime(ctx))
		}
		return job, err
	})
}

// redefine makes def the job's definition once its collection has
// admitted it (or with adm, the admission a PUT carries), if the job still
// takes it then: its preconditions, and the base of a patch (none for a
// PUT).
func (j *job) redefine(ctx workflow.Context, def jobs.Job, p jobs.Preconditions, base string, adm *jobs.Admission) (jobs.PutJobResult, error) {
	collectionDisabled, err := j.admit(ctx, def, adm)
	if err != nil {
		return jobs.PutJobResult{}, err
	}
	if err := j.catchUp(ctx, lifecycle.Defined{}); err != nil {
		return jobs.PutJobResult{}, err
	}
	// The job may have changed while its collection answered, or as it
	// caught up.
	if err := j.m.Exists(); err != nil {
		return jobs.PutJobResult{}, wire(err)
	}
	if base != "" {
		if err := j.m.Based(base); err != nil {
			return jobs.PutJobResult{}, wire(err)
		}
	}
	if err := j.writable(p); err != nil {
		return jobs.PutJobResult{}, err
	}
	created := j.state() == nil
	// Caught up above: the event applies as it is.
	if _, err := j.apply(ctx, lifecycle.Defined{Job: def, At: creationTime(ctx), CollectionDisabled: collectionDisabled}); err != nil {
		return jobs.PutJobResult{}, err
	}
	return jobs.PutJobResult{Job: j.m.View(), Created: created}, nil
}

func (j *job) validateRunNow(workflow.Context, jobs.RunNowRequest) error {
	return wire(j.m.IsDefined())
}

// validateDelete lets only the first of concurrent DELETEs through: the
// others answer 404, as they would one after the other. A job never
// defined is not found either: its workflow ends on its own.
func (j *job) validateDelete(_ workflow.Context, req jobs.DeleteJobRequest) error {
	if err := j.m.IsDefined(); err != nil {
		return wire(err)
	}
	return wire(j.m.Preconditions(req.Preconditions))
}

// runNow runs the job once at once, outside its schedule: the loop starts
// it in this task, before anything else (a DELETE that follows cancels it
// as it cancels every run in flight).
func (j *job) runNow(ctx workflow.Context, _ jobs.RunNowRequest) (struct{}, error) {
	return struct{}{}, j.event(ctx, lifecycle.RunNowAsked{At: workflow.Now(ctx).UTC()})
}

// validateRerun refuses a re-run of a job that does not exist, and one
// the job does not take now (lifecycle.Rerunnable).
func (j *job) validateRerun(_ workflow.Context, req jobs.RerunRequest) error {
	if err := j.m.IsDefined(); err != nil {
		return wire(err)
	}
	return wire(j.m.Rerunnable(req.Failure.ID, j.collectionDisabled()))
}

// rerun queues the failure the API read to run again: the loop starts it
// as it starts a backfill occurrence.
func (j *job) rerun(ctx workflow.Context, req jobs.RerunRequest) (struct{}, error) {
	return struct{}{}, j.event(ctx, lifecycle.RerunAsked{Failure: req.Failure})
}

// delete deletes the job, and answers once its collection has the
// request to forget it: a PUT sent after the answer finds its slot free,
// though the collection admits new jobs ahead of their PUTs (an update,
// which would come before a leave still on its way).
func (j *job) delete(ctx workflow.Context, _ jobs.DeleteJobRequest) (struct{}, error) {
	if err := j.event(ctx, lifecycle.Deleted{}); err != nil {
		return struct{}{}, err
	}
	j.leave(ctx)
	return struct{}{}, nil
}
