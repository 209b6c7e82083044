// Package lifecycle is a job's state machine: the one place where a job's
// state changes. Apply takes an event (what happened: a definition
// accepted, the job disabled or deleted, a run asked for or ended, time
// passed) and returns the effects the job's workflow must carry out
// (start a run, cancel the runs, record rows, ask the job's retention,
// wake at a time). It imports no Temporal: the workflow feeds it events
// and carries out its effects, the API builds a new job's first state
// with it (NewState), and its model test drives it alone.
//
// What the machine asks of the world beside the job while it applies an
// event (its rule's occurrences, which behaviours the workflow's history
// was recorded with) it asks through World, which the workflow answers
// from what it records in history, and a test or the API directly.
package lifecycle

import (
	"fmt"
	"time"

	"github.com/recurhq/recur/jobs"
)

// MaxOccurrencesPerRun bounds a job workflow run's history, which the API
// reads back as the job's history: after that many occurrences it
// continues as new.
const MaxOccurrencesPerRun = 100

// Job is one job's state machine: its state, and what of it is the
// current run of the workflow's own. Apply alone changes it; its readers
// (State, View, Plan...) never do.
type Job struct {
	key      jobs.Key
	origin   string         // the origin of its ETags: the first run ID of the workflow's chain, or the API's
	graceEnd time.Time      // when a job never defined gives up its name
	state    *jobs.JobState // nil until the first definition; carried across continue-as-new
	local    local
	running  int // occurrences whose actions run now
	pending  pending
	world    World
}

// local is the job's state that this run of the workflow keeps and a
// continue-as-new leaves behind: a deleted job never continues as new,
// and the next run counts its own occurrences and plans and asks again.
type local struct {
	deleted   bool                 // by DELETE, by the collection, or past the retention of a finished job
	holdUntil time.Time            // a job its collection deleted runs on until then (Held)
	fired     int                  // occurrences fired by this run of the workflow
	outcome   jobs.ExecutionStatus // of the last run that ended in this run of the workflow
	retention retention
	ahead     Ahead // occurrences planned after the next one
	runNowIDs runNowIDs
}

// retention is what a finished job knows of its own end.
type retention struct {
	known bool      // asked once the job finished (it stays finished)
	until time.Time // when it deletes itself; zero to keep it
}

// pending is what the machine has been told and not yet acted on: the
// next Step acts on it.
type pending struct {
	runsNow []time.Time // runs now asked for, not yet started (their nominal times)
	ended   []Ended     // runs that ended, not yet counted
	applied bool        // an event changed the definition or the state
}

// New returns the machine of job k, in state st (nil for a job not yet
// defined), whose ETags come from origin and which gives up its name at
// graceEnd if no definition comes.
func New(k jobs.Key, origin string, graceEnd time.Time, st *jobs.JobState, w World) *Job {
	return &Job{key: k, origin: origin, graceEnd: graceEnd, state: st, world: w}
}

// An Event is what happened to the job: one of the types below.
type Event interface{ isEvent() }

type (
	// Defined makes Job, in its accepted form, the definition, planned
	// from At (C, in whole seconds): a PUT, a PATCH, or the collection
	// enabling the job again. A job defined into a disabled collection
	// (CollectionDisabled, as its collection answered the definition's
	// admission) is disabled.
	Defined struct {
		Job                jobs.Job
		At                 time.Time
		CollectionDisabled bool
	}
	// Disabled disables an enabled job for Reason: its collection was
	// disabled.
	Disabled struct{ Reason string }
	// Deleted deletes the job: by a DELETE, by its collection (which may
	// hold it until HoldUntil), or past its retention.
	Deleted struct{ HoldUntil time.Time }
	// BackfillQueued queues past occurrences to run as a backfill, Pace
	// apart (zero for the default).
	BackfillQueued struct {
		Times []time.Time
		Pace  time.Duration
	}
	// RunNowAsked asks for a run now, outside the schedule, of nominal
	// time At.
	RunNowAsked struct{ At time.Time }
	// RerunAsked queues a failed occurrence to run again, as a backfill
	// occurrence runs: a pace after the one before, in a free slot, while
	// the job is enabled, or once it is completed or faulted.
	RerunAsked struct{ Failure jobs.Failure }
	// CollectionEnabled tells a completed or faulted job that its
	// collection was enabled again: the re-runs it holds queued may
	// start (Moment.CollectionDisabled held them). Other jobs learn it as
	// Defined.
	CollectionEnabled struct{}
	// RunEnded says a run's actions ended (or were cancelled).
	RunEnded struct{ Ended Ended }
	// Step is time passing: the machine acts on what it was told and on
	// all that is due at the moment, and says when to wake.
	Step struct{ Moment Moment }
	// RetentionKnown answers AskRetention: finished jobs are kept for
	// Keep (zero: for good). The machine then goes on as Step does.
	RetentionKnown struct {
		Moment Moment
		Keep   time.Duration
	}
)

