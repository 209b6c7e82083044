package api

import (
	"context"
	"log/slog"
	"sync/atomic"
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

// Refused requests are logged at most refusalBurst at once and one a
// second after that: anyone may send refused requests (a bad token, a
// page of another site), and each would otherwise write a line.
const (
	refusalBurst    = 10
	refusalsAsecond = 1
)

// sampler lets log lines through at a bounded rate and counts the ones it
// holds back, for the next line let through to say how many.
// Its bucket is the rate limit's, with one key.
type sampler struct {
	bucket *limiters
	held   atomic.Int64
}

func newSampler() *sampler {
	return &sampler{bucket: newLimiters(RateLimit{PerSecond: refusalsAsecond, Burst: refusalBurst})}
}

// take reports whether a line may be written now and, if so, how many
// were held back since the last one.
func (s *sampler) take() (bool, int64) {
	if s.bucket.wait("") > 0 {
		s.held.Add(1)
		return false, 0
	}
	return true, s.held.Swap(0)
}

// logRefusal logs a refused request at info level, sampled: a line after
// some were held back says how many in "notLogged".
func (s *Server) logRefusal(ctx context.Context, msg string, attrs ...any) {
	ok, held := s.refusals.take()
	if !ok {
		return
	}
	if held > 0 {
		attrs = append(attrs, "notLogged", held)
	}
	s.log.InfoContext(ctx, msg, attrs...)
}
