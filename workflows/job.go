package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// maxOccurrencesPerRun bounds a job workflow run's history, which the API
// reads back as the job's history: after that many occurrences it
// continues as new.
const maxOccurrencesPerRun = 100

// Job is the workflow of one job. It sleeps on a durable timer until the
// next occurrence and runs the job's action as activities of its own,
// the error action after it when it fails for good; each occurrence writes
// its history rows and the job's status to the memo in the task that took
// its end. Nominal times come from the recurrence engine, never
// from when a run actually happened.
//
// The workflow is one loop (run): message handlers hand each change to
// apply, which makes it at once (a write's answer shows it) and leaves the
// rest in j.pending, as runs that end do; step does that work in one
// place, flush writes what changed, and wake plans when the loop must
// next wake up.
func Job(ctx workflow.Context, in jobs.JobInput) error {
	j := &job{key: in.Key, state: in.State, firstRun: workflow.GetInfo(ctx).FirstRunID}
	return j.run(ctx)
}

type job struct {
	key      jobs.Key
	firstRun string         // the first run ID of the workflow's chain, for ETags
	state    *jobs.JobState // nil until the first PUT; carried across continue-as-new
	local    localState     // the rest of the job's state, this run's own
	// The job's exchange with its collection (admission.go), kept by its
	// own methods.
	admission admission
	// The loop's bookkeeping and the runs in flight.
	pending    pending
	running    int              // occurrences whose actions run now
	runs       workflow.Context // theirs, which a deletion cancels
	cancelRuns workflow.CancelFunc
	memo       memo  // what the memo holds (memo.go)
	timer      timer // the durable timer of the next wake-up
}

// localState is the job's state that this run of the workflow keeps and
// a continue-as-new leaves behind: a deleted job never continues as new,
// and the next run counts its own occurrences and plans and asks again.
type localState struct {
	deleted   bool                 // by DELETE, by the collection, or past the retention of a finished job
	holdUntil time.Time            // a job its collection deleted runs on until then (held)
	fired     int                  // occurrences fired by this run of the workflow
	outcome   jobs.ExecutionStatus // of the last run that ended in this run of the workflow
	retention retention            // (retention.go)
	ahead     ahead                // occurrences planned after the next one (plan.go)
	runNowIDs runNowIDs
}

// timer is the loop's durable timer: it stays while the wake-up it was
// started for stays, so that a loop woken by a message or a run's end
// costs no new timer.
type timer struct {
	at     time.Time
	fired  workflow.Future // nil when there is no timer
	cancel workflow.CancelFunc
}

// set makes the timer fire at at (zero for none), starting or cancelling
// a timer only when the wake-up changed. It reports false when at is
// already past: the loop must not sleep.
func (t *timer) set(ctx workflow.Context, at time.Time) bool {
	if t.fired != nil && (t.fired.IsReady() || !t.at.Equal(at)) {
		t.cancel() // a no-op once fired; free while its command is unsent
		*t = timer{}
	}
	if at.IsZero() || t.fired != nil {
		return true
	}
	d := at.Sub(workflow.Now(ctx))
	if d <= 0 {
		return false
	}
	tctx, cancel := workflow.WithCancel(ctx)
	*t = timer{at: at, fired: workflow.NewTimer(tctx, d), cancel: cancel}
	return true
}

func (t *timer) ready() bool { return t.fired != nil && t.fired.IsReady() }

// pending is the work the loop has been left and not yet done.
type pending struct {
	runsNow []time.Time       // runs now answered, not yet started (their nominal times)
	ended   []ended           // occurrences whose actions ended, not yet counted
	rows    []jobs.HistoryRow // history rows not yet written
	changed bool              // a message changed the definition or the state
}

func (p *pending) any() bool {
	return len(p.runsNow) > 0 || len(p.ended) > 0 || len(p.rows) > 0 || p.changed
}

// errDeleted ends the loop of a deleted job.
var errDeleted = errors.New("job deleted")

func (j *job) run(ctx workflow.Context) error {
	if err := j.register(ctx); err != nil {
		return err
	}
	for {
		if err := j.step(ctx); err != nil {
			return err
		}
		j.flush(ctx)
		end := j.ending(ctx)
		if end != nil && j.idle(ctx) && !j.held(ctx) {
			if errors.Is(end, errDeleted) {
				j.leave(ctx)
				return nil
			}
			return end
		}
		if err := j.sleep(ctx, end != nil); err != nil {
			return err
		}
	}
}

