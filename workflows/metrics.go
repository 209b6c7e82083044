package workflows

import (
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// Series the job workflow emits through workflow.GetMetricsHandler, which
// drops them while a history replays: each occurrence counts once. The
// SDK adds namespace, task_queue and workflow_type labels; recur adds
// none, so that the series stay few whatever the number of jobs.
const (
	MetricOccurrences = "recur_occurrences_total"           // occurrences whose action ran
	MetricFailures    = "recur_occurrence_failures_total"   // failed attempts of main actions (failureCount)
	MetricFaults      = "recur_occurrence_faults_total"     // main actions that failed for good (faultedCount)
	MetricPostponed   = "recur_occurrences_postponed_total" // occurrences recorded as Postponed, not run
	MetricLateness    = "recur_fire_lateness_seconds"       // a run's start minus its nominal time
)

// observeStart counts an occurrence whose action is about to run and how
// late it starts.
func observeStart(ctx workflow.Context, o occurrence) {
	m := workflow.GetMetricsHandler(ctx)
	m.Counter(MetricOccurrences).Inc(1)
	m.Timer(MetricLateness).Record(max(workflow.Now(ctx).Sub(o.nominal), 0))
}

// observeEnd counts a run's failed attempts and fault, and logs its
// outcome with the job and occurrence IDs.
func observeEnd(ctx workflow.Context, o occurrence, r jobs.RunResult) {
	m := workflow.GetMetricsHandler(ctx)
	if r.FailedAttempts > 0 {
		m.Counter(MetricFailures).Inc(int64(r.FailedAttempts))
	}
	if r.Faulted {
		m.Counter(MetricFaults).Inc(1)
	}
	occurrenceLogger(ctx, o.key, o.id, o.nominal).Info("occurrence ran", "status", r.Status, "attempts", r.Attempts, "httpStatus", r.HTTPStatus)
}

// observePostponed counts an occurrence recorded as Postponed.
func observePostponed(ctx workflow.Context, k jobs.Key, nominal time.Time, reason string) {
	workflow.GetMetricsHandler(ctx).Counter(MetricPostponed).Inc(1)
	occurrenceLogger(ctx, k, jobs.OccurrenceID(k.JobWorkflowID(), nominal), nominal).Info("occurrence postponed", "reason", reason)
}

// occurrenceLogger is the job workflow's logger with the job's and the
// occurrence's IDs, as activities log them.
func occurrenceLogger(ctx workflow.Context, k jobs.Key, id string, nominal time.Time) log.Logger {
	return log.With(workflow.GetLogger(ctx),
		"jobId", k.JobWorkflowID(), "occurrenceId", id, "nominal", nominal.UTC().Format(time.RFC3339))
}
