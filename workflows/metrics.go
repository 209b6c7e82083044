package workflows

import (
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/lifecycle"
)

// Series the job workflow emits through workflow.GetMetricsHandler, which
// drops them while a history replays: each occurrence counts once. The
// SDK adds namespace, task_queue and workflow_type labels; recur adds at
// most the job's collection (worker.CollectionLabel, when the operator
// opts in) and never the job, so that the series stay few whatever the
// number of jobs.
const (
	MetricOccurrences = "recur_occurrences_total"           // occurrences whose action ran
	MetricRuns        = "recur_runs_total"                  // runs that ended, by outcome (Outcome*)
	MetricFailures    = "recur_occurrence_failures_total"   // failed attempts of main actions (failureCount)
	MetricFaults      = "recur_occurrence_faults_total"     // main actions that failed for good (faultedCount)
	MetricPostponed   = "recur_occurrences_postponed_total" // not run: a run still ran (overlapPolicy, maxConcurrentRuns)
	MetricMissed      = "recur_occurrences_missed_total"    // not run: past the catch-up window, recur down or behind
	MetricLateness    = "recur_fire_lateness_seconds"       // a run's start minus its planned start (nominal time plus jitter), backfills left out
)

// Outcomes of a run, the values of MetricRuns's outcome label.
const (
	OutcomeCompleted = "completed" // the main action succeeded, after retries or not
	OutcomeFailed    = "failed"    // the main action failed after its retries (a fault)
	OutcomeCancelled = "cancelled" // its job was deleted while it ran
)

// observeStart counts an occurrence whose action is about to run and how
// late it starts: after the start its jitter gave it, which is on time,
// not after its nominal time. A backfill or a re-run runs a past
// occurrence on purpose and is never late.
func observeStart(ctx workflow.Context, o occurrence) {
	m := workflow.GetMetricsHandler(ctx)
	m.Counter(MetricOccurrences).Inc(1)
	if o.Kind != lifecycle.Backfill && o.Kind != lifecycle.Rerun {
		m.Timer(MetricLateness).Record(max(workflow.Now(ctx).Sub(o.PlannedStart), 0))
	}
}

// observeEnd counts a run by its outcome, its failed attempts and fault,
// and logs its outcome with the job and occurrence IDs.
func observeEnd(ctx workflow.Context, o occurrence, r jobs.RunResult) {
	m := workflow.GetMetricsHandler(ctx)
	outcome := OutcomeCompleted
	if r.Faulted {
		outcome = OutcomeFailed
	}
	m.WithTags(map[string]string{"outcome": outcome}).Counter(MetricRuns).Inc(1)
	if r.FailedAttempts > 0 {
		m.Counter(MetricFailures).Inc(int64(r.FailedAttempts))
	}
	if r.Faulted {
		m.Counter(MetricFaults).Inc(1)
	}
	occurrenceLogger(ctx, o.key, o.ID, o.Nominal).Info("occurrence ran", "status", r.Status, "attempts", r.Attempts, "httpStatus", r.HTTPStatus)
}

// observeCancelled counts a run its job's deletion cancelled.
func observeCancelled(ctx workflow.Context, o occurrence) {
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"outcome": OutcomeCancelled}).Counter(MetricRuns).Inc(1)
	occurrenceLogger(ctx, o.key, o.ID, o.Nominal).Info("occurrence cancelled: its job was deleted")
}

// observePostponed counts an occurrence recorded as Postponed, as
// postponed or missed as why says.
func observePostponed(ctx workflow.Context, k jobs.Key, nominal time.Time, why lifecycle.Why, reason string) {
	if why == lifecycle.Missed {
		observeMissed(ctx, 1)
	} else {
		workflow.GetMetricsHandler(ctx).Counter(MetricPostponed).Inc(1)
	}
	occurrenceLogger(ctx, k, jobs.OccurrenceID(k.JobWorkflowID(), nominal), nominal).Info("occurrence postponed", "reason", reason)
}

// observeMissed counts n occurrences missed, those a catch-up lists in no
// row of their own included.
func observeMissed(ctx workflow.Context, n int) {
	workflow.GetMetricsHandler(ctx).Counter(MetricMissed).Inc(int64(n))
}

// occurrenceLogger is the job workflow's logger with the job's and the
// occurrence's IDs, as activities log them.
func occurrenceLogger(ctx workflow.Context, k jobs.Key, id string, nominal time.Time) log.Logger {
	return log.With(workflow.GetLogger(ctx),
		"jobId", k.JobWorkflowID(), "occurrenceId", id, "nominal", nominal.UTC().Format(time.RFC3339))
}
