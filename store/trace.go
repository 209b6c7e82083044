package store

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/recurhq/recur/tracing"
)

// changed records on ctx's span, when it records, that the call changed
// the run of workflowID: the trace of a write names what it wrote to.
func changed(ctx context.Context, workflowID, runID string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("changed", trace.WithAttributes(tracing.AttrWorkflow.String(workflowID), tracing.AttrRun.String(runID)))
	}
}
