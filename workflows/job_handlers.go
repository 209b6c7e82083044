package workflows

import (
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// Message handlers validate a message, decide the change it makes and
// hand it to apply, the one function that changes the job's state for
// them; apply leaves the rest to the loop (j.pending), which sees each
// change at its next step. Only a PUT blocks, while its collection admits
// the definition (unless the PUT carries its admission), and a DELETE,
// until its collection has the request to forget the job.

// A jobChange is what a message does to the job's state: one of the
// types below, which apply makes.
type jobChange interface{ isChange() }

type (
	// definition makes job, in its accepted form, the definition,
	// planned from now: a PUT, a PATCH, or the collection enabling the
	// job again.
	definition struct{ job jobs.Job }
	// disabling disables an enabled job for reason: its collection was
	// disabled.
	disabling struct{ reason string }
	// deletion deletes the job: by a DELETE, or by its collection, which
	// forgets it then and may hold it until a time.
	deletion struct {
		byCollection bool
		holdUntil    time.Time // zero, or when the hold ends
	}
	// backfilling queues past occurrences to run as a backfill, a pace
	// apart (zero for the default).
	backfilling struct {
		times []time.Time
		pace  time.Duration
	}
	// immediateRun asks for a run now, outside the schedule, of nominal
	// time at.
	immediateRun struct{ at time.Time }
)

func (definition) isChange()   {}
func (disabling) isChange()    {}
func (deletion) isChange()     {}
func (backfilling) isChange()  {}
func (immediateRun) isChange() {}

// apply makes a change to the job's state, and marks it for the loop. It
// validates nothing: the handler decided the change from what history
// holds (an update's validator refuses a bad write before it enters
// history), so that a replay makes the same change.
func (j *job) apply(ctx workflow.Context, c jobChange) error {
	switch c := c.(type) {
	case definition:
		if err := j.define(ctx, c.job); err != nil {
			return err
		}
	case disabling:
		j.disable(c.reason)
	case deletion:
		j.local.deleted = true
		if c.byCollection {
			j.admission.forgotten = true
		}
		if c.holdUntil.After(j.local.holdUntil) {
			j.local.holdUntil = c.holdUntil
		}
	case backfilling:
		j.state.Backfill = append(j.state.Backfill, c.times...)
		j.state.BackfillPace = c.pace
	case immediateRun:
		j.pending.runsNow = append(j.pending.runsNow, c.at)
	}
	j.pending.applied = true
	return nil
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
		workflow.UpdateHandlerOptions{Validator: j.validatePut}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdatePatchJob, j.patch,
		workflow.UpdateHandlerOptions{Validator: j.validatePatch}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdateRunNow, j.runNow,
		workflow.UpdateHandlerOptions{Validator: j.validateRunNow}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdateBackfill, j.backfillQueue,
		workflow.UpdateHandlerOptions{Validator: j.validateBackfill}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdateDeleteJob, j.delete,
		workflow.UpdateHandlerOptions{Validator: j.validateDelete}); err != nil {
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
		d := deletion{byCollection: true}
		// A job that took the held admission had the PUT that carried
		// it: no other PUT carries it, and the job ends at once.
		if told.Gen == 0 || told.Gen != j.admission.took {
			d.holdUntil = told.HoldUntil
		}
		err = j.apply(ctx, d)
	case j.state == nil:
	case told.State == jobs.Disabled && j.state.Job.Properties.State == jobs.Enabled:
		err = j.apply(ctx, disabling{reason: jobs.CollectionDisabledReason(j.key)})
	case told.State == jobs.Enabled && j.state.Job.Properties.State == jobs.Disabled:
		def := j.state.Job
		// An enabled job has nothing to explain (jobs.Job.Accept).
		def.Properties.State, def.Properties.StateReason = jobs.Enabled, ""
		if err := j.apply(ctx, definition{job: def}); err != nil {
			workflow.GetLogger(ctx).Error("enable job", "error", err)
		}
	}
	return struct{}{}, err
}

func (j *job) query() (jobs.JobView, error) {
	if j.state == nil {
		return jobs.JobView{}, jobs.NotFound("job " + j.key.Job).ToApplicationError()
	}
	return jobs.JobView{Job: j.view(), Deleted: j.local.deleted}, nil
}

