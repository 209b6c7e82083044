package main

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"

	"github.com/recurhq/recur/internal/jaeger"
	"github.com/recurhq/recur/internal/syncbuf"
	"github.com/recurhq/recur/tracing"
)

// Secrets of the traced job: none may reach a span.
const (
	traceBasicPassword = "basic-pw-never-traced"
	traceQueryToken    = "sas-token-never-traced"
	tracePathSecret    = "path-secret-never-traced"
	traceHeaderSecret  = "header-secret-never-traced"
)

var traceSigningSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("a signing key never in any span!"))

// tracedCall is what the test target got.
type tracedCall struct {
	occurrence  string // the Idempotency-Key
	traceparent []string
	tracestate  []string
}

// tracingTarget is an HTTP target that continues the trace it is called
// in: a span of its own, of service "test-target", exported to j.
func tracingTarget(t *testing.T, j *jaeger.Jaeger) (*httptest.Server, chan tracedCall) {
	exp, err := otlptracehttp.New(t.Context(), otlptracehttp.WithEndpointURL(j.OTLPHTTP+"/v1/traces"))
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("test-target"))))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	got := make(chan tracedCall, 8)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		_, span := tp.Tracer("test-target").Start(ctx, "target handles the call")
		span.End()
		got <- tracedCall{occurrence: r.Header.Get("Idempotency-Key"), traceparent: r.Header.Values("traceparent"), tracestate: r.Header.Values("tracestate")}
	}))
	t.Cleanup(s.Close)
	return s, got
}

// tracedJob is a one-time job due at start that calls target with Basic
// authentication, a signature, a secret header, a secret path and a token
// in its query, and a traceparent and tracestate of its own.
func tracedJob(target string, start time.Time) map[string]any {
	return map[string]any{"properties": map[string]any{
		"startTime": start.UTC().Format(time.RFC3339),
		"action": map[string]any{"type": "Http", "request": map[string]any{
			"uri": target + "/hooks/" + tracePathSecret + "?sig=" + traceQueryToken, "method": "POST", "body": "{}",
			"headers": map[string]any{"X-Api-Key": traceHeaderSecret,
				"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "theirs=1"},
			"authentication": map[string]any{"type": "Basic", "username": "user", "password": traceBasicPassword},
			"signing":        map[string]any{"secrets": []string{traceSigningSecret}},
		}},
	}}
}

// startTraced starts recur dev on dataDir with more arguments and
// environment variables.
func startTraced(t *testing.T, bin, dataDir string, env []string, extra ...string) *devProcess {
	t.Helper()
	apiPort, temporalPort, uiPort := freePort(t), freePort(t), freePort(t)
	p := &devProcess{api: "http://127.0.0.1:" + strconv.Itoa(apiPort), output: &syncbuf.Buffer{}, done: make(chan error, 1)}
	args := append([]string{"dev", "--data-dir", dataDir, "--http-addr", "127.0.0.1:" + strconv.Itoa(apiPort),
		"--temporal-port", strconv.Itoa(temporalPort), "--ui-port", strconv.Itoa(uiPort), "--retention", "3d"}, extra...)
	p.startEnv(t, bin, env, args...)
	status, body := p.do(t, http.MethodPut, crashCollection, map[string]any{"properties": map[string]any{"sku": map[string]any{"name": "Standard"}}})
	require.Equal(t, http.StatusCreated, status, body)
	return p
}

// TestTracesReachJaeger runs the real binary against a real Jaeger. With
// --otlp-endpoint (over http/protobuf, then over gRPC), an occurrence is one trace, found in Jaeger under the
// ID its idempotency key names: the occurrence's span, its attempt's, the
// HTTP call's and, below it, the span the target made from the
// traceparent it got in place of the job's own. The PUT that made the job
// is a trace of its own that names the job and the run it changed. No
// span holds a secret of the job. Without the flag (an OTEL endpoint
// variable alone turns nothing on) the target gets the job's own trace
// context and nothing else, and Jaeger gets nothing.
func TestTracesReachJaeger(t *testing.T) {
	bin := buildRecur(t)
	j, err := jaeger.Start(t.Context(), t.TempDir())
	require.NoError(t, err)
	t.Cleanup(j.Stop)
	target, got := tracingTarget(t, j)

	requireTracedOccurrence(t, bin, j, target, got, "traced", j.OTLPHTTP, nil)
	requireTracedOccurrence(t, bin, j, target, got, "tracedgrpc", j.OTLPGRPC, []string{"OTEL_EXPORTER_OTLP_PROTOCOL=grpc"})

	// Without the flag.
	plain := startTraced(t, bin, filepath.Join(t.TempDir(), "data"), []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + j.OTLPHTTP})
	start := time.Now().Add(3 * time.Second).Truncate(time.Second)
	status, body := plain.do(t, http.MethodPut, crashCollection+"/jobs/untraced", tracedJob(target.URL, start))
	require.Equal(t, http.StatusCreated, status, body)
	var call tracedCall
	select {
	case call = <-got:
	case <-time.After(time.Minute):
		t.Fatalf("the job never called its target:\n%s", plain.output)
	}
	require.Equal(t, []string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}, call.traceparent, "the job's own, as it is")
	require.Equal(t, []string{"theirs=1"}, call.tracestate)
	plain.stop(t, os.Interrupt) // a tracer provider would flush here
	require.Contains(t, plain.output.String(), "tracing is off")
	_, raw, ok, err := j.Trace(t.Context(), tracing.TraceID(call.occurrence).String())
	require.NoError(t, err)
	require.False(t, ok, "a trace of an untraced occurrence:\n%s", raw)
}

