package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// A backfill runs the job's occurrences of a past range with their own
// nominal times, so under the same idempotency keys as had they run on
// time. They run one at a time (or up to maxConcurrentRuns) when no
// occurrence of the schedule needs the slot, count in the status but not
// toward the recurrence's count, and their history rows say backfill.
// Only an enabled job runs them: a job disabled (or whose collection is)
// refuses a backfill, and holds the occurrences queued before until it is
// enabled again.

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
		out := []time.Time{}
		if r == nil {
			return out
		}
		// Past occurrences may come before the rule's first run: the
		// occurrence set reaches back to the anchor.
		for t, ok := r.Next(req.StartTime.Add(-time.Nanosecond)); ok && !t.After(req.EndTime); t, ok = r.Next(t) {
			if len(out) == jobs.MaxBackfill {
				return append(out, t) // one too many: refused below
			}
			out = append(out, t)
		}
		return out
	})
	if err != nil {
		return jobs.BackfillResult{}, err
	}
	if len(times) > jobs.MaxBackfill {
		return jobs.BackfillResult{}, invalidBackfill(fmt.Sprintf("the range holds more than %d occurrences: backfill a shorter one", jobs.MaxBackfill))
	}
	// The job may have changed since the validator let the backfill in.
	if err := j.backfillable(len(times)); err != nil {
		return jobs.BackfillResult{}, err
	}
	if err := j.apply(ctx, backfilling{times: times}); err != nil {
		return jobs.BackfillResult{}, err
	}
	return jobs.BackfillResult{Queued: len(times)}, nil
}

// startBackfill starts the first queued backfill occurrence.
func (j *job) startBackfill(ctx workflow.Context) {
	next := j.state.Backfill[0]
	j.state.Backfill = j.state.Backfill[1:]
	j.startRun(ctx, next, backfill)
}
