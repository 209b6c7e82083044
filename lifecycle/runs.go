package lifecycle

import (
	"cmp"
	"fmt"
	"time"

	"github.com/recurhq/recur/jobs"
)

// RunKind says why an occurrence runs.
type RunKind int

const (
	Scheduled RunKind = iota // its nominal time came
	RunNow                   // POST .../run, outside the schedule
	Backfill                 // POST .../backfill, a past occurrence
	Rerun                    // POST .../failures/{id}/run, a failed occurrence again
)

// Name is the kind as a failure record names it (jobs.RunKindScheduled...).
func (k RunKind) Name() string {
	switch k {
	case RunNow:
		return jobs.RunKindRunNow
	case Backfill:
		return jobs.RunKindBackfill
	case Rerun:
		return jobs.RunKindRerun
	}
	return jobs.RunKindScheduled
}

// Run is one run of a job's action, as the machine started it.
type Run struct {
	ID      string // the occurrence ID, every attempt's idempotency key
	Nominal time.Time
	// PlannedStart is when it was meant to start: a scheduled one's
	// nominal time plus its jitter offset.
	PlannedStart time.Time
	Kind         RunKind
	Repeat       int // the job's runs so far, this one included
	Started      time.Time
	// A re-run's: the failure it runs again, and the occurrence ID its
	// calls are signed as (that failure's own, or the one it was signed
	// as in turn).
	RerunOf, SignedAs string
}

// Lateness is how late the run started against when it was meant to.
func (r Run) Lateness() time.Duration { return max(r.Started.Sub(r.PlannedStart), 0) }

// Ended is a run whose actions have ended.
type Ended struct {
	Run
	Result jobs.RunResult
	Rows   []jobs.HistoryRow // the main action's, then the error action's
	// Failure is the run's failure record when its main action failed for
	// good: it is written with the rows.
	Failure   *jobs.Failure
	Cancelled bool // by the job's deletion: no result, no rows
}

// takeDue handles the occurrence due at nominal, and any later ones that
// fell due while the workflow could not run (recur was down or behind):
// the most recent runs if it is within the catch-up window, the others
// are recorded as Postponed. Then it plans the next occurrence, always
// after nominal, or none.
func (j *Job) takeDue(nominal, now time.Time, out []Effect) ([]Effect, error) {
	j.local.fired++
	// An occurrence due within the last jitter may not have reached its
	// start yet: only those before are missed.
	jitter := j.state.Job.Properties.JitterDuration()
	caught, err := j.catchUp(nominal, now.Add(-jitter))
	if err != nil {
		return nil, err
	}
	window := j.state.Job.Properties.CatchUp()
	for i, o := range caught.Passed {
		if h := j.state.Handled; h != nil && !o.After(*h) {
			continue
		}
		j.state.Handled = &o
		switch last := i == len(caught.Passed)-1; {
		case !last:
			reason := "missed: recur was down or too busy to run it on time; only the most recent missed occurrence may run"
			if i == len(caught.Passed)-2 && caught.Skipped > 0 {
				reason = fmt.Sprintf("%s (the %d missed occurrences after it, up to the most recent, are not listed)", reason, caught.Skipped)
				out = append(out, Skipped{N: caught.Skipped})
				j.countSkipped(caught.Skipped, caught.LastSkipped)
			}
			out = j.postpone(o, Missed, reason, out)
		case now.Sub(j.jitteredStart(o)) > window:
			out = j.postpone(o, Missed, fmt.Sprintf("missed by %s, more than the catch-up window of %s", now.Sub(j.jitteredStart(o)).Round(time.Second), window), out)
		default:
			out = j.runOrPostpone(o, now, out)
		}
	}
	if next := caught.Next; next != nil && !next.After(nominal) {
		// The engine plans each occurrence after the one before: one that
		// is not is its defect, which ends the schedule, as a rule that
		// stops compiling does, rather than take an occurrence again.
		out = append(out, Defect{Message: MsgNoProgress, Args: []any{"nominal", nominal, "next", *next}})
		caught.Next = nil
	}
	if c := j.countLimit(); c > 0 && j.state.Runs >= c {
		caught.Next = nil // the count is used up
	}
	j.setNext(caught.Next)
	return out, nil
}

// MsgNoProgress is logged when the recurrence engine plans an occurrence
// that is not after the one before.
const MsgNoProgress = "the recurrence engine planned an occurrence that is not after the one before; the schedule ends"

// catchUp lists the occurrences from nominal (the job's next) up to now
// and the next one: from the plan ahead when it covers now, else from a
// new plan that looks ahead again.
func (j *Job) catchUp(nominal, now time.Time) (CatchUp, error) {
	if j.local.ahead.covers(now) {
		p := CatchUp{Passed: []time.Time{nominal}}
		times := j.local.ahead.Times
		for len(times) > 0 && !times[0].After(now) {
			p.add(times[0])
			times = times[1:]
		}
		if len(times) > 0 {
			next := times[0]
			p.Next, times = &next, times[1:]
		}
		j.local.ahead.Times = times
		return p, nil
	}
	planned, err := j.world.Plan(j.state.Job.Properties.Schedule(), j.state.PlannedFrom, nominal, now)
	if err != nil {
		return CatchUp{}, err
	}
	j.local.ahead = planned.Ahead
	return planned.Plan, nil
}

// countLimit returns the recurrence's count, 0 for none.
func (j *Job) countLimit() int {
	if r := j.state.Job.Properties.Recurrence; r != nil && r.Count != nil {
		return *r.Count
	}
	return 0
}