// step does the pending work: counts the occurrences that ended, starts
// the runs now and a buffered occurrence, fires the occurrence that is
// due, settles the state and deletes a finished job past its retention.
// An action may start in the task that accepted the update asking for it
// (a run now, a PUT whose first occurrence is due at once, a backfill):
// its activity is a command of that task, which Temporal records together
// with the update's acceptance or not at all.
func (j *job) step(ctx workflow.Context) error {
	p := &j.pending
	p.changed = false
	for _, e := range p.ended {
		j.count(e)
	}
	p.ended = nil
	for _, at := range p.runsNow {
		j.startRun(ctx, at, runNow)
	}
	p.runsNow = nil
	if j.abandoned(ctx) {
		j.local.deleted = true // never defined
	}
	if j.local.deleted && j.running > 0 {
		j.cancelRuns() // nothing more reaches the targets of a job that is gone
	}
	if j.state == nil || j.local.deleted {
		return nil
	}
	if err := j.start(ctx); err != nil {
		return err
	}
	j.settle()
	j.retain(ctx)
	if until, ok := j.expiry(); ok && !until.After(workflow.Now(ctx)) {
		j.expire()
	}
	return nil
}

// start starts a buffered occurrence, the occurrence due and queued
// backfill occurrences, as far as the job's run limit allows.
func (j *job) start(ctx workflow.Context) error {
	if j.state.Buffered != nil && j.mayStart() {
		next := *j.state.Buffered
		j.state.Buffered = nil
		j.startRun(ctx, next, scheduled)
	}
	// Every occurrence whose start has passed is taken now, those of a
	// catch-up that fall within the last jitter too: the planner (wake)
	// then names a start still to come, and the loop sleeps.
	for {
		next, ok := j.nextNominal()
		if !ok || j.jitteredStart(next).After(workflow.Now(ctx)) || j.ending(ctx) != nil {
			break
		}
		if err := j.takeDue(ctx, next); err != nil {
			return err
		}
		if after, ok := j.nextNominal(); ok && !after.After(next) {
			break // no progress: a defect, which the planner reports
		}
	}
	// After the schedule's occurrence, which comes first.
	j.startBackfill(ctx)
	return nil
}

// ending returns how the workflow ends once it is idle: errDeleted, a
// continue-as-new, or nil while it goes on.
func (j *job) ending(ctx workflow.Context) error {
	switch {
	case j.local.deleted:
		return errDeleted
	case j.local.fired >= maxOccurrencesPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested():
		return workflow.NewContinueAsNewError(ctx, jobs.JobWorkflowName, jobs.JobInput{Key: j.key, State: j.state})
	}
	return nil
}

// idle reports whether nothing is in flight: no action runs, no message
// handler runs and nothing is pending, so the workflow may end.
func (j *job) idle(ctx workflow.Context) bool {
	return j.running == 0 && !j.pending.any() && workflow.AllHandlersFinished(ctx)
}

// abandoned reports whether a job never defined gives up its name: its
// grace has passed and no PUT still waits for its collection (each gives
// up at the grace too, admit).
func (j *job) abandoned(ctx workflow.Context) bool {
	return j.state == nil && !j.local.deleted && graceLeft(ctx) == 0 && workflow.AllHandlersFinished(ctx)
}

// backstop is how long the loop sleeps when its planner names a wake-up
// that has passed.
const backstop = time.Second

// sleep waits for pending work or its next wake-up; an ending workflow
// also wakes when it is idle, and one never defined when it is abandoned.
// It always blocks: a wake-up that has passed is one step should have
// acted on, and waking at once would turn the loop without yielding,
// starving the coroutines (message handlers, runs) that would end it.
func (j *job) sleep(ctx workflow.Context, ending bool) error {
	at, _ := j.wake(ctx, ending)
	if !j.timer.set(ctx, at) {
		workflow.GetLogger(ctx).Error(msgPastWakeUp, "wakeUp", at)
		j.timer.set(ctx, workflow.Now(ctx).Add(backstop))
	}
	return workflow.Await(ctx, func() bool {
		return j.pending.any() || j.timer.ready() || ending && j.idle(ctx) && !j.held(ctx) || j.abandoned(ctx)
	})
}

