package api

import (
	"context"
	"log/slog"
)

// logKeyRequestID is the key of a request's ID in its log lines.
const logKeyRequestID = "requestId"

type requestIDKey struct{}

// withRequestID returns ctx carrying a request's ID for its log lines.
func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// requestIDHandler adds the request ID of a record's context to it, so
// that every line logged with a request's context (the *Context methods
// of slog.Logger) names the request.
type requestIDHandler struct{ slog.Handler }

// logRequestIDs returns log with request IDs from the context.
func logRequestIDs(log *slog.Logger) *slog.Logger {
	return slog.New(requestIDHandler{log.Handler()})
}

// Handle implements slog.Handler.
func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id, ok := ctx.Value(requestIDKey{}).(string); ok {
		r.AddAttrs(slog.String(logKeyRequestID, id))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
