package tracing

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

const occurrence = "job:s/rg/c/j@2026-11-27T08:00:00Z"

// TestAnOccurrencesTraceIDIsDocumented: the trace ID is what docs/api.md
// says, computed here apart from ids.
func TestAnOccurrencesTraceIDIsDocumented(t *testing.T) {
	sum := sha256.Sum256([]byte("recur occurrence\x00" + occurrence))
	require.Equal(t, hex.EncodeToString(sum[:16]), TraceID(occurrence).String())
	require.NotEqual(t, TraceID(occurrence), TraceID(occurrence+"x"))
}

// TestTheOccurrenceSpanIsTheParentItsChildrenName: the span
// StartOccurrence exports has the IDs InOccurrence gives the spans of its
// attempts as their parent, whichever process starts them; other spans
// get random IDs.
func TestTheOccurrenceSpanIsTheParentItsChildrenName(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(IDGenerator()))
	defer func() { _ = tp.Shutdown(t.Context()) }()
	tracer := tp.Tracer(Scope)

	nominal := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	StartOccurrence(t.Context(), tracer, "job:s/rg/c/j", occurrence, nominal).End()
	_, child := tracer.Start(InOccurrence(t.Context(), occurrence), "attempt")
	child.End()
	_, other := tracer.Start(t.Context(), "elsewhere")
	other.End()

	spans := exp.GetSpans()
	require.Len(t, spans, 3)
	occ, attempt, elsewhere := spans[0], spans[1], spans[2]
	require.Equal(t, TraceID(occurrence), occ.SpanContext.TraceID())
	require.False(t, occ.Parent.IsValid())
	require.Equal(t, nominal, occ.StartTime)
	require.Equal(t, trace.SpanContextFromContext(InOccurrence(t.Context(), occurrence)).SpanID(), occ.SpanContext.SpanID())
	require.Equal(t, occ.SpanContext.SpanID(), attempt.Parent.SpanID())
	require.Equal(t, occ.SpanContext.TraceID(), attempt.SpanContext.TraceID())
	require.NotEqual(t, occ.SpanContext.TraceID(), elsewhere.SpanContext.TraceID())
	require.True(t, elsewhere.SpanContext.IsValid())
}
