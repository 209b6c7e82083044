// Package tracing is recur's trace context: one trace per occurrence, whose
// IDs derive from the occurrence's ID, so that every attempt of it, on any
// worker process, in any run of its workflow, joins the same trace without
// the workflow carrying a span; and the names of what recur's spans record.
package tracing

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Scope is the instrumentation scope of recur's tracers.
const Scope = "github.com/recurhq/recur"

// Attributes of recur's own on its spans. None holds a secret: names of
// jobs and the times of their occurrences, never a URL's path or query, a
// header or a body.
const (
	AttrJob        = attribute.Key("recur.job.id")             // the job's workflow ID
	AttrWorkflow   = attribute.Key("temporal.workflow.id")     // a workflow a write changed
	AttrRun        = attribute.Key("temporal.workflow.run_id") // the run of it that took the write
	AttrOccurrence = attribute.Key("recur.occurrence.id")      // the occurrence ID, its calls' idempotency key
	AttrNominal    = attribute.Key("recur.occurrence.nominal")
	AttrAction     = attribute.Key("recur.action") // Main or Error
	AttrActionType = attribute.Key("recur.action.type")
	AttrAttempt    = attribute.Key("temporal.activity.attempt")
)

// ids returns the trace ID and the occurrence span's ID of the occurrence
// occurrenceID: the first 24 bytes of a SHA-256 of it. Anyone who has the
// idempotency key a target received can find its trace.
func ids(occurrenceID string) (trace.TraceID, trace.SpanID) {
	sum := sha256.Sum256([]byte("recur occurrence\x00" + occurrenceID))
	var t trace.TraceID
	var s trace.SpanID
	copy(t[:], sum[:16])
	copy(s[:], sum[16:24])
	return t, s
}

// TraceID returns the ID of the trace of the occurrence occurrenceID.
func TraceID(occurrenceID string) trace.TraceID {
	t, _ := ids(occurrenceID)
	return t
}

// InOccurrence returns ctx with the span of the occurrence occurrenceID as
// its remote parent: spans started in it are the occurrence's children,
// whichever process starts them and whether or not the occurrence span was
// exported yet.
func InOccurrence(ctx context.Context, occurrenceID string) context.Context {
	t, s := ids(occurrenceID)
	return trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: t, SpanID: s, TraceFlags: trace.FlagsSampled, Remote: true,
	}))
}

// LinkOccurrence returns a link to the span of the occurrence
// occurrenceID, which need not have run yet: a write that plans an
// occurrence links its span to it, and the occurrence's trace, once made,
// is a click away from the write's.
func LinkOccurrence(occurrenceID string) trace.Link {
	t, s := ids(occurrenceID)
	return trace.Link{
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: t, SpanID: s, TraceFlags: trace.FlagsSampled, Remote: true}),
		Attributes:  []attribute.KeyValue{AttrOccurrence.String(occurrenceID)},
	}
}

// occurrenceKey marks a context whose root span is an occurrence's: the
// ID generator gives it the occurrence's IDs.
type occurrenceKey struct{}

// StartOccurrence starts the span of the occurrence occurrenceID of job
// (its workflow ID), due at nominal: the root of its trace, under the IDs
// InOccurrence names. tracer must be of a provider made with IDGenerator.
func StartOccurrence(ctx context.Context, tracer trace.Tracer, job, occurrenceID string, nominal time.Time) trace.Span {
	ctx = context.WithValue(ctx, occurrenceKey{}, occurrenceID)
	_, span := tracer.Start(ctx, "occurrence", trace.WithNewRoot(), trace.WithTimestamp(nominal),
		trace.WithAttributes(AttrJob.String(job), AttrOccurrence.String(occurrenceID),
			AttrNominal.String(nominal.UTC().Format(time.RFC3339Nano))))
	return span
}

// IDGenerator returns the ID generator of recur's tracer provider: an
// occurrence's span gets the IDs derived from its ID, every other span
// random ones.
func IDGenerator() sdktrace.IDGenerator { return generator{} }

type generator struct{}

func (generator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if id, ok := ctx.Value(occurrenceKey{}).(string); ok {
		return ids(id)
	}
	var t trace.TraceID
	for !t.IsValid() {
		binary.BigEndian.PutUint64(t[:8], rand.Uint64())
		binary.BigEndian.PutUint64(t[8:], rand.Uint64())
	}
	return t, newSpanID()
}

func (generator) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return newSpanID() }

func newSpanID() trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		binary.BigEndian.PutUint64(s[:], rand.Uint64())
	}
	return s
}