// held reports whether the workflow of a deleted job must run on: its
// collection admitted the name ahead of a PUT that may still carry the
// admission, which this workflow refuses and a new one would take.
func (j *job) held(ctx workflow.Context) bool {
	return j.local.deleted && workflow.Now(ctx).Before(j.local.holdUntil)
}

// msgPastWakeUp is logged when the planner and step disagree: a defect.
const msgPastWakeUp = "the job's loop planned a wake-up that has passed; it sleeps a second instead"

// wake is the one planner of the loop: when it must next wake up with
// nothing pending. Unless the workflow is ending, that is the next
// occurrence of an enabled job, when a finished job's retention ends, or
// when a job never defined gives up; a deleted job held wakes when its
// hold ends. ok is false when only a message or a handler's end can wake
// it (ending and not held, disabled, finished and kept, never defined
// past its grace).
func (j *job) wake(ctx workflow.Context, ending bool) (at time.Time, ok bool) {
	switch {
	case ending && j.held(ctx):
		return j.local.holdUntil, true
	case ending:
		return time.Time{}, false
	case j.state == nil && !j.local.deleted:
		// Past its grace, the job waits for its PUTs to give up.
		if graceLeft(ctx) > 0 {
			return undefinedUntil(ctx), true
		}
		return time.Time{}, false
	}
	if next, ok := j.nextNominal(); ok {
		return j.jitteredStart(next), true
	}
	return j.expiry()
}

// jitteredStart is when the occurrence due at nominal starts: later by its
// jitter offset, if the job has a jitter.
func (j *job) jitteredStart(nominal time.Time) time.Time {
	return j.state.Job.Properties.StartOf(j.key.JobWorkflowID(), nominal)
}

// nextNominal returns the next nominal run time when the job is waiting for one.
func (j *job) nextNominal() (time.Time, bool) {
	if j.state == nil || j.local.deleted || j.state.Job.Properties.State != jobs.Enabled || j.state.Next == nil {
		return time.Time{}, false
	}
	return *j.state.Next, true
}

// takeDue handles the occurrence due at nominal, and any later ones that fell
// due while the workflow could not run (recur was down or behind): the
// most recent runs if it is within the catch-up window, the others are
// recorded as Postponed. Then it plans the next occurrence.
func (j *job) takeDue(ctx workflow.Context, nominal time.Time) error {
	j.local.fired++
	now := workflow.Now(ctx)
	// An occurrence due within the last jitter may not have reached its
	// start yet: only those before are missed.
	jitter := j.state.Job.Properties.JitterDuration()
	plan, err := j.catchUp(ctx, nominal, now.Add(-jitter))
	if err != nil {
		return err
	}
	window := j.state.Job.Properties.CatchUp()
	for i, o := range plan.Due {
		if h := j.state.Handled; h != nil && !o.After(*h) {
			continue
		}
		j.state.Handled = &o
		switch last := i == len(plan.Due)-1; {
		case !last:
			reason := "missed: recur was down or too busy to run it on time; only the most recent missed occurrence may run"
			if i == len(plan.Due)-2 && plan.Skipped > 0 {
				reason = fmt.Sprintf("%s (the %d missed occurrences after it, up to the most recent, are not listed)", reason, plan.Skipped)
			}
			j.postpone(ctx, o, reason)
		case now.Sub(j.jitteredStart(o)) > window:
			j.postpone(ctx, o, fmt.Sprintf("missed by %s, more than the catch-up window of %s", now.Sub(j.jitteredStart(o)).Round(time.Second), window))
		default:
			j.runOrPostpone(ctx, o)
		}
	}
	if c := j.countLimit(); c > 0 && j.state.Runs >= c {
		plan.Next = nil // the count is used up
	}
	j.setNext(plan.Next)
	return nil
}

// countLimit returns the recurrence's count, 0 for none.
func (j *job) countLimit() int {
	if r := j.state.Job.Properties.Recurrence; r != nil && r.Count != nil {
		return *r.Count
	}
	return 0
}

// runOrPostpone runs an occurrence unless the previous run still runs; then
// the overlap policy decides.
func (j *job) runOrPostpone(ctx workflow.Context, nominal time.Time) {
	p := j.state.Job.Properties
	switch {
	case j.mayStart():
		j.state.Runs++
		j.startRun(ctx, nominal, scheduled)
	case p.OverlapPolicy == jobs.OverlapBufferOne && j.state.Buffered == nil:
		j.state.Runs++
		j.state.Buffered = &nominal
	case p.OverlapPolicy == jobs.OverlapBufferOne:
		j.postpone(ctx, nominal, "the previous run was still running and another occurrence was already waiting for it")
	case p.MaxConcurrentRuns > 0:
		j.postpone(ctx, nominal, fmt.Sprintf("%d runs were still running (maxConcurrentRuns)", j.running))
	default:
		j.postpone(ctx, nominal, "the previous run was still running (overlapPolicy Skip)")
	}
}

