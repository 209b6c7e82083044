package temporalserver

import (
	"context"
	"log/slog"
	"strings"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// serverLogger carries the Temporal server's log.Logger calls to slog.
type serverLogger struct {
	log *slog.Logger
}

var (
	_ log.Logger      = serverLogger{}
	_ log.WithLogger  = serverLogger{}
	_ log.SLogWrapper = serverLogger{}
)

func (l serverLogger) Debug(msg string, tags ...tag.Tag) { l.emit(slog.LevelDebug, msg, tags) }
func (l serverLogger) Info(msg string, tags ...tag.Tag)  { l.emit(slog.LevelInfo, msg, tags) }
func (l serverLogger) Error(msg string, tags ...tag.Tag) { l.emit(slog.LevelError, msg, tags) }

// httpAPIOff is the start of the frontend's warning that its HTTP API is
// off. recur turns it off on purpose (see servicePorts): the warning, on
// every start, would only send users looking for a fault.
const httpAPIOff = "HTTP API port has not been set."

func (l serverLogger) Warn(msg string, tags ...tag.Tag) {
	if strings.HasPrefix(msg, httpAPIOff) {
		l.emit(slog.LevelDebug, msg, tags)
		return
	}
	l.emit(slog.LevelWarn, msg, tags)
}

// DPanic, Panic and Fatal are logged as errors: a library must not take the
// whole recur process down, and the server's own zap logger would.
func (l serverLogger) DPanic(msg string, tags ...tag.Tag) { l.emit(slog.LevelError, msg, tags) }
func (l serverLogger) Panic(msg string, tags ...tag.Tag)  { l.emit(slog.LevelError, msg, tags) }
func (l serverLogger) Fatal(msg string, tags ...tag.Tag)  { l.emit(slog.LevelError, msg, tags) }

// With keeps prepended tags as slog attributes, so they are converted once.
func (l serverLogger) With(tags ...tag.Tag) log.Logger {
	args := make([]any, len(tags))
	for i, t := range tags {
		args[i] = slog.Any(t.Key(), t.Value())
	}
	return serverLogger{log: l.log.With(args...)}
}

// SLog lets server code that wants slog (log.NewSlogLogger) use ours as is.
func (l serverLogger) SLog() *slog.Logger { return l.log }

func (l serverLogger) emit(level slog.Level, msg string, tags []tag.Tag) {
	ctx := context.Background()
	if !l.log.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, len(tags))
	for i, t := range tags {
		attrs[i] = slog.Any(t.Key(), t.Value())
	}
	l.log.LogAttrs(ctx, level, msg, attrs...)
}

// minLevelHandler drops records below min whatever next would accept; it
// keeps the server quiet even when recur itself logs at debug.
type minLevelHandler struct {
	next slog.Handler
	min  slog.Leveler
}

func (h minLevelHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= h.min.Level() && h.next.Enabled(ctx, level)
}

func (h minLevelHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.next.Handle(ctx, r)
}

func (h minLevelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevelHandler{next: h.next.WithAttrs(attrs), min: h.min}
}

func (h minLevelHandler) WithGroup(name string) slog.Handler {
	return minLevelHandler{next: h.next.WithGroup(name), min: h.min}
}
