package activities

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/tracing"
)

// MetricActionDuration is the histogram of action attempts' durations,
// labelled by outcome (succeeded or failed) and, by the SDK, the activity
// type. It is emitted through activity.GetMetricsHandler, into the
// worker client's metrics handler.
const MetricActionDuration = "recur_action_duration_seconds"

// begin starts an attempt: its logger names the job and the occurrence
// (its idempotency key), and end records how long the attempt took and
// whether it succeeded. With a.Tracer, the attempt is a span of its
// occurrence's trace, which the returned context carries.
func (a *Activities) begin(ctx context.Context, key jobs.Key, occurrenceID, actionName string) (_ context.Context, logger log.Logger, end func(error)) {
	started := time.Now()
	logger = log.With(activity.GetLogger(ctx), "jobId", key.JobWorkflowID(), "occurrenceId", occurrenceID, "action", actionName)
	var span trace.Span // nil: not traced
	if a.Tracer != nil {
		info := activity.GetInfo(ctx)
		ctx, span = a.Tracer.Start(tracing.InOccurrence(ctx, occurrenceID), "attempt", trace.WithAttributes(
			tracing.AttrJob.String(key.JobWorkflowID()), tracing.AttrOccurrence.String(occurrenceID),
			tracing.AttrAction.String(actionName), tracing.AttrActionType.String(info.ActivityType.Name),
			tracing.AttrAttempt.Int(int(info.Attempt))))
	}
	return ctx, logger, func(err error) {
		outcome := "succeeded"
		if err != nil {
			outcome = "failed"
		}
		activity.GetMetricsHandler(ctx).WithTags(map[string]string{"outcome": outcome}).
			Timer(MetricActionDuration).Record(time.Since(started))
		if span != nil {
			endSpan(span, err)
		}
	}
}

// endSpan ends span, failed when err is: its status says the failure's
// type (HttpStatus, HttpTransport...), never its message, which may quote
// what a target answered.
func endSpan(span trace.Span, err error) {
	if err != nil {
		what := "failed"
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) {
			what = appErr.Type()
		}
		span.SetStatus(codes.Error, what)
	}
	span.End()
}
