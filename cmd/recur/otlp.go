package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/recurhq/recur/tracing"
)

// otlpFlags turn tracing on: with an endpoint, the process exports its
// spans over OTLP and its HTTP actions carry traceparent.
type otlpFlags struct {
	endpoint string
}

func (o *otlpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.endpoint, "otlp-endpoint", env("RECUR_OTLP_ENDPOINT", ""),
		"base `URL` of an OTLP receiver to export traces to, e.g. http://127.0.0.1:4318 (http/protobuf) or http://127.0.0.1:4317 with OTEL_EXPORTER_OTLP_PROTOCOL=grpc; "+
			"the exporter's other OTEL_EXPORTER_OTLP_* variables (headers, TLS, timeout, compression) apply. "+
			"Empty traces nothing, and HTTP actions then carry no traceparent (RECUR_OTLP_ENDPOINT)")
}

// otlpProtocol is the OTLP protocol of the traces' exporter: the standard
// variables', http/protobuf (the specification's default) when neither
// is set.
func otlpProtocol() (string, error) {
	p := env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"))
	switch p {
	case "grpc", "http/protobuf":
		return p, nil
	}
	return "", fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: recur exports traces over grpc or http/protobuf", p)
}

// check refuses an endpoint that is not an http or https URL with a
// host, before anything starts. An endpoint variable of OpenTelemetry's
// alone turns nothing on (tracing adds traceparent to what targets
// receive: an operator opts in): check says so.
func (o *otlpFlags) check(log *slog.Logger) error {
	if o.endpoint == "" {
		if otlpEnvSet() {
			log.Warn("OTEL_EXPORTER_OTLP_ENDPOINT is set, but recur exports traces only with --otlp-endpoint (RECUR_OTLP_ENDPOINT): tracing is off")
		}
		return nil
	}
	u, err := url.Parse(o.endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Not quoted: a malformed URL may still hold a credential.
		return fmt.Errorf("--otlp-endpoint: want an http or https URL such as http://127.0.0.1:4318")
	}
	if u.User != nil || u.RawQuery != "" {
		// Credentials go in OTEL_EXPORTER_OTLP_HEADERS, which no log line
		// or flag listing shows.
		return fmt.Errorf("--otlp-endpoint: user info and queries are refused; give credentials with OTEL_EXPORTER_OTLP_HEADERS")
	}
	_, err = otlpProtocol()
	return err
}

// tracer starts the process's tracer provider and returns its tracer and
// the function that flushes and stops it; without an endpoint, a nil
// tracer (tracing off) and a no-op.
func (o *otlpFlags) tracer(ctx context.Context, log *slog.Logger) (trace.Tracer, func(), error) {
	if o.endpoint == "" {
		return nil, func() {}, nil
	}
	protocol, err := otlpProtocol()
	if err != nil {
		return nil, nil, err
	}
	var exp sdktrace.SpanExporter
	if protocol == "grpc" {
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(o.endpoint))
	} else {
		// The flag is a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT is: traces
		// go to its /v1/traces.
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimSuffix(o.endpoint, "/")+"/v1/traces"))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP exporter: %w", err)
	}
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the name.
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName("recur")), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP resource: %w", err)
	}
	// Spans queue in memory and go in batches: an exporter that is slow or
	// down drops spans and never holds an occurrence back.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
		sdktrace.WithIDGenerator(tracing.IDGenerator()))
	log.Info("exporting traces over OTLP", "endpoint", o.endpoint, "protocol", protocol)
	return tp.Tracer(tracing.Scope), func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			log.Warn("flush traces", "error", err)
		}
	}, nil
}

// otlpEnvSet says whether an OTLP endpoint variable is set.
func otlpEnvSet() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}
