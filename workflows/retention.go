package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// retention is what a finished job knows of its own end.
type retention struct {
	known bool      // asked once the job finished (it stays finished)
	until time.Time // when it deletes itself; zero to keep it
}

// finished reports whether the job has ended for good, its last run too.
func (j *job) finished() bool {
	if j.state == nil {
		return false
	}
	st := j.state.Job.Properties.State
	return (st == jobs.Completed || st == jobs.Faulted) && j.running == 0
}

// retain notes when a finished job deletes itself: its finish time plus
// the retention the worker says. step calls it once the job is finished,
// when the planner says (plan.retain), so that the planner only reads
// j.local.retention.
func (j *job) retain(ctx workflow.Context) {
	j.local.retention.known = true
	if j.state.Finished == nil {
		now := workflow.Now(ctx)
		j.state.Finished = &now
	}
	if d := finishedRetention(ctx); d > 0 {
		j.local.retention.until = j.state.Finished.Add(d)
	}
}

// expiry returns when the finished job deletes itself, if it does: what
// retain noted, while the job is finished (a run now of a finished job
// keeps it until the run ends).
func (j *job) expiry() (time.Time, bool) {
	if !j.finished() || j.local.retention.until.IsZero() {
		return time.Time{}, false
	}
	return j.local.retention.until, true
}

// finishedRetention asks the worker how long finished jobs are kept; when
// it cannot say, the job is kept.
func finishedRetention(ctx workflow.Context) time.Duration {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{ScheduleToCloseTimeout: time.Minute})
	var d time.Duration
	if err := workflow.ExecuteLocalActivity(lctx, acts.FinishedJobRetention).Get(ctx, &d); err != nil {
		workflow.GetLogger(ctx).Error("finished job retention; the job is kept", "error", err)
		return 0
	}
	return d
}

// expire deletes a finished job past its retention: its collection
// forgets it as the workflow ends (its quota slot is free again). Its
// history rows stay until the namespace's retention, as a deleted job's.
func (j *job) expire() {
	j.local.deleted = true
}
