package workflows

import (
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// Series the run workflow emits through workflow.GetMetricsHandler, which
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
func observeStart(ctx workflow.Context, in jobs.RunInput) {
	m := workflow.GetMetricsHandler(ctx)
	m.Counter(MetricOccurrences).Inc(1)
	m.Timer(MetricLateness).Record(max(workflow.Now(ctx).Sub(in.Nominal), 0))
}

// observeEnd counts a run's failed attempts and fault, and logs its
// outcome with the job and occurrence IDs.
func observeEnd(ctx workflow.Context, in jobs.RunInput, r jobs.RunResult) {
	m := workflow.GetMetricsHandler(ctx)
	if r.FailedAttempts > 0 {
		m.Counter(MetricFailures).Inc(int64(r.FailedAttempts))
	}
	if r.Faulted {
		m.Counter(MetricFaults).Inc(1)
	}
	runLogger(ctx, in).Info("occurrence ran", "status", r.Status, "attempts", r.Attempts, "httpStatus", r.HTTPStatus)
}

// observePostponed counts an occurrence recorded as Postponed.
func observePostponed(ctx workflow.Context, in jobs.RunInput) {
	workflow.GetMetricsHandler(ctx).Counter(MetricPostponed).Inc(int64(1 + in.Folded))
	runLogger(ctx, in).Info("occurrence postponed", "reason", in.Postponed, "folded", in.Folded)
}

// runLogger is the run workflow's logger with the job's and the
// occurrence's IDs (the run workflow's own), as activities log them.
func runLogger(ctx workflow.Context, in jobs.RunInput) log.Logger {
	return log.With(workflow.GetLogger(ctx),
		"jobId", in.Key.JobWorkflowID(), "occurrenceId", workflow.GetInfo(ctx).WorkflowExecution.ID,
		"nominal", in.Nominal.UTC().Format(time.RFC3339))
}
