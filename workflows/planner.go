package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// plan is what the job's loop must do at a moment and when it must next
// wake up, as the planner (job.plan) reads them off the job's state.
type plan struct {
	// What is due, in the order step acts on it.
	abandon       bool // a job never defined gives up its name: its grace has passed and no PUT still waits
	startBuffered bool // the occurrence buffered behind a run may start
	takeNext      bool // the start of the next occurrence has passed
	startBackfill bool // a queued backfill occurrence may start: a slot is free and its pace has passed
	settle        bool // an enabled job has nothing left to run: it completes
	retain        bool // a finished job has yet to ask how long it is kept
	expire        bool // a finished job's retention has passed
	// wake is the next wake-up, always after the moment planned for; zero
	// when only a message, a run's end or a handler's end can wake the
	// loop.
	wake time.Time
}

// moment is what the planner reads of the workflow beside the job: the
// time, and what Temporal says of this run.
type moment struct {
	now              time.Time
	continueAsNew    bool // Temporal suggests the run continue as new
	handlersFinished bool // no message handler runs
}

func momentOf(ctx workflow.Context) moment {
	return moment{
		now:              workflow.Now(ctx),
		continueAsNew:    workflow.GetInfo(ctx).GetContinueAsNewSuggested(),
		handlersFinished: workflow.AllHandlersFinished(ctx),
	}
}

// plan is the loop's one planner: what is due at m and the next wake-up.
// It only reads. Every deadline goes through come, which makes it due
// once m has reached it and a wake-up only while it is still to come; a
// hold's end, which makes nothing due, is a wake-up only while the job is
// held, before it. So the wake-up is after m by construction, and the
// loop never sleeps on a deadline that has passed.
func (j *job) plan(m moment) plan {
	var p plan
	over := j.over(m)
	come := func(t time.Time) bool {
		if !t.After(m.now) {
			return true
		}
		// A run that is over waits for its runs and handlers only: what
		// comes later is the next run's.
		if !over && (p.wake.IsZero() || t.Before(p.wake)) {
			p.wake = t
		}
		return false
	}
	switch {
	case j.local.deleted:
		// A deleted job does nothing more; held, it wakes to end when its
		// hold ends.
		if j.held(m.now) {
			p.wake = j.local.holdUntil
		}
		return p
	case j.state == nil:
		p.abandon = come(j.graceEnd) && m.handlersFinished
		return p
	}
	props := &j.state.Job.Properties
	p.startBuffered = j.state.Buffered != nil && j.mayStart()
	if next, ok := j.nextNominal(); ok && !over {
		p.takeNext = come(j.jitteredStart(next))
	}
	backfills := max(props.RunLimit(), 1) // one at a time when the job has no limit
	// The pace's end is a wake-up even while the slot is busy: a run
	// shorter than the pace then leaves the timer as it is.
	if len(j.state.Backfill) > 0 && props.State == jobs.Enabled && j.backfillPaced(come) {
		p.startBackfill = j.running < backfills
	}
	p.settle = j.spent()
	p.retain = j.finished() && !j.local.retention.known
	if until, ok := j.expiry(); ok {
		p.expire = come(until)
	}
	return p
}

// over reports whether this run of the workflow ends once it is idle: its
// job is deleted, or its history is long enough to continue as new.
func (j *job) over(m moment) bool {
	return j.local.deleted || j.local.fired >= maxOccurrencesPerRun || m.continueAsNew
}

// held reports whether the workflow of a deleted job must run on at now:
// its collection admitted the name ahead of a PUT that may still carry the
// admission, which this workflow refuses and a new one would take.
func (j *job) held(now time.Time) bool {
	return j.local.deleted && now.Before(j.local.holdUntil)
}
