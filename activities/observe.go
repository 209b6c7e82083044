package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"

	"github.com/recurhq/recur/jobs"
)

// MetricActionDuration is the histogram of action attempts' durations,
// labelled by outcome (succeeded or failed) and, by the SDK, the activity
// type. It is emitted through activity.GetMetricsHandler, into the
// worker client's metrics handler.
const MetricActionDuration = "recur_action_duration_seconds"

// begin starts an attempt: its logger names the job and the occurrence
// (its idempotency key), and end records how long the attempt took and
// whether it succeeded.
func begin(ctx context.Context, key jobs.Key, occurrenceID, actionName string) (logger log.Logger, end func(error)) {
	started := time.Now()
	logger = log.With(activity.GetLogger(ctx), "jobId", key.JobWorkflowID(), "occurrenceId", occurrenceID, "action", actionName)
	return logger, func(err error) {
		outcome := "succeeded"
		if err != nil {
			outcome = "failed"
		}
		activity.GetMetricsHandler(ctx).WithTags(map[string]string{"outcome": outcome}).
			Timer(MetricActionDuration).Record(time.Since(started))
	}
}
