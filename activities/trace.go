package activities

import (
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Trace context headers (W3C Trace Context).
const (
	HeaderTraceParent = "traceparent"
	HeaderTraceState  = "tracestate"
)

// traceContext writes and reads the W3C headers.
var traceContext = propagation.TraceContext{}

// traceCall returns req as the client span of an HTTP action's call, with
// that span's trace context in its traceparent header, and the function
// that ends the span with the call's status code and error. A job's own
// traceparent and tracestate give way: they would name a trace the call
// is not part of. Without a.Tracer, req goes as it is, trace context
// headers of the job's included.
//
// The span names the destination by scheme, host and port only: a
// webhook's path often is its secret (Slack's, Teams', Discord's), and a
// query may carry a SAS token.
func (a *Activities) traceCall(req *http.Request) (*http.Request, func(status int, err error)) {
	if a.Tracer == nil {
		return req, func(int, error) {}
	}
	attrs := []attribute.KeyValue{
		attribute.String("http.request.method", req.Method),
		attribute.String("url.scheme", req.URL.Scheme),
		attribute.String("server.address", req.URL.Hostname()),
	}
	if port := req.URL.Port(); port != "" {
		if n, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, attribute.Int("server.port", n))
		}
	}
	ctx, span := a.Tracer.Start(req.Context(), "HTTP "+req.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	req = req.WithContext(ctx)
	req.Header.Del(HeaderTraceParent)
	req.Header.Del(HeaderTraceState)
	traceContext.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return req, func(status int, err error) {
		if status != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", status))
		}
		endSpan(span, err)
	}
}
