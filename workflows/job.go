package workflows

import (
	"cmp"
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
// The workflow is one loop (job.loop): message handlers hand each change to
// apply, which makes it at once (a write's answer shows it) and leaves the
// rest in j.pending, as runs that end do; step does the pending work and
// all that the one planner (plan) says is due, flush writes what changed,
// and sleep waits until the wake-up the planner names.
func Job(ctx workflow.Context, in jobs.JobInput) error {
	j := &job{key: in.Key, state: in.State, firstRun: cmp.Or(in.Origin, workflow.GetInfo(ctx).FirstRunID),
		graceEnd: workflow.GetInfo(ctx).WorkflowStartTime.Add(undefinedGrace)}
	if in.Admission != nil {
		j.startedDefined(*in.Admission)
	}
	return j.loop(ctx)
}

type job struct {
	key      jobs.Key
	firstRun string         // the origin of its ETags: the first run ID of the workflow's chain, or the API's (JobInput.Origin)
	graceEnd time.Time      // when a job never defined gives up its name (undefinedGrace)
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
// a timer only when the wake-up changed. at is the planner's wake-up,
// after now.
func (t *timer) set(ctx workflow.Context, at time.Time) {
	if t.fired != nil && (t.fired.IsReady() || !t.at.Equal(at)) {
		t.cancel() // a no-op once fired; free while its command is unsent
		*t = timer{}
	}
	if at.IsZero() || t.fired != nil {
		return
	}
	tctx, cancel := workflow.WithCancel(ctx)
	*t = timer{at: at, fired: workflow.NewTimer(tctx, at.Sub(workflow.Now(ctx))), cancel: cancel}
}

func (t *timer) ready() bool { return t.fired != nil && t.fired.IsReady() }

// pending is the work the loop has been left and not yet done.
type pending struct {
	runsNow []time.Time       // runs now answered, not yet started (their nominal times)
	ended   []ended           // occurrences whose actions ended, not yet counted
	rows    []jobs.HistoryRow // history rows not yet written
	applied bool              // apply changed the definition or the state
}

func (p *pending) any() bool {
	return len(p.runsNow) > 0 || len(p.ended) > 0 || len(p.rows) > 0 || p.applied
}

// errDeleted ends the loop of a deleted job.
var errDeleted = errors.New("job deleted")

func (j *job) loop(ctx workflow.Context) error {
	if err := j.register(ctx); err != nil {
		return err
	}
	for {
		p, err := j.step(ctx)
		if err != nil {
			return err
		}
		j.flush(ctx)
		end := j.ending(ctx)
		if end != nil && j.idle(ctx) && !j.held(workflow.Now(ctx)) {
			if errors.Is(end, errDeleted) {
				j.leave(ctx)
				return nil
			}
			return end
		}
		if err := j.sleep(ctx, p.wake, end != nil); err != nil {
			return err
		}
	}
}

// step does the pending work: it counts the occurrences that ended,
// starts the runs now and cancels the runs of a job deleted; then it acts
// on what the planner says is due, one thing at a time, until nothing is,
// and returns the plan that says when to wake up. Each act takes away
// what made it due (the buffered occurrence, the next occurrence, which
// takeDue moves past, a queued backfill occurrence, the enabled state, the
// retention still to ask, the job itself), so the loop ends.
//
// An action may start in the task that accepted the update asking for it
// (a run now, a PUT whose first occurrence is due at once, a backfill):
// its activity is a command of that task, which Temporal records together
// with the update's acceptance or not at all.
func (j *job) step(ctx workflow.Context) (plan, error) {
	work := &j.pending
	work.applied = false
	for _, e := range work.ended {
		j.count(e)
	}
	work.ended = nil
	for _, at := range work.runsNow {
		j.startRun(ctx, at, runNow)
	}
	work.runsNow = nil
	if j.local.deleted && j.running > 0 {
		j.cancelRuns() // nothing more reaches the targets of a job that is gone
	}
	for {
		// In this order: a buffered occurrence before the schedule's
		// next, which comes before a backfill.
		switch p := j.plan(momentOf(ctx)); {
		case p.abandon:
			j.local.deleted = true // never defined
		case p.startBuffered:
			j.startBuffered(ctx)
		case p.takeNext:
			if err := j.takeDue(ctx, *j.state.Next); err != nil {
				return plan{}, err
			}
		case p.startBackfill:
			j.startBackfill(ctx)
		case p.settle:
			j.settle()
		case p.retain:
			j.retain(ctx)
		case p.expire:
			j.expire()
		default:
			return p, nil
		}
	}
}

// ending returns how the workflow ends once it is idle: errDeleted, a
// continue-as-new, or nil while it goes on.
func (j *job) ending(ctx workflow.Context) error {
	switch {
	case j.local.deleted:
		return errDeleted
	case j.over(momentOf(ctx)):
		return workflow.NewContinueAsNewError(ctx, jobs.JobWorkflowName, jobs.JobInput{Key: j.key, State: j.state, Origin: j.firstRun})
	}
	return nil
}

// idle reports whether nothing is in flight: no action runs, no message
// handler runs and nothing is pending, so the workflow may end.
func (j *job) idle(ctx workflow.Context) bool {
	return j.running == 0 && !j.pending.any() && workflow.AllHandlersFinished(ctx)
}

// sleep waits for pending work or the wake-up at wake; an ending workflow
// also wakes when it may end, and one never defined when it may give up
// its name (plan.abandon), once its last PUT's handler has ended. It
// always blocks: the planner's wake-up is after now, and step has done
// all that was due.
func (j *job) sleep(ctx workflow.Context, wake time.Time, ending bool) error {
	j.timer.set(ctx, wake)
	return workflow.Await(ctx, func() bool {
		return j.pending.any() || j.timer.ready() || ending && j.idle(ctx) && !j.held(workflow.Now(ctx)) ||
			j.plan(momentOf(ctx)).abandon
	})
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
// recorded as Postponed. Then it plans the next occurrence, always after
// nominal, or none.
func (j *job) takeDue(ctx workflow.Context, nominal time.Time) error {
	j.local.fired++
	now := workflow.Now(ctx)
	// An occurrence due within the last jitter may not have reached its
	// start yet: only those before are missed.
	jitter := j.state.Job.Properties.JitterDuration()
	caught, err := j.catchUp(ctx, nominal, now.Add(-jitter))
	if err != nil {
		return err
	}
	window := j.state.Job.Properties.CatchUp()
	for i, o := range caught.Due {
		if h := j.state.Handled; h != nil && !o.After(*h) {
			continue
		}
		j.state.Handled = &o
		switch last := i == len(caught.Due)-1; {
		case !last:
			reason := "missed: recur was down or too busy to run it on time; only the most recent missed occurrence may run"
			if i == len(caught.Due)-2 && caught.Skipped > 0 {
				reason = fmt.Sprintf("%s (the %d missed occurrences after it, up to the most recent, are not listed)", reason, caught.Skipped)
				observeMissed(ctx, caught.Skipped)
				j.countSkipped(caught.Skipped, caught.LastSkipped)
			}
			j.postpone(ctx, o, missed, reason)
		case now.Sub(j.jitteredStart(o)) > window:
			j.postpone(ctx, o, missed, fmt.Sprintf("missed by %s, more than the catch-up window of %s", now.Sub(j.jitteredStart(o)).Round(time.Second), window))
		default:
			j.runOrPostpone(ctx, o)
		}
	}
	if next := caught.Next; next != nil && !next.After(nominal) {
		// The engine plans each occurrence after the one before: one that
		// is not is its defect, which ends the schedule, as a rule that
		// stops compiling does, rather than take an occurrence again.
		workflow.GetLogger(ctx).Error(msgNoProgress, "nominal", nominal, "next", *next)
		caught.Next = nil
	}
	if c := j.countLimit(); c > 0 && j.state.Runs >= c {
		caught.Next = nil // the count is used up
	}
	j.setNext(caught.Next)
	return nil
}

// msgNoProgress is logged when the recurrence engine plans an occurrence
// that is not after the one before.
const msgNoProgress = "the recurrence engine planned an occurrence that is not after the one before; the schedule ends"

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
		j.postpone(ctx, nominal, overlapped, "the previous run was still running and another occurrence was already waiting for it")
	case p.MaxConcurrentRuns > 0:
		j.postpone(ctx, nominal, overlapped, fmt.Sprintf("%d runs were still running (maxConcurrentRuns)", j.running))
	default:
		j.postpone(ctx, nominal, overlapped, "the previous run was still running (overlapPolicy Skip)")
	}
}

// startBuffered starts the occurrence buffered behind a run that ended,
// unless the job was disabled meanwhile (by a write, its collection or its
// failures): a disabled job runs nothing, so the occurrence is postponed.
// Whatever enables the job again plans it anew (define), its count too.
func (j *job) startBuffered(ctx workflow.Context) {
	next := *j.state.Buffered
	j.state.Buffered = nil
	if j.state.Job.Properties.State != jobs.Enabled &&
		workflow.GetVersion(ctx, versionDisabledBuffered, workflow.DefaultVersion, 1) != workflow.DefaultVersion {
		j.postpone(ctx, next, overlapped, "the job was disabled while this occurrence waited for the run before it (overlapPolicy BufferOne)")
		return
	}
	j.startRun(ctx, next, scheduled)
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
	due := nominal
	if kind == scheduled {
		due = j.jitteredStart(nominal)
	}
	j.running++
	o := occurrence{key: j.key, id: id, nominal: nominal, due: due, action: *j.state.Job.Properties.Action,
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

// postpone records an occurrence that does not run as a Postponed row,
// and counts it in the metrics and the job's health; why says whether it
// was missed or postponed.
func (j *job) postpone(ctx workflow.Context, nominal time.Time, why notRun, reason string) {
	observePostponed(ctx, j.key, nominal, why, reason)
	j.countNotRun(nominal, why)
	j.pending.rows = append(j.pending.rows, jobs.HistoryRow{
		ExpectedExecutionTime: nominal, ActionName: jobs.MainAction,
		Status: jobs.ExecutionPostponed, Message: reason, RepeatCount: j.status().ExecutionCount + j.running,
	})
}

// count applies an occurrence that ended to the status
// (docs/architecture.md, "Failure semantics": executionCount counts runs,
// failureCount failed attempts, faultedCount runs whose main action failed
// after all retries) and to the job's health, takes its rows, and faults
// or disables the job when its rules say.
func (j *job) count(e ended) {
	j.pending.rows = append(j.pending.rows, e.rows...)
	j.local.outcome = e.result.Status
	st := j.status()
	st.ExecutionCount++
	st.LastExecutionTime = &e.started
	st.FailureCount += e.result.FailedAttempts
	if e.result.Faulted {
		j.fault(e)
	} else {
		j.state.ConsecutiveFaults = 0
	}
	// After fault: a run that reaches both maxConsecutiveFaults and
	// disableAfterFailures faults the job, which is final.
	j.countHealth(e)
}

// fault counts a run whose main action failed after all its retries, and
// faults the job when it was the one run of a one-time job, or the
// maxConsecutiveFaults-th of a recurring job in a row.
func (j *job) fault(e ended) {
	j.status().FaultedCount++
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
	if j.spent() {
		j.state.Job.Properties.State = jobs.Completed
		j.revise()
	}
}

// spent reports whether an enabled job has nothing left to run: no next
// occurrence, none running, buffered or queued for a backfill.
func (j *job) spent() bool {
	return j.state.Job.Properties.State == jobs.Enabled && j.state.Next == nil && j.running == 0 &&
		j.state.Buffered == nil && len(j.state.Backfill) == 0
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
