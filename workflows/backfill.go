package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/lifecycle"
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
	if err := j.m.IsDefined(); err != nil {
		return wire(err)
	}
	if err := j.m.Redefinable(); err != nil {
		return wire(err)
	}
	if err := j.m.Backfillable(0, j.collectionDisabled()); err != nil {
		return wire(err)
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
	st := j.state()
	err := sideEffect(ctx, st.Job.Properties.Schedule(), st.Created, &times, func(r *recurrence.Rule) any {
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
	if err := j.m.Backfillable(len(times), j.collectionDisabled()); err != nil {
		return jobs.BackfillResult{}, wire(err)
	}
	if err := j.event(ctx, lifecycle.BackfillQueued{Times: times, Pace: req.Pace}); err != nil {
		return jobs.BackfillResult{}, err
	}
	j.world.ctx = ctx
	return jobs.BackfillResult{Queued: len(times), LastRunTime: j.m.LastBackfillStart(workflow.Now(ctx), j.m.Pace())}, nil
}
