package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/tracing"
)

// traceContext reads a client's W3C trace context.
var traceContext = propagation.TraceContext{}

// untraced are the routes of probes and scrapes: a span every few
// seconds of each would bury the requests of clients.
var untraced = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// trace makes each request a server span, named by its method and route
// template, the child of the client's traceparent when it sends one. It
// records the method, the route, the status and, for a request about one
// job, the job's workflow ID; the store adds an event for each workflow a
// write changed (its ID and run). Never the path (which holds tenants'
// names the route template does not need), the query (which may hold a
// token), a header or a body. Probes and scrapes (untraced) are not.
func (s *Server) trace(c *gin.Context) {
	route := c.FullPath()
	if s.tracer == nil || untraced[route] {
		c.Next()
		return
	}
	if route == "" {
		route = "unmatched"
	}
	ctx := traceContext.Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header))
	method := c.Request.Method
	if !knownMethods[method] {
		method = "other"
	}
	ctx, span := s.tracer.Start(ctx, method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", method), attribute.String("http.route", route)))
	defer span.End()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
	status := c.Writer.Status()
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= http.StatusInternalServerError {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	if k, err := key(c); err == nil && k.Job != "" {
		span.SetAttributes(tracing.AttrJob.String(k.JobWorkflowID()))
	}
}

// linkNext links a write's span, when it records, to the span of the
// occurrence the write planned next for job k: the trace of a PUT or
// PATCH leads to the run it caused.
func linkNext(ctx context.Context, k jobs.Key, job jobs.Job) {
	span := trace.SpanFromContext(ctx)
	if st := job.Properties.Status; span.IsRecording() && st != nil && st.NextExecutionTime != nil {
		span.AddLink(tracing.LinkOccurrence(jobs.OccurrenceID(k.JobWorkflowID(), *st.NextExecutionTime)))
	}
}
