package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// retention is what a finished job knows of its own end.
type retention struct {
	known bool      // asked since the job last finished
	until time.Time // when it deletes itself; zero to keep it
}

// pending reports whether a job that finishes has its retention still to
// ask or to wait out.
func (r retention) pending() bool { return !r.known || !r.until.IsZero() }

// finished reports whether the job has ended for good, its last run too.
func (j *job) finished() bool {
	if j.state == nil {
		return false
	}
	st := j.state.Job.Properties.State
	return (st == jobs.Completed || st == jobs.Faulted) && j.running == 0
}

// expiry returns when the finished job deletes itself, if it does: its
// finish time plus the retention the worker says, asked once per finish.
func (j *job) expiry(ctx workflow.Context) (time.Time, bool) {
	if !j.finished() {
		return time.Time{}, false
	}
	if !j.retention.known {
		j.retention.known = true
		if workflow.GetVersion(ctx, changeFinishedRetention, workflow.DefaultVersion, 1) >= 1 {
			if j.state.Finished == nil {
				now := workflow.Now(ctx)
				j.state.Finished = &now
			}
			if d := finishedRetention(ctx); d > 0 {
				j.retention.until = j.state.Finished.Add(d)
			}
		}
	}
	return j.retention.until, !j.retention.until.IsZero()
}

// finishedRetention asks the worker how long finished jobs are kept; when
// it cannot say, the job is kept.
func finishedRetention(ctx workflow.Context) time.Duration {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{ScheduleToCloseTimeout: time.Minute})
	var d time.Duration
	if err := workflow.ExecuteLocalActivity(lctx, jobs.FinishedRetentionActivity).Get(ctx, &d); err != nil {
		workflow.GetLogger(ctx).Error("finished job retention; the job is kept", "error", err)
		return 0
	}
	return d
}

// expire deletes a finished job past its retention: its collection
// forgets it (its quota slot is free again), its workflow ends. Its runs'
// history rows stay until the namespace's retention, as a deleted job's.
func (j *job) expire(ctx workflow.Context) {
	err := workflow.SignalExternalWorkflow(ctx, j.key.CollectionWorkflowID(), "", jobs.SignalJobGone,
		jobs.JobGoneSignal{Job: j.key.Job}).Get(ctx, nil)
	if err != nil {
		// The collection is gone (deleted meanwhile): nothing to forget.
		workflow.GetLogger(ctx).Warn("tell the collection the job is gone", "error", err)
	}
	j.deleted = true
	j.generation++
}