// runOrPostpone runs an occurrence unless the previous run still runs;
// then the overlap policy decides.
func (j *Job) runOrPostpone(nominal, now time.Time, out []Effect) []Effect {
	p := j.state.Job.Properties
	switch {
	case j.mayStart():
		j.state.Runs++
		return j.startRun(nominal, Scheduled, now, out)
	case p.OverlapPolicy == jobs.OverlapBufferOne && j.state.Buffered == nil:
		j.state.Runs++
		j.state.Buffered = &nominal
		return out
	case p.OverlapPolicy == jobs.OverlapBufferOne:
		return j.postpone(nominal, Overlapped, "the previous run was still running and another occurrence was already waiting for it", out)
	case p.MaxConcurrentRuns > 0:
		return j.postpone(nominal, Overlapped, fmt.Sprintf("%d runs were still running (maxConcurrentRuns)", j.running), out)
	default:
		return j.postpone(nominal, Overlapped, "the previous run was still running (overlapPolicy Skip)", out)
	}
}

// startBuffered starts the occurrence buffered behind a run that ended,
// unless the job was disabled meanwhile (by a write, its collection or its
// failures): a disabled job runs nothing, so the occurrence is postponed.
// Whatever enables the job again plans it anew (define), its count too.
func (j *Job) startBuffered(now time.Time, out []Effect) []Effect {
	next := *j.state.Buffered
	j.state.Buffered = nil
	if j.state.Job.Properties.State != jobs.Enabled && j.world.Has(DisabledHoldsBuffered) {
		return j.postpone(next, Overlapped, "the job was disabled while this occurrence waited for the run before it (overlapPolicy BufferOne)", out)
	}
	return j.startRun(next, Scheduled, now, out)
}

// startRun starts an occurrence's actions; the machine counts it when it
// ends (RunEnded, then Step).
func (j *Job) startRun(nominal time.Time, kind RunKind, now time.Time, out []Effect) []Effect {
	id := jobs.OccurrenceID(j.key.JobWorkflowID(), nominal)
	if kind == RunNow {
		id += j.local.runNowIDs.suffix(nominal)
	}
	planned := nominal
	if kind == Scheduled {
		planned = j.jitteredStart(nominal)
	}
	j.running++
	run := Run{ID: id, Nominal: nominal, PlannedStart: planned, Kind: kind, Repeat: j.status().ExecutionCount + j.running, Started: now}
	return append(out, Start{Run: run, Action: *j.state.Job.Properties.Action})
}

// postpone records an occurrence that does not run as a Postponed row,
// and counts it in the job's status; why says whether it was missed or
// postponed.
func (j *Job) postpone(nominal time.Time, why Why, reason string, out []Effect) []Effect {
	j.countNotRun(nominal, why)
	row := jobs.HistoryRow{
		ExpectedExecutionTime: nominal, ActionName: jobs.MainAction,
		Status: jobs.ExecutionPostponed, Message: reason, RepeatCount: j.status().ExecutionCount + j.running,
	}
	return append(out, NotRun{Nominal: nominal, Why: why, Reason: reason}, Record{Rows: []jobs.HistoryRow{row}})
}

// startBackfill starts the first queued backfill occurrence; the next
// may start a pace later.
func (j *Job) startBackfill(now time.Time, out []Effect) []Effect {
	next := j.state.Backfill[0]
	j.state.Backfill = j.state.Backfill[1:]
	if pace := j.Pace(); pace > 0 {
		notBefore := now.Add(pace)
		j.state.BackfillNotBefore = &notBefore
	}
	return j.startRun(next, Backfill, now, out)
}

// startRerun starts the first queued re-run: the failure's action, at
// its nominal time, under an occurrence ID of its own (every attempt's
// idempotency key, which a second run of the failure's ID would share
// with it) and signed as the failure was. The next backfill occurrence
// or re-run may start a pace later.
func (j *Job) startRerun(now time.Time, out []Effect) []Effect {
	f := j.state.Reruns[0]
	j.state.Reruns = j.state.Reruns[1:]
	j.state.Reran++
	if pace := j.Pace(); pace > 0 {
		notBefore := now.Add(pace)
		j.state.BackfillNotBefore = &notBefore
	}
	j.running++
	run := Run{
		ID: fmt.Sprintf("%s/rerun-%d", jobs.OccurrenceID(j.key.JobWorkflowID(), f.Nominal), j.state.Reran), Nominal: f.Nominal,
		PlannedStart: f.Nominal, Kind: Rerun, Repeat: j.status().ExecutionCount + j.running, Started: now,
		RerunOf: f.ID, SignedAs: cmp.Or(f.SignedAs, f.OccurrenceID),
	}
	return append(out, Start{Run: run, Action: f.Action})
}

// Pace is the least time between two backfill starts: the one of the
// backfill last queued, and none in the histories recorded before
// backfills were paced.
func (j *Job) Pace() time.Duration {
	if !j.world.Has(PacedBackfill) {
		return 0
	}
	return cmp.Or(j.state.BackfillPace, jobs.DefaultBackfillPace)
}

// backfillPaced reports whether the pace lets the next backfill
// occurrence start now; come (the planner's) wakes the workflow when it
// will.
func (j *Job) backfillPaced(come func(time.Time) bool) bool {
	return j.state.BackfillNotBefore == nil || come(*j.state.BackfillNotBefore)
}

// LastBackfillStart is the earliest start of the last occurrence queued,
// at now: from the next start the pace allows, one pace after another;
// nil when none is queued.
func (j *Job) LastBackfillStart(now time.Time, pace time.Duration) *time.Time {
	n := len(j.state.Backfill)
	if n == 0 {
		return nil
	}
	first := now
	if nb := j.state.BackfillNotBefore; nb != nil && nb.After(now) {
		first = *nb
	}
	last := first.Add(time.Duration(n-1) * pace).UTC()
	return &last
}