// requireTracedOccurrence runs job name's occurrence on a recur dev
// exporting to endpoint, with env, and finds its trace and its PUT's in
// Jaeger.
func requireTracedOccurrence(t *testing.T, bin string, j *jaeger.Jaeger, target *httptest.Server, got chan tracedCall, name, endpoint string, env []string) {
	t.Helper()
	p := startTraced(t, bin, filepath.Join(t.TempDir(), "data"), env, "--otlp-endpoint", endpoint)
	start := time.Now().Add(3 * time.Second).Truncate(time.Second)
	status, body := p.do(t, http.MethodPut, crashCollection+"/jobs/"+name, tracedJob(target.URL, start))
	require.Equal(t, http.StatusCreated, status, body)
	var call tracedCall
	select {
	case call = <-got:
	case <-time.After(time.Minute):
		t.Fatalf("the job never called its target:\n%s", p.output)
	}
	require.Equal(t, occurrenceKey(name, start), call.occurrence)
	traceID := tracing.TraceID(call.occurrence).String()
	require.Len(t, call.traceparent, 1, "one traceparent, recur's")
	require.True(t, strings.HasPrefix(call.traceparent[0], "00-"+traceID+"-"), "traceparent %q is not of the occurrence's trace %s", call.traceparent[0], traceID)
	require.Empty(t, call.tracestate, "the job's tracestate is not of the occurrence's trace")

	var trace jaeger.Trace
	var raw []byte
	var err error
	require.Eventually(t, func() bool {
		var ok bool
		trace, raw, ok, err = j.Trace(t.Context(), traceID)
		return err == nil && ok && len(trace.Spans) >= 4
	}, time.Minute, 200*time.Millisecond, "Jaeger never held the occurrence's four spans: %v\n%s", err, raw)
	byName := map[string]jaeger.Span{}
	for _, s := range trace.Spans {
		byName[s.OperationName] = s
	}
	occurrence, attempt, call2, theirs := byName["occurrence"], byName["attempt"], byName["HTTP POST"], byName["target handles the call"]
	require.Equal(t, "recur", trace.ServiceOf(occurrence))
	require.Equal(t, call.occurrence, occurrence.Tag("recur.occurrence.id"))
	require.Empty(t, occurrence.References, "the occurrence is the trace's root")
	for _, pc := range []struct{ child, parent jaeger.Span }{{attempt, occurrence}, {call2, attempt}, {theirs, call2}} {
		parent, ok := trace.Parent(pc.child)
		require.True(t, ok, "%s has no parent in the trace:\n%s", pc.child.OperationName, raw)
		require.Equal(t, pc.parent.SpanID, parent.SpanID, "%s's parent", pc.child.OperationName)
	}
	require.Equal(t, "test-target", trace.ServiceOf(theirs))
	require.Equal(t, "client", call2.Tag("span.kind"))
	requireNoTracedSecret(t, raw)

	// The PUT's trace names the job and the run its write reached, and
	// links to the occurrence it planned.
	put := findPutTrace(t, j, "job:s/rg/c/"+name)
	requireNoTracedSecret(t, put)
	require.Contains(t, string(put), `"recur.job.id"`)
	require.Contains(t, string(put), `"temporal.workflow.run_id"`)
	require.Contains(t, string(put), `"traceID":"`+traceID+`","spanID":"`+occurrence.SpanID+`"`, "the PUT links to the occurrence's span")
	p.stop(t, os.Interrupt)

}

// findPutTrace returns Jaeger's answer with the traces of the job PUTs,
// once it holds one of job's that names what it changed.
func findPutTrace(t *testing.T, j *jaeger.Jaeger, job string) []byte {
	t.Helper()
	op := "PUT /subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/Microsoft.Scheduler/jobCollections/:jobCollectionName/jobs/:jobName"
	var raw []byte
	require.Eventually(t, func() bool {
		var err error
		raw, err = j.Search(t.Context(), "recur", op)
		return err == nil && strings.Contains(string(raw), `"changed"`) && strings.Contains(string(raw), job)
	}, time.Minute, 200*time.Millisecond, "Jaeger never held the PUT's trace")
	return raw
}

func requireNoTracedSecret(t *testing.T, raw []byte) {
	t.Helper()
	for _, secret := range []string{traceBasicPassword, base64.StdEncoding.EncodeToString([]byte("user:" + traceBasicPassword)),
		traceQueryToken, tracePathSecret, traceHeaderSecret, traceSigningSecret, strings.TrimPrefix(traceSigningSecret, "whsec_")} {
		require.NotContains(t, string(raw), secret)
	}
}
