package workflows

import (
	"cmp"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// A backfill runs the job's occurrences of a past range with their own
// nominal times, so under the same idempotency keys as had they run on
// time. They run one at a time (or up to maxConcurrentRuns) when no
// occurrence of the schedule needs the slot, a pace apart (the least time
// between two starts, the operator's), count in the status but not
// toward the recurrence's count, and their history rows say backfill.
// Only an enabled job runs them: a job disabled (or whose collection is)
// refuses a backfill, and holds the occurrences queued before, those
// waiting out their pace included, until it is enabled again; a deleted
// job drops them.

// validateBackfill refuses a backfill of a job that does not exist, has
// ended, is disabled or holds a full queue, and a range that is not a
// past one.
func (j *job) validateBackfill(ctx workflow.Context, req jobs.BackfillRequest) error {
	if err := j.defined(); err != nil {
		return err
	}
	if err := j.redefinable(); err != nil {
		return err
	}
	if err := j.backfillable(0); err != nil {
		return err
	}
	switch {
	case req.StartTime.IsZero() || req.EndTime.IsZero():
		return invalidBackfill("startTime and endTime are required")
	case req.EndTime.Before(req.StartTime):
		return invalidBackfill(fmt.Sprintf("endTime %s is before startTime %s", req.EndTime.Format(time.RFC3339), req.StartTime.Format(time.RFC3339)))
	case req.EndTime.After(workflow.Now(ctx)):
		return invalidBackfill("endTime " + req.EndTime.Format(time.RFC3339) + " is in the future: a backfill runs past occurrences")
	}
	return nil
}

// backfillable refuses a backfill of n more occurrences (0 when not yet
// known) of a job that is disabled, whose collection is, or whose queue
// would pass jobs.MaxQueuedBackfill.
func (j *job) backfillable(n int) error {
	conflict := func(message string) error {
		return (&jobs.Error{Code: jobs.CodeConflict, Message: message}).ToApplicationError()
	}
	switch queued := len(j.state.Backfill); {
	case j.collectionDisabled():
		return conflict("job collection " + j.key.Collection + " is disabled: enable it before a backfill of job " + j.key.Job)
	case j.state.Job.Properties.State == jobs.Disabled:
		return conflict("job " + j.key.Job + " is disabled: enable it before a backfill")
	case queued+max(n, 1) > jobs.MaxQueuedBackfill:
		return conflict(fmt.Sprintf("job %s holds %d backfill occurrences queued, and at most %d may wait: backfill again once they have run",
			j.key.Job, queued, jobs.MaxQueuedBackfill))
	}
	return nil
}

// collectionDisabled reports whether the job's collection is disabled, as
// the job last heard.
func (j *job) collectionDisabled() bool {
	return j.admission.terms != nil && j.admission.terms.Disabled
}

func invalidBackfill(message string) error {
	return (&jobs.Error{Code: jobs.CodeInvalidRequest, Message: message}).ToApplicationError()
}

// backfillQueue queues the occurrences in the request's range, at
// most jobs.MaxBackfill, and answers how many.
func (j *job) backfillQueue(ctx workflow.Context, req jobs.BackfillRequest) (jobs.BackfillResult, error) {
	var times []time.Time
	err := j.sideEffect(ctx, &times, func(r *recurrence.Rule) any {
		return jobs.BackfillTimes(r, req.StartTime, req.EndTime)
	})
	if err != nil {
		return jobs.BackfillResult{}, err
	}
	if len(times) > jobs.MaxBackfill {
		return jobs.BackfillResult{}, jobs.TooLongBackfill().ToApplicationError()
	}
	if b := req.Budget; b != nil && len(times) > *b {
		return jobs.BackfillResult{}, (&jobs.Error{Code: jobs.CodeConflict,
			Message: "job " + j.key.Job + " was redefined while its backfill was counted: send the backfill again"}).ToApplicationError()
	}
	// The job may have changed since the validator let the backfill in.
	if err := j.backfillable(len(times)); err != nil {
		return jobs.BackfillResult{}, err
	}
	if err := j.apply(ctx, backfilling{times: times, pace: req.Pace}); err != nil {
		return jobs.BackfillResult{}, err
	}
	return jobs.BackfillResult{Queued: len(times), LastRunTime: j.lastBackfillStart(workflow.Now(ctx), j.pace(ctx))}, nil
}

// startBackfill starts the first queued backfill occurrence; the next
// may start a pace later.
func (j *job) startBackfill(ctx workflow.Context) {
	next := j.state.Backfill[0]
	j.state.Backfill = j.state.Backfill[1:]
	if pace := j.pace(ctx); pace > 0 {
		notBefore := workflow.Now(ctx).Add(pace)
		j.state.BackfillNotBefore = &notBefore
	}
	j.startRun(ctx, next, backfill)
}

// pace is the least time between two backfill starts: the one of the
// backfill last queued, and none in the histories recorded before
// backfills were paced.
func (j *job) pace(ctx workflow.Context) time.Duration {
	if workflow.GetVersion(ctx, versionBackfillPace, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return 0
	}
	return cmp.Or(j.state.BackfillPace, jobs.DefaultBackfillPace)
}

// backfillPaced reports whether the pace lets the next backfill
// occurrence start now; come (the planner's) wakes the loop when it will.
func (j *job) backfillPaced(come func(time.Time) bool) bool {
	return j.state.BackfillNotBefore == nil || come(*j.state.BackfillNotBefore)
}

// lastBackfillStart is the earliest start of the last occurrence queued,
// at now: from the next start the pace allows, one pace after another;
// nil when none is queued.
func (j *job) lastBackfillStart(now time.Time, pace time.Duration) *time.Time {
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
