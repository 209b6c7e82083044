package activities

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/tracing"
)

// tracedActivities returns activities with a tracer whose spans the
// returned recorder keeps.
func tracedActivities(t *testing.T, budget time.Duration) (*Activities, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(tracing.IDGenerator()))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	a := withBudget(budget)
	a.Tracer = tp.Tracer(tracing.Scope)
	return a, exp
}

// headerTarget records the headers of the requests it gets.
func headerTarget(t *testing.T) (*httptest.Server, chan http.Header) {
	got := make(chan http.Header, 4)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
	}))
	t.Cleanup(s.Close)
	return s, got
}

// tracedInput is an HTTP action with Basic authentication, a token in its
// query, a webhook-like secret in its path, a signing secret and its own
// trace context headers.
func tracedInput(uri string) jobs.HTTPRequestInput {
	in := signedInput(uri+"/hooks/T0/B0/pathsecret?sig=querysecret", map[string]string{
		"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"tracestate":  "theirs=1",
		"X-Api-Key":   "headersecret",
	})
	in.Request.Authentication = &jobs.Authentication{Type: jobs.AuthBasic, Username: "user", Password: "basicsecret"}
	return in
}

// TestATracedOccurrenceIsOneTrace: with a tracer, the first attempt makes
// the occurrence's span, under the IDs its occurrence ID names, and the
// attempt's and the call's spans below it; the target gets the call's
// trace context in place of the job's own, and no span holds a secret of
// the job's or the path and query of its URL.
func TestATracedOccurrenceIsOneTrace(t *testing.T) {
	target, got := headerTarget(t)
	a, exp := tracedActivities(t, 5*time.Second)
	in := tracedInput(target.URL)
	out, err := firstAttempt(t, a, jobs.FirstAttemptInput{HTTP: &in})
	require.NoError(t, err)
	require.Equal(t, 200, out.Response.StatusCode)

	h := <-got
	traceID := tracing.TraceID(in.OccurrenceID)
	parent := h.Get("traceparent")
	require.True(t, strings.HasPrefix(parent, "00-"+traceID.String()+"-"), "traceparent %q is not of the occurrence's trace %s", parent, traceID)
	require.Empty(t, h.Get("tracestate"), "the job's tracestate is not of this trace")

	spans := exp.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		require.Equal(t, traceID, s.SpanContext.TraceID(), "%s is not in the occurrence's trace", s.Name)
		byName[s.Name] = s
	}
	require.Len(t, byName, 3, "%v", spans)
	occ, attempt, call := byName["occurrence"], byName["attempt"], byName["HTTP POST"]
	require.False(t, occ.Parent.IsValid(), "the occurrence is the trace's root")
	require.Equal(t, in.Nominal, occ.StartTime, "the occurrence starts when it was due")
	require.Equal(t, occ.SpanContext.SpanID(), attempt.Parent.SpanID())
	require.Equal(t, attempt.SpanContext.SpanID(), call.Parent.SpanID())
	require.Equal(t, trace.SpanKindClient, call.SpanKind)
	require.Equal(t, call.SpanContext.SpanID().String(), strings.Split(parent, "-")[2], "the target's parent is the call")

	data, err := json.Marshal(spans)
	require.NoError(t, err)
	for _, secret := range []string{"basicsecret", "dXNlcjpiYXNpY3NlY3JldA", "querysecret", "pathsecret", "headersecret", signingSecrets[0], "whsec_"} {
		require.NotContains(t, string(data), secret)
	}
}

// TestEveryAttemptJoinsItsOccurrencesTrace: an attempt after the first,
// an activity on any worker, is a child of the occurrence's span though
// this process never started it.
func TestEveryAttemptJoinsItsOccurrencesTrace(t *testing.T) {
	target, got := headerTarget(t)
	a, exp := tracedActivities(t, 0)
	in := tracedInput(target.URL)
	in.Request.Authentication = nil
	require.NoError(t, runHTTPInput(t, a, in))
	<-got
	spans := exp.GetSpans()
	require.Len(t, spans, 2)
	occurrence := trace.SpanContextFromContext(tracing.InOccurrence(t.Context(), in.OccurrenceID))
	for _, s := range spans {
		require.Equal(t, occurrence.TraceID(), s.SpanContext.TraceID())
		if s.Name == "attempt" {
			require.Equal(t, occurrence.SpanID(), s.Parent.SpanID(), "the attempt is the occurrence's child")
		}
	}
}

// TestUntracedCallsCarryOnlyTheJobsTraceContext: without a tracer recur
// adds no trace context; a job's own headers of those names go as they
// are, as they did to Azure's targets.
func TestUntracedCallsCarryOnlyTheJobsTraceContext(t *testing.T) {
	target, got := headerTarget(t)
	in := tracedInput(target.URL)
	in.Request.Authentication = nil
	require.NoError(t, runHTTPInput(t, New(localPolicy), in))
	h := <-got
	require.Equal(t, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", h.Get("traceparent"))
	require.Equal(t, "theirs=1", h.Get("tracestate"))

	delete(in.Request.Headers, "traceparent")
	delete(in.Request.Headers, "tracestate")
	require.NoError(t, runHTTPInput(t, New(localPolicy), in))
	h = <-got
	require.Empty(t, h.Values("traceparent"))
	require.Empty(t, h.Values("tracestate"))
}