// preview lists the job's next scheduled runs: from the next planned
// occurrence on, as many as count and endTime leave. A query may compute
// freely: it records nothing in history.
func (j *job) preview(req jobs.PreviewRequest) ([]time.Time, error) {
	if j.state == nil || j.local.deleted {
		return nil, jobs.NotFound("job " + j.key.Job).ToApplicationError()
	}
	times, _ := jobs.UpcomingStarts(j.key, j.state.Job, j.state.Created, j.state.Runs, j.state.Next, req.Count)
	return times, nil
}

// view returns the job as the API shows it: status always present.
func (j *job) view() jobs.Job {
	job := j.state.Job
	status := *j.status()
	job.Properties.Status = &status
	return job
}

// creationTime is C: the workflow's clock at the update, in whole seconds.
func creationTime(ctx workflow.Context) time.Time {
	return workflow.Now(ctx).UTC().Truncate(time.Second)
}

// validatePut rejects bad definitions before they reach history, and any
// change to a job that has ended: completed and faulted are final.
func (j *job) validatePut(ctx workflow.Context, req jobs.PutJobRequest) error {
	if err := j.exists(); err != nil {
		return err
	}
	if j.state == nil && j.graceLeft(ctx) == 0 {
		// Past its grace a job never defined is on its way out (plan.abandon):
		// the API sends the PUT again, to the workflow that starts next.
		return jobs.NotFound("job " + j.key.Job).ToApplicationError()
	}
	if err := j.preconditions(req.Preconditions); err != nil {
		return err
	}
	if err := req.Job.AcceptNew(j.key, creationTime(ctx)); err != nil {
		return toWire(err)
	}
	// SameJob compares encoding/json's output, always the same for a value
	// (workflowcheck takes its reflect and its caches for nondeterminism).
	return req.Apply.Refusal(j.state != nil, func() bool { return jobs.SameJob(j.state.Job, req.Job) }, j.redefinable) //workflowcheck:ignore
}

// validatePatch is validatePut for a PATCH, which needs the job defined
// as the API saw it.
func (j *job) validatePatch(ctx workflow.Context, req jobs.PatchJobRequest) error {
	if err := j.defined(); err != nil {
		return err
	}
	if err := j.based(req.Base); err != nil {
		return err
	}
	if err := j.writable(req.Preconditions); err != nil {
		return err
	}
	def, err := j.patched(req.Patch)
	if err != nil {
		return err
	}
	return toWire(def.AcceptNew(j.key, creationTime(ctx)))
}

// writable refuses a write the preconditions refuse, and any to a job
// that has ended.
func (j *job) writable(p jobs.Preconditions) error {
	if err := j.preconditions(p); err != nil {
		return err
	}
	return j.redefinable()
}

// based refuses a patch merged by the API into a definition the job no
// longer has.
func (j *job) based(etag string) error {
	if etag != j.etag() {
		return (&jobs.Error{Code: jobs.CodeBaseChanged,
			Message: "job " + j.key.Job + " was redefined while the PATCH was merged; send it again"}).ToApplicationError()
	}
	return nil
}

// patched is the job's definition merged with patch, status left out.
func (j *job) patched(patch []byte) (jobs.Job, error) {
	current := j.state.Job
	current.Properties.Status = nil
	// A pure function of the definition and the patch: the merge visits
	// members in sorted order, and encoding/json's output for a value is
	// always the same (workflowcheck takes its reflect and its caches
	// for nondeterminism).
	def, err := jobs.PatchJob(current, patch) //workflowcheck:ignore
	return def, toWire(err)
}

// redefinable refuses a new definition of a job that has ended.
func (j *job) redefinable() error {
	if j.state != nil {
		if st := j.state.Job.Properties.State; st == jobs.Completed || st == jobs.Faulted {
			return (&jobs.Error{Code: jobs.CodeConflict, Target: "properties.state",
				Message: "job " + j.key.Job + " is " + string(st) + ", which is final: delete it and create it again"}).ToApplicationError()
		}
	}
	return nil
}

// exists rejects messages to a deleted job.
func (j *job) exists() error {
	if j.local.deleted {
		return jobs.NotFound("job " + j.key.Job).ToApplicationError()
	}
	return nil
}

