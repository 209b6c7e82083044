package lifecycle

import (
	"time"

	"github.com/recurhq/recur/jobs"
)

// Plan is what the machine must do at a moment and when it must next wake
// up, as the planner (Job.Plan) reads them off the job's state.
type Plan struct {
	// What is due, in the order Step acts on it.
	Abandon       bool // a job never defined gives up its name: its grace has passed and no PUT still waits
	StartBuffered bool // the occurrence buffered behind a run may start
	TakeNext      bool // the start of the next occurrence has passed
	StartRerun    bool // a queued re-run may start: as a backfill occurrence, before one
	StartBackfill bool // a queued backfill occurrence may start: a slot is free and its pace has passed
	Settle        bool // an enabled job has nothing left to run: it completes
	Retain        bool // a finished job has yet to ask how long it is kept
	Expire        bool // a finished job's retention has passed
	// Wake is the next wake-up, always after the moment planned for; zero
	// when only a message, a run's end or a handler's end can wake the
	// workflow.
	Wake time.Time
}

// Moment is what the planner reads of the workflow beside the job: the
// time, and what Temporal says of this run.
type Moment struct {
	Now              time.Time
	ContinueAsNew    bool // Temporal suggests the run continue as new
	HandlersFinished bool // no message handler runs
	// CollectionDisabled: the job's collection is disabled, as the job
	// last heard. It holds a completed or faulted job's re-runs, whose
	// state the collection never changes; other jobs learn it as Disabled
	// and Defined.
	CollectionDisabled bool
}

// Plan is the machine's one planner: what is due at m and the next
// wake-up. It only reads. Every deadline goes through come, which makes it
// due once m has reached it and a wake-up only while it is still to come;
// a hold's end, which makes nothing due, is a wake-up only while the job
// is held, before it. So the wake-up is after m by construction, and the
// workflow never sleeps on a deadline that has passed.
func (j *Job) Plan(m Moment) Plan {
	var p Plan
	over := j.Over(m)
	come := func(t time.Time) bool {
		if !t.After(m.Now) {
			return true
		}
		// A run that is over waits for its runs and handlers only: what
		// comes later is the next run's.
		if !over && (p.Wake.IsZero() || t.Before(p.Wake)) {
			p.Wake = t
		}
		return false
	}
	switch {
	case j.local.deleted:
		// A deleted job does nothing more; held, it wakes to end when its
		// hold ends.
		if j.Held(m.Now) {
			p.Wake = j.local.holdUntil
		}
		return p
	case j.state == nil:
		p.Abandon = come(j.graceEnd) && m.HandlersFinished
		return p
	}
	props := &j.state.Job.Properties
	p.StartBuffered = j.state.Buffered != nil && j.mayStart()
	if next, ok := j.nextNominal(); ok && !over {
		p.TakeNext = come(j.jitteredStart(next))
	}
	backfills := max(props.RunLimit(), 1) // one at a time when the job has no limit
	// The pace's end is a wake-up even while the slot is busy: a run
	// shorter than the pace then leaves the timer as it is.
	// Re-runs share the backfill's slot and pace: a burst of them is one
	// burst of calls to the target as a backfill is.
	switch {
	case len(j.state.Reruns)+len(j.state.Backfill) > 0 && props.State == jobs.Enabled && j.backfillPaced(come):
		p.StartRerun = len(j.state.Reruns) > 0 && j.running < backfills
		p.StartBackfill = !p.StartRerun && j.running < backfills
	case j.rerunsFinished() && !m.CollectionDisabled && j.backfillPaced(come):
		// A final job has no schedule left: its re-runs alone take the slot.
		p.StartRerun = j.running < backfills
	}
	p.Settle = j.spent()
	p.Retain = j.finished() && !j.local.retention.known
	if until, ok := j.expiry(); ok {
		p.Expire = come(until)
	}
	return p
}

// Over reports whether this run of the workflow ends once it is idle: its
// job is deleted, or its history is long enough to continue as new.
func (j *Job) Over(m Moment) bool {
	return j.local.deleted || j.local.fired >= MaxOccurrencesPerRun || m.ContinueAsNew
}

// Held reports whether the workflow of a deleted job must run on at now:
// its collection admitted the name ahead of a PUT that may still carry the
// admission, which this workflow refuses and a new one would take.
func (j *Job) Held(now time.Time) bool {
	return j.local.deleted && now.Before(j.local.holdUntil)
}

// finished reports whether the job has ended for good, its last run and
// the re-runs asked of it too.
func (j *Job) finished() bool {
	return j.state != nil && j.state.Job.Properties.State.Final() && j.running == 0 && !j.rerunsFinished()
}

// rerunsFinished reports whether the job is final and holds re-runs
// queued that it runs (FinishedReruns; before it, they waited for good).
func (j *Job) rerunsFinished() bool {
	return len(j.state.Reruns) > 0 && j.state.Job.Properties.State.Final() && j.world.Has(FinishedReruns)
}

// expiry returns when the finished job deletes itself, if it does: what
// retain noted, while the job is finished (a run now of a finished job
// keeps it until the run ends).
func (j *Job) expiry() (time.Time, bool) {
	if !j.finished() || j.local.retention.until.IsZero() {
		return time.Time{}, false
	}
	return j.local.retention.until, true
}

// nextNominal returns the next nominal run time when the job is waiting
// for one.
func (j *Job) nextNominal() (time.Time, bool) {
	if j.state == nil || j.local.deleted || j.state.Job.Properties.State != jobs.Enabled || j.state.Next == nil {
		return time.Time{}, false
	}
	return *j.state.Next, true
}

// jitteredStart is when the occurrence due at nominal starts: later by its
// jitter offset, if the job has a jitter.
func (j *Job) jitteredStart(nominal time.Time) time.Time {
	return j.state.Job.Properties.StartOf(j.key.JobWorkflowID(), nominal)
}

// mayStart reports whether another run may start: fewer run than the
// job's limit.
func (j *Job) mayStart() bool {
	limit := j.state.Job.Properties.RunLimit()
	return limit == 0 || j.running < limit
}