func (Defined) isEvent()           {}
func (Disabled) isEvent()          {}
func (Deleted) isEvent()           {}
func (BackfillQueued) isEvent()    {}
func (RunNowAsked) isEvent()       {}
func (RerunAsked) isEvent()        {}
func (CollectionEnabled) isEvent() {}
func (RunEnded) isEvent()          {}
func (Step) isEvent()              {}
func (RetentionKnown) isEvent()    {}

// An Effect is what the workflow must do: one of the types below, carried
// out in the order Apply returns them.
type Effect interface{ isEffect() }

type (
	// Start starts a run of Action.
	Start struct {
		Run    Run
		Action jobs.Action
	}
	// CancelRuns cancels every run in flight: the job is deleted.
	CancelRuns struct{}
	// Record writes history rows and, for a run that failed for good, its
	// failure record, in the same upsert.
	Record struct {
		Rows    []jobs.HistoryRow
		Failure *jobs.Failure
	}
	// NotRun says an occurrence was recorded as Postponed, for Why: the
	// workflow counts it in its metrics (its row is a Record of its own).
	NotRun struct {
		Nominal time.Time
		Why     Why
		Reason  string
	}
	// Skipped says a catch-up counted N missed occurrences it does not
	// list.
	Skipped struct{ N int }
	// AskRetention asks how long finished jobs are kept: the answer is
	// RetentionKnown.
	AskRetention struct{}
	// Wake sets the wake-up: At, always after the moment of the step, or
	// none when zero (a message, a run's end or a handler's end wakes the
	// workflow then).
	Wake struct{ At time.Time }
	// Defect logs what the machine found wrong with its inputs.
	Defect struct {
		Message string
		Args    []any
	}
)

func (Start) isEffect()        {}
func (CancelRuns) isEffect()   {}
func (Record) isEffect()       {}
func (NotRun) isEffect()       {}
func (Skipped) isEffect()      {}
func (AskRetention) isEffect() {}
func (Wake) isEffect()         {}
func (Defect) isEffect()       {}

// Why says why an occurrence is recorded as Postponed instead of run,
// which decides the status counter (postponedCount or missedCount) and
// the metric that count it.
type Why int

const (
	Overlapped Why = iota // a run still ran
	Missed                // past its catch-up window, or recur was down or behind
)

// Apply applies e and returns what the workflow must do. An error is the
// world's (a rule's answer that could not be recorded): the workflow
// fails its task.
func (j *Job) Apply(e Event) ([]Effect, error) {
	var out []Effect
	switch e := e.(type) {
	case Defined:
		if err := j.define(disabledBy(j.key, e.Job, e.CollectionDisabled), e.At); err != nil {
			return nil, err
		}
	case Disabled:
		j.disable(e.Reason)
	case Deleted:
		j.local.deleted = true
		if e.HoldUntil.After(j.local.holdUntil) {
			j.local.holdUntil = e.HoldUntil
		}
	case BackfillQueued:
		j.state.Backfill = append(j.state.Backfill, e.Times...)
		j.state.BackfillPace = e.Pace
	case RunNowAsked:
		j.pending.runsNow = append(j.pending.runsNow, e.At)
	case RerunAsked:
		j.state.Reruns = append(j.state.Reruns, e.Failure)
	case CollectionEnabled:
		// Nothing changes but what the next step may start.
	case RunEnded:
		j.running--
		if !e.Ended.Cancelled {
			j.pending.ended = append(j.pending.ended, e.Ended)
		}
		return nil, nil
	case Step:
		return j.step(e.Moment)
	case RetentionKnown:
		j.retain(e.Moment.Now, e.Keep)
		return j.due(e.Moment, out)
	default:
		panic(fmt.Sprintf("lifecycle: unknown event %T", e))
	}
	j.pending.applied = true
	return out, nil
}

// step acts on what the machine was told: it counts the runs that ended,
// starts the runs now and cancels the runs of a job deleted; then it acts
// on what is due.
func (j *Job) step(m Moment) ([]Effect, error) {
	var out []Effect
	j.pending.applied = false
	for _, e := range j.pending.ended {
		out = j.count(e, out)
	}
	j.pending.ended = nil
	for _, at := range j.pending.runsNow {
		out = j.startRun(at, RunNow, m.Now, out)
	}
	j.pending.runsNow = nil
	if j.local.deleted && j.running > 0 {
		out = append(out, CancelRuns{}) // nothing more reaches the targets of a job that is gone
	}
	return j.due(m, out)
}