// mayStart reports whether another run may start: fewer run than the
// job's limit.
func (j *job) mayStart() bool {
	limit := j.state.Job.Properties.RunLimit()
	return limit == 0 || j.running < limit
}

// startRun runs an occurrence's actions in the background; the loop counts
// it when it ends.
func (j *job) startRun(ctx workflow.Context, nominal time.Time, kind runKind) {
	id := jobs.OccurrenceID(j.key.JobWorkflowID(), nominal)
	if kind == runNow {
		id += j.local.runNowIDs.suffix(nominal)
	}
	j.running++
	o := occurrence{key: j.key, id: id, nominal: nominal, action: *j.state.Job.Properties.Action,
		repeat: j.status().ExecutionCount + j.running, kind: kind, started: workflow.Now(ctx)}
	if j.cancelRuns == nil {
		j.runs, j.cancelRuns = workflow.WithCancel(ctx)
	}
	workflow.Go(j.runs, func(ctx workflow.Context) {
		e := o.run(ctx)
		j.running--
		if !e.cancelled {
			j.pending.ended = append(j.pending.ended, e)
		}
	})
}

// postpone records an occurrence that does not run as a Postponed row.
func (j *job) postpone(ctx workflow.Context, nominal time.Time, reason string) {
	observePostponed(ctx, j.key, nominal, reason)
	j.pending.rows = append(j.pending.rows, jobs.HistoryRow{
		ExpectedExecutionTime: nominal, ActionName: jobs.MainAction,
		Status: jobs.ExecutionPostponed, Message: reason, RepeatCount: j.status().ExecutionCount + j.running,
	})
}

// count applies an occurrence that ended to the status
// (docs/architecture.md, "Failure semantics": executionCount counts runs,
// failureCount failed attempts, faultedCount runs whose main action failed
// after all retries), takes its rows, and faults the job when its rules
// say.
func (j *job) count(e ended) {
	j.pending.rows = append(j.pending.rows, e.rows...)
	j.local.outcome = e.result.Status
	st := j.status()
	st.ExecutionCount++
	st.LastExecutionTime = &e.started
	st.FailureCount += e.result.FailedAttempts
	if !e.result.Faulted {
		j.state.ConsecutiveFaults = 0
		return
	}
	st.FaultedCount++
	j.state.ConsecutiveFaults++
	p := &j.state.Job.Properties
	switch {
	case e.kind != scheduled:
	case p.Recurrence == nil:
		p.State, p.StateReason = jobs.Faulted, "its one run failed after its retries"
		j.revise()
		j.setNext(nil)
	case p.MaxConsecutiveFaults > 0 && j.state.ConsecutiveFaults >= p.MaxConsecutiveFaults:
		p.State = jobs.Faulted
		p.StateReason = fmt.Sprintf("%d runs in a row failed after their retries (maxConsecutiveFaults)", j.state.ConsecutiveFaults)
		j.revise()
		j.setNext(nil)
	}
}

// settle completes an enabled job that has nothing left to run.
func (j *job) settle() {
	p := &j.state.Job.Properties
	if p.State == jobs.Enabled && j.state.Next == nil && j.running == 0 && j.state.Buffered == nil && len(j.state.Backfill) == 0 {
		p.State = jobs.Completed
		j.revise()
	}
}

// revise gives the definition its next revision and ETag: it changed.
func (j *job) revise() {
	j.state.Revision++
	j.state.Job.ETag = jobs.NewETag(j.firstRun, j.state.Revision)
}

// etag is the job's ETag, empty when it does not exist.
func (j *job) etag() string {
	if j.state == nil || j.local.deleted {
		return ""
	}
	return j.state.Job.ETag
}

func (j *job) status() *jobs.Status {
	p := &j.state.Job.Properties
	if p.Status == nil {
		p.Status = &jobs.Status{}
	}
	return p.Status
}

func (j *job) setNext(next *time.Time) {
	j.state.Next = next
	j.status().NextExecutionTime = next
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
