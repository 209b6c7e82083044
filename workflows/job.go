package workflows

import (
	"cmp"
	"errors"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/lifecycle"
)

// Job is the workflow of one job. It sleeps on a durable timer until the
// next occurrence and runs the job's action as activities of its own,
// the error action after it when it fails for good; each occurrence writes
// its history rows and the job's status to the memo in the task that took
// its end. Nominal times come from the recurrence engine, never
// from when a run actually happened.
//
// The job's state is a lifecycle.Job, which alone changes it: the
// workflow feeds it events (what a message did, a run that ended, time
// passing) and carries out the effects it returns. The workflow is one
// loop (job.loop): message handlers apply the event a message makes,
// which the job's state shows at once (a write's answer shows it); step
// has the machine act on what it was told and on all that is due, flush
// writes what changed, and sleep waits until the wake-up the machine
// names.
func Job(ctx workflow.Context, in jobs.JobInput) error {
	origin := cmp.Or(in.Origin, workflow.GetInfo(ctx).FirstRunID)
	grace := workflow.GetInfo(ctx).WorkflowStartTime.Add(undefinedGrace)
	j := &job{key: in.Key}
	_, j.memo.failure = workflow.GetInfo(ctx).Memo.GetFields()[jobs.MemoFailures]
	j.m = lifecycle.New(in.Key, origin, grace, in.State, &j.world)
	if in.Admission != nil {
		j.startedDefined(*in.Admission)
	}
	return j.loop(ctx)
}

type job struct {
	key   jobs.Key
	m     *lifecycle.Job // the job's state, which only its Apply changes
	world world          // what m asks while it applies an event
	// The job's exchange with its collection (admission.go), kept by its
	// own methods.
	admission admission
	rows      []jobs.HistoryRow // history rows not yet written
	failures  []jobs.Failure    // failure records not yet written, with their rows
	// The runs in flight, which a deletion cancels.
	runs       workflow.Context
	cancelRuns workflow.CancelFunc
	memo       memo  // what the memo holds (memo.go)
	timer      timer // the durable timer of the next wake-up
}

// state is the job's state, nil until the first PUT.
func (j *job) state() *jobs.JobState { return j.m.State() }

// apply has the machine apply e in ctx's coroutine and carries out its
// effects. It returns the wake-up the machine names, if it named one.
func (j *job) apply(ctx workflow.Context, e lifecycle.Event) (wake time.Time, err error) {
	for {
		j.world.ctx = ctx
		effects, err := j.m.Apply(e)
		if err != nil {
			return time.Time{}, err
		}
		ask := false
		for _, f := range effects {
			switch f := f.(type) {
			case lifecycle.Start:
				j.startRun(ctx, f)
			case lifecycle.CancelRuns:
				j.cancelRuns()
			case lifecycle.Record:
				j.rows = append(j.rows, f.Rows...)
				if f.Failure != nil {
					j.failures = append(j.failures, *f.Failure)
				}
			case lifecycle.NotRun:
				observePostponed(ctx, j.key, f.Nominal, f.Why, f.Reason)
			case lifecycle.Skipped:
				observeMissed(ctx, f.N)
			case lifecycle.Defect:
				workflow.GetLogger(ctx).Error(f.Message, f.Args...)
			case lifecycle.AskRetention:
				ask = true
			case lifecycle.Wake:
				wake = f.At
			}
		}
		if !ask {
			return wake, nil
		}
		keep := finishedRetention(ctx)
		e = lifecycle.RetentionKnown{Moment: j.moment(ctx), Keep: keep}
	}
}

func (j *job) moment(ctx workflow.Context) lifecycle.Moment {
	return lifecycle.Moment{
		Now:                workflow.Now(ctx),
		ContinueAsNew:      workflow.GetInfo(ctx).GetContinueAsNewSuggested(),
		HandlersFinished:   workflow.AllHandlersFinished(ctx),
		CollectionDisabled: j.collectionDisabled(),
	}
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

// pending reports whether the loop has work left: the machine was told
// something it has yet to act on, or rows wait to be written.
func (j *job) pending() bool {
	return j.m.Pending() || len(j.rows) > 0
}

// errDeleted ends the loop of a deleted job.
var errDeleted = errors.New("job deleted")

func (j *job) loop(ctx workflow.Context) error {
	if err := j.register(ctx); err != nil {
		return err
	}
	for {
		wake, err := j.step(ctx)
		if err != nil {
			return err
		}
		j.flush(ctx)
		end := j.ending(ctx)
		if end != nil && j.idle(ctx) && !j.m.Held(workflow.Now(ctx)) {
			if errors.Is(end, errDeleted) {
				j.leave(ctx)
				return nil
			}
			return end
		}
		if err := j.sleep(ctx, wake, end != nil); err != nil {
			return err
		}
	}
}

// step has the machine act on what it was told and on what is due
// (lifecycle.Step), and returns the wake-up it names.
//
// An action may start in the task that accepted the update asking for it
// (a run now, a PUT whose first occurrence is due at once, a backfill):
// its activity is a command of that task, which Temporal records together
// with the update's acceptance or not at all.
func (j *job) step(ctx workflow.Context) (time.Time, error) {
	return j.apply(ctx, lifecycle.Step{Moment: j.moment(ctx)})
}

// ending returns how the workflow ends once it is idle: errDeleted, a
// continue-as-new, or nil while it goes on.
func (j *job) ending(ctx workflow.Context) error {
	switch {
	case j.m.Deleted():
		return errDeleted
	case j.m.Over(j.moment(ctx)):
		return workflow.NewContinueAsNewError(ctx, jobs.JobWorkflowName, jobs.JobInput{Key: j.key, State: j.state(), Origin: j.m.Origin()})
	}
	return nil
}

// idle reports whether nothing is in flight: no action runs, no message
// handler runs and nothing is pending, so the workflow may end.
func (j *job) idle(ctx workflow.Context) bool {
	return j.m.Running() == 0 && !j.pending() && workflow.AllHandlersFinished(ctx)
}

// sleep waits for pending work or the wake-up at wake; an ending workflow
// also wakes when it may end, and one never defined when it may give up
// its name (Plan.Abandon), once its last PUT's handler has ended. It
// always blocks: the machine's wake-up is after now, and step has done
// all that was due.
func (j *job) sleep(ctx workflow.Context, wake time.Time, ending bool) error {
	j.timer.set(ctx, wake)
	return workflow.Await(ctx, func() bool {
		return j.pending() || j.timer.ready() || ending && j.idle(ctx) && !j.m.Held(workflow.Now(ctx)) ||
			j.m.Plan(j.moment(ctx)).Abandon
	})
}

// startRun runs an occurrence's actions in the background, and tells the
// machine when they end.
func (j *job) startRun(ctx workflow.Context, s lifecycle.Start) {
	o := occurrence{Run: s.Run, key: j.key, action: s.Action}
	if j.cancelRuns == nil {
		j.runs, j.cancelRuns = workflow.WithCancel(ctx)
	}
	workflow.Go(j.runs, func(ctx workflow.Context) {
		e := o.run(ctx)
		// A run's end changes only what the next step acts on: it has no
		// effects to carry out.
		_, _ = j.m.Apply(lifecycle.RunEnded{Ended: e})
	})
}