// defined rejects messages to a job deleted or never defined.
func (j *job) defined() error {
	if err := j.exists(); err != nil {
		return err
	}
	if j.state == nil {
		return jobs.NotFound("job " + j.key.Job).ToApplicationError()
	}
	return nil
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
			err = job.AcceptNew(j.key, creationTime(ctx))
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
	// The job may have changed while its collection answered.
	if err := j.exists(); err != nil {
		return jobs.PutJobResult{}, err
	}
	if base != "" {
		if err := j.based(base); err != nil {
			return jobs.PutJobResult{}, err
		}
	}
	if err := j.writable(p); err != nil {
		return jobs.PutJobResult{}, err
	}
	created := j.state == nil
	if p := &def.Properties; collectionDisabled && !strings.EqualFold(string(p.State), string(jobs.Disabled)) {
		// A disabled collection's jobs do not run, those defined into it
		// included; enabling the collection enables them.
		p.State, p.StateReason = jobs.Disabled, jobs.CollectionDisabledReason(j.key)
	}
	if err := j.apply(ctx, definition{job: def}); err != nil {
		return jobs.PutJobResult{}, err
	}
	return jobs.PutJobResult{Job: j.view(), Created: created}, nil
}

// disable disables the job for reason: its collection disabled it
// (apply), or its failures reached disableAfterFailures (countHealth).
func (j *job) disable(reason string) {
	p := &j.state.Job.Properties
	p.State, p.StateReason = jobs.Disabled, reason
	j.revise()
}

// define is apply's for a definition: def becomes the job's definition,
// planned from now.
func (j *job) define(ctx workflow.Context, def jobs.Job) error {
	c := creationTime(ctx)
	if j.state == nil {
		j.state = &jobs.JobState{}
	}
	// A redefinition keeps the job's state (its status, the occurrences
	// handled, buffered and queued, its revision) but what planning from
	// a new C starts again: the runs counted toward count, and the next
	// occurrence (set below). One that enables the job starts its failure
	// streak anew: whoever enabled it meant it to run again.
	st := j.state
	status, was := st.Job.Properties.Status, st.Job.Properties.State
	st.Job, st.Created, st.Runs = def, c, 0
	st.Job.Properties.Status = status
	if was != jobs.Enabled && def.Properties.State == jobs.Enabled {
		j.restartStreak()
	}
	j.revise()
	next, err := j.firstNominal(ctx, c)
	if err != nil {
		return err
	}
	j.local.ahead = ahead{}
	j.setNext(next)
	j.settle()
	return nil
}

func (j *job) validateRunNow(workflow.Context, jobs.RunNowRequest) error {
	return j.defined()
}

// validateDelete lets only the first of concurrent DELETEs through: the
// others answer 404, as they would one after the other. A job never
// defined is not found either: its workflow ends on its own.
func (j *job) validateDelete(_ workflow.Context, req jobs.DeleteJobRequest) error {
	if err := j.defined(); err != nil {
		return err
	}
	return j.preconditions(req.Preconditions)
}

// preconditions refuses a write whose If-Match or If-None-Match the job
// fails.
func (j *job) preconditions(p jobs.Preconditions) error {
	if err := p.Check(j.etag(), "job "+j.key.Job); err != nil {
		return err.ToApplicationError()
	}
	return nil
}

// runNow runs the job once at once, outside its schedule: the loop starts
// it in this task, before anything else (a DELETE that follows cancels it
// as it cancels every run in flight).
func (j *job) runNow(ctx workflow.Context, _ jobs.RunNowRequest) (struct{}, error) {
	return struct{}{}, j.apply(ctx, immediateRun{at: workflow.Now(ctx).UTC()})
}

// delete deletes the job, and answers once its collection has the
// request to forget it: a PUT sent after the answer finds its slot free,
// though the collection admits new jobs ahead of their PUTs (an update,
// which would come before a leave still on its way).
func (j *job) delete(ctx workflow.Context, _ jobs.DeleteJobRequest) (struct{}, error) {
	if err := j.apply(ctx, deletion{}); err != nil {
		return struct{}{}, err
	}
	j.leave(ctx)
	return struct{}{}, nil
}
