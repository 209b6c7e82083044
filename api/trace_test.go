package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/tracing"
)

// TestARequestIsASpanOfItsRoute: a traced API makes a request a server
// span named by its method and route template, under the client's
// traceparent, naming the job it is about, with neither the query (a
// token) nor a header; probes make none.
func TestARequestIsASpanOfItsRoute(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(t.Context()) }()
	h := New(nil, Options{Logger: discardLogger(), Tracer: tp.Tracer(tracing.Scope)})

	const clientTrace = "0af7651916cd43dd8448eb211c80319c"
	// No api-version: the API answers 400 before it asks Temporal.
	req := newRequest(http.MethodGet, badJob+"?sig=query-secret", nil)
	req.Header.Set("traceparent", "00-"+clientTrace+"-b7ad6b7169203331-01")
	req.Header.Set("Authorization", "Bearer header-secret")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, newRequest(http.MethodGet, "/healthz", nil))
	require.Equal(t, http.StatusOK, rec.Code)

	spans := exp.GetSpans()
	require.Len(t, spans, 1, "the probe makes no span")
	s := spans[0]
	route := "/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/Microsoft.Scheduler/jobCollections/:jobCollectionName/jobs/:jobName"
	require.Equal(t, "GET "+route, s.Name)
	require.Equal(t, trace.SpanKindServer, s.SpanKind)
	require.Equal(t, clientTrace, s.SpanContext.TraceID().String(), "the client's trace")
	attrs := attribute.NewSet(s.Attributes...)
	for key, want := range map[attribute.Key]any{
		"http.request.method": "GET", "http.route": route, "http.response.status_code": int64(400), tracing.AttrJob: "job:s/rg/c/j",
	} {
		got, ok := attrs.Value(key)
		require.True(t, ok, key)
		require.Equal(t, want, got.AsInterface(), key)
	}
	data, err := json.Marshal(spans)
	require.NoError(t, err)
	require.NotContains(t, string(data), "query-secret")
	require.NotContains(t, string(data), "header-secret")
}

// TestAWriteLinksToTheOccurrenceItPlanned: a PUT's or PATCH's span links
// to the span of the job's next occurrence, whose IDs the occurrence
// ID gives before it runs; a job with none planned links nothing.
func TestAWriteLinksToTheOccurrenceItPlanned(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(t.Context()) }()
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	next := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

	ctx, span := tp.Tracer(tracing.Scope).Start(t.Context(), "PUT")
	linkNext(ctx, k, jobs.Job{Properties: jobs.Properties{Status: &jobs.Status{NextExecutionTime: &next}}})
	span.End()
	ctx, span = tp.Tracer(tracing.Scope).Start(t.Context(), "PATCH")
	linkNext(ctx, k, jobs.Job{Properties: jobs.Properties{Status: &jobs.Status{}}})
	span.End()

	spans := exp.GetSpans()
	require.Len(t, spans, 2)
	require.Len(t, spans[0].Links, 1)
	occurrence := jobs.OccurrenceID(k.JobWorkflowID(), next)
	link := spans[0].Links[0].SpanContext
	require.Equal(t, tracing.TraceID(occurrence), link.TraceID())
	require.Equal(t, trace.SpanContextFromContext(tracing.InOccurrence(t.Context(), occurrence)).SpanID(), link.SpanID(), "the occurrence span's own ID")
	require.Empty(t, spans[1].Links, "nothing planned, nothing linked")
}
