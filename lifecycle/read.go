package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/recurhq/recur/jobs"
)

// NewState returns the state of a new job whose first definition, def in
// its accepted form, is planned at c: the machine's own, applied to the
// definition (revision 1 under origin's ETags, its next occurrence the
// rule's first, disabled while its collection is). The API starts the
// job's workflow with it (jobs.JobInput), so that a new job's PUT is one
// workflow start whose input holds the definition. ok is false for a
// definition with no occurrence to come, which the job workflow completes
// as it takes it: the API then sends the PUT as an update.
func NewState(k jobs.Key, def jobs.Job, c time.Time, origin string, collectionDisabled bool) (st *jobs.JobState, ok bool) {
	j := New(k, origin, time.Time{}, nil, Direct{})
	if _, err := j.Apply(Defined{Job: def, At: c, CollectionDisabled: collectionDisabled}); err != nil ||
		j.state.Next == nil && j.state.Job.Properties.State != jobs.Completed {
		return nil, false
	}
	return j.state, true
}

// disabledBy makes def disabled when its collection is: a disabled
// collection's jobs do not run, those defined into it included; enabling
// the collection enables them.
func disabledBy(k jobs.Key, def jobs.Job, collectionDisabled bool) jobs.Job {
	if p := &def.Properties; collectionDisabled && strings.EqualFold(string(p.State), string(jobs.Enabled)) {
		p.State, p.StateReason = jobs.Disabled, jobs.CollectionDisabledReason(k)
	}
	return def
}

// State is the job's state, nil until it is defined. Its reader never
// writes it: Apply alone does.
func (j *Job) State() *jobs.JobState { return j.state }

// Origin is the origin of the job's ETags.
func (j *Job) Origin() string { return j.origin }

// Deleted reports whether the job is deleted (by a DELETE, its collection
// or its retention, or never defined in its grace).
func (j *Job) Deleted() bool { return j.local.deleted }

// Running is how many runs are in flight.
func (j *Job) Running() int { return j.running }

// Outcome is the status of the last run that ended in this run of the
// workflow; empty before one ends.
func (j *Job) Outcome() jobs.ExecutionStatus { return j.local.outcome }

// Pending reports whether the machine was told something it has yet to
// act on: the workflow steps it then.
func (j *Job) Pending() bool {
	return len(j.pending.runsNow) > 0 || len(j.pending.ended) > 0 || j.pending.applied
}

// etag is the job's ETag, empty when it does not exist.
func (j *Job) etag() string {
	if j.state == nil || j.local.deleted {
		return ""
	}
	return j.state.Job.ETag
}

// View is the job as the API shows it: status always present.
func (j *Job) View() jobs.Job {
	job := j.state.Job
	var status jobs.Status
	if s := job.Properties.Status; s != nil {
		status = *s
	}
	job.Properties.Status = &status
	return job
}

// Exists refuses messages to a deleted job.
func (j *Job) Exists() *jobs.Error {
	if j.local.deleted {
		return jobs.NotFound("job " + j.key.Job)
	}
	return nil
}

// IsDefined refuses messages to a job deleted or never defined.
func (j *Job) IsDefined() *jobs.Error {
	if err := j.Exists(); err != nil {
		return err
	}
	if j.state == nil {
		return jobs.NotFound("job " + j.key.Job)
	}
	return nil
}

// Redefinable refuses a new definition of a job that has ended:
// completed and faulted are final.
func (j *Job) Redefinable() *jobs.Error {
	if j.state != nil {
		if st := j.state.Job.Properties.State; st.Final() {
			return &jobs.Error{Code: jobs.CodeConflict, Target: "properties.state",
				Message: "job " + j.key.Job + " is " + string(st) + ", which is final: delete it and create it again"}
		}
	}
	return nil
}

// Takes refuses def, a job's new definition, when it is Completed and the
// job is defined already: a job is given Completed only as it is created
// (an import of a job that ran its course elsewhere); after that,
// completing it is the scheduler's doing.
func (j *Job) Takes(def jobs.Job) *jobs.Error {
	if j.state != nil && def.Properties.State == jobs.Completed {
		return &jobs.Error{Code: jobs.CodeConflict, Target: "properties.state",
			Message: "job " + j.key.Job + " exists: a job is written Completed only as it is created"}
	}
	return nil
}

// Preconditions refuses a write whose If-Match or If-None-Match the job
// fails.
func (j *Job) Preconditions(p jobs.Preconditions) *jobs.Error {
	return p.Check(j.etag(), "job "+j.key.Job)
}

// Based refuses a patch merged by the API into a definition the job no
// longer has.
func (j *Job) Based(etag string) *jobs.Error {
	if etag != j.etag() {
		return &jobs.Error{Code: jobs.CodeBaseChanged,
			Message: "job " + j.key.Job + " was redefined while the PATCH was merged; send it again"}
	}
	return nil
}

// Backfillable refuses a backfill of n more occurrences (0 when not yet
// known) of a job that is disabled, whose collection is (as the job last
// heard), or whose queue would pass jobs.MaxQueuedBackfill.
func (j *Job) Backfillable(n int, collectionDisabled bool) *jobs.Error {
	conflict := func(message string) *jobs.Error {
		return &jobs.Error{Code: jobs.CodeConflict, Message: message}
	}
	switch queued := len(j.state.Backfill); {
	case collectionDisabled:
		return conflict("job collection " + j.key.Collection + " is disabled: enable it before a backfill of job " + j.key.Job)
	case j.state.Job.Properties.State == jobs.Disabled:
		return conflict("job " + j.key.Job + " is disabled: enable it before a backfill")
	case queued+max(n, 1) > jobs.MaxQueuedBackfill:
		return conflict(fmt.Sprintf("job %s holds %d backfill occurrences queued, and at most %d may wait: backfill again once they have run",
			j.key.Job, queued, jobs.MaxQueuedBackfill))
	}
	return nil
}

// Rerunnable refuses a re-run of failure id of a job that is disabled,
// whose collection is (as the job last heard), that holds it queued
// already or whose queue of re-runs is full: as a backfill, a re-run runs
// only while the job is enabled, or once it is completed or faulted (a
// one-time job's failed run is the one a re-run is most often for).
func (j *Job) Rerunnable(id string, collectionDisabled bool) *jobs.Error {
	conflict := func(message string) *jobs.Error {
		return &jobs.Error{Code: jobs.CodeConflict, Message: message}
	}
	switch {
	case collectionDisabled:
		return conflict("job collection " + j.key.Collection + " is disabled: enable it before a re-run of job " + j.key.Job)
	case j.state.Job.Properties.State == jobs.Disabled:
		return conflict("job " + j.key.Job + " is disabled: enable it before a re-run")
	case slices.ContainsFunc(j.state.Reruns, func(f jobs.Failure) bool { return f.ID == id }):
		return conflict("failure " + id + " of job " + j.key.Job + " is queued to run again already")
	case len(j.state.Reruns) >= jobs.MaxQueuedReruns:
		return conflict(fmt.Sprintf("job %s holds %d re-runs queued, and at most %d may wait: run again once they have run",
			j.key.Job, len(j.state.Reruns), jobs.MaxQueuedReruns))
	}
	return nil
}

// GraceEnd is when a job never defined gives up its name.
func (j *Job) GraceEnd() time.Time { return j.graceEnd }
