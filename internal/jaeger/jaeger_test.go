package jaeger

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
)

// TestJaegerKeepsWhatItReceives installs Jaeger (the first time, a build:
// .ci/run runs this package alone first, with a longer timeout), starts
// it, exports a parent and a child span to its gRPC receiver and finds
// both in its query API, the child under its parent.
func TestJaegerKeepsWhatItReceives(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it builds Jaeger the first time")
	}
	j, err := Start(t.Context(), t.TempDir())
	require.NoError(t, err)
	defer j.Stop()

	exp, err := otlptracegrpc.New(t.Context(), otlptracegrpc.WithEndpointURL(j.OTLPGRPC))
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("jaeger-test"))))
	defer func() { _ = tp.Shutdown(t.Context()) }()
	ctx, parent := tp.Tracer("test").Start(t.Context(), "parent")
	_, child := tp.Tracer("test").Start(ctx, "child")
	child.End()
	parent.End()

	var tr Trace
	require.Eventually(t, func() bool {
		var ok bool
		tr, _, ok, err = j.Trace(t.Context(), parent.SpanContext().TraceID().String())
		return err == nil && ok && len(tr.Spans) == 2
	}, time.Minute, 100*time.Millisecond, "Jaeger never held the trace: %v\n%s", err, j.Output())
	for _, s := range tr.Spans {
		require.Equal(t, "jaeger-test", tr.ServiceOf(s))
		if s.OperationName == "child" {
			p, ok := tr.Parent(s)
			require.True(t, ok)
			require.Equal(t, "parent", p.OperationName)
		}
	}
	_, _, ok, err := j.Trace(t.Context(), "0123456789abcdef0123456789abcdef")
	require.NoError(t, err)
	require.False(t, ok, "a trace Jaeger never received")
}