// due acts on what the planner says is due, one thing at a time, until
// nothing is, and ends with the wake-up the planner names, or with
// AskRetention. Each act takes away what made it due (the buffered
// occurrence, the next occurrence, which takeDue moves past, a queued
// re-run or backfill occurrence, the enabled state, the retention still to ask, the
// job itself), so the loop ends. In this order: a buffered occurrence
// before the schedule's next, which comes before a re-run, which comes
// before a backfill.
func (j *Job) due(m Moment, out []Effect) ([]Effect, error) {
	for {
		switch p := j.Plan(m); {
		case p.Abandon:
			j.local.deleted = true // never defined
		case p.StartBuffered:
			out = j.startBuffered(m.Now, out)
		case p.TakeNext:
			var err error
			if out, err = j.takeDue(*j.state.Next, m.Now, out); err != nil {
				return nil, err
			}
		case p.StartRerun:
			out = j.startRerun(m.Now, out)
		case p.StartBackfill:
			out = j.startBackfill(m.Now, out)
		case p.Settle:
			j.settle()
		case p.Retain:
			return append(out, AskRetention{}), nil
		case p.Expire:
			// Its collection forgets it as the workflow ends (its quota slot
			// is free again); its history rows stay until the namespace's
			// retention, as a deleted job's.
			j.local.deleted = true
		default:
			return append(out, Wake{At: p.Wake}), nil
		}
	}
}

// define makes def the job's definition, planned from c.
func (j *Job) define(def jobs.Job, c time.Time) error {
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
	st.Job, st.PlannedFrom, st.Runs = def, c, 0
	st.Job.Properties.Status = status
	if was != jobs.Enabled && def.Properties.State == jobs.Enabled {
		j.restartStreak()
	}
	j.revise()
	j.local.ahead = Ahead{}
	if def.Properties.State == jobs.Completed {
		// A job created completed (one that ran its course where it was
		// imported from) has nothing to run.
		j.setNext(nil)
		return nil
	}
	next, err := j.world.First(def.Properties.Schedule(), c)
	if err != nil {
		return err
	}
	j.setNext(next)
	j.settle()
	return nil
}

// disable disables the job for reason: its collection disabled it, or its
// failures reached disableAfterFailures (countHealth).
func (j *Job) disable(reason string) {
	p := &j.state.Job.Properties
	p.State, p.StateReason = jobs.Disabled, reason
	j.revise()
}

// settle completes an enabled job that has nothing left to run.
func (j *Job) settle() {
	if j.spent() {
		j.state.Job.Properties.State = jobs.Completed
		j.revise()
	}
}

// spent reports whether an enabled job has nothing left to run: no next
// occurrence, none running, buffered or queued for a backfill or a
// re-run.
func (j *Job) spent() bool {
	return j.state.Job.Properties.State == jobs.Enabled && j.state.Next == nil && j.running == 0 &&
		j.state.Buffered == nil && len(j.state.Backfill) == 0 && len(j.state.Reruns) == 0
}

// revise gives the definition its next revision and ETag: it changed.
func (j *Job) revise() {
	j.state.Revision++
	j.state.Job.ETag = jobs.NewETag(j.origin, j.state.Revision)
}

// status returns the status to write to, made when the job has none.
func (j *Job) status() *jobs.Status {
	p := &j.state.Job.Properties
	if p.Status == nil {
		p.Status = &jobs.Status{}
	}
	return p.Status
}

func (j *Job) setNext(next *time.Time) {
	j.state.Next = next
	j.status().NextExecutionTime = next
}

// retain notes when a finished job deletes itself: its finish time plus
// keep, when it is not zero.
func (j *Job) retain(now time.Time, keep time.Duration) {
	j.local.retention.known = true
	if j.state.Finished == nil {
		j.state.Finished = &now
	}
	if keep > 0 {
		j.local.retention.until = j.state.Finished.Add(keep)
	}
}

// runNowIDs tells apart the runs now that share a nominal time (the
// workflow task's clock): "/run-now", then "/run-now-2", "/run-now-3".
type runNowIDs struct {
	last time.Time
	seq  int // runs now before the last one at last
}

func (r *runNowIDs) suffix(nominal time.Time) string {
	if !nominal.Equal(r.last) {
		r.last, r.seq = nominal, 0
		return "/run-now"
	}
	r.seq++
	return fmt.Sprintf("/run-now-%d", r.seq+1)
}
