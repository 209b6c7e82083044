package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/store"
)

// answer runs writeError on err and returns the HTTP status and code.
func answer(t *testing.T, err error) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	c.Request = newRequest(http.MethodGet, "/x", nil)
	writeError(c, slog.New(slog.DiscardHandler), err)
	var body armError
	require.NoError(t, decodeJSON(rec.Body.Bytes(), &body))
	return rec.Code, body.Error.Code
}

func TestWriteErrorMapsBusinessErrorsWhereverTheyComeFrom(t *testing.T) {
	notFound := jobs.NotFound("job j")
	for name, tc := range map[string]struct {
		err    error
		status int
		code   string
	}{
		"direct":               {notFound, http.StatusNotFound, jobs.CodeNotFound},
		"from an update":       {notFound.ToApplicationError(), http.StatusNotFound, jobs.CodeNotFound},
		"quota":                {&jobs.Error{Code: jobs.CodeQuotaExceeded}, http.StatusConflict, jobs.CodeQuotaExceeded},
		"bad input":            {&jobs.Error{Code: jobs.CodeInvalidRequest}, http.StatusBadRequest, jobs.CodeInvalidRequest},
		"missing workflow":     {serviceerror.NewNotFound("no such workflow"), http.StatusNotFound, jobs.CodeNotFound},
		"temporal unavailable": {serviceerror.NewUnavailable("connection refused"), http.StatusServiceUnavailable, "ServiceUnavailable"},
		"temporal too slow":    {serviceerror.NewDeadlineExceeded("context deadline exceeded"), http.StatusServiceUnavailable, "ServiceUnavailable"},
		"grpc unavailable":     {grpcstatus.Error(codes.Unavailable, "dial"), http.StatusServiceUnavailable, "ServiceUnavailable"},
		"our own deadline":     {fmt.Errorf("update: %w", context.DeadlineExceeded), http.StatusServiceUnavailable, "ServiceUnavailable"},
		"temporal rate limit": {serviceerror.NewResourceExhausted(enumspb.RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT, "namespace rate limit exceeded"),
			http.StatusServiceUnavailable, "ServiceUnavailable"},
		"grpc message too large": {grpcstatus.Error(codes.ResourceExhausted, "grpc: received message larger than max"),
			http.StatusInternalServerError, "InternalServerError"},
		"anything else is a 500": {errors.New("boom"), http.StatusInternalServerError, "InternalServerError"},
	} {
		status, code := answer(t, tc.err)
		require.Equal(t, tc.status, status, name)
		require.Equal(t, tc.code, code, name)
	}
}

func decodeJSON(data []byte, v any) error { return json.Unmarshal(data, v) }

// TestARefusalFromTemporalIsRetriedLaterWithoutClosingTheGate: Temporal's
// ResourceExhausted (a visibility rate limit on a cluster) answers 503
// with Retry-After, but unlike an outage it does not make the other
// requests fail fast: Temporal is up.
func TestARefusalFromTemporalIsRetriedLaterWithoutClosingTheGate(t *testing.T) {
	for name, tc := range map[string]struct {
		err      error
		gateShut bool
	}{
		"refused": {serviceerror.NewResourceExhausted(enumspb.RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT, "namespace rate limit exceeded"), false},
		"down":    {serviceerror.NewUnavailable("connection refused"), true},
	} {
		rec := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(rec)
		c.Request = newRequest(http.MethodGet, "/x", nil)
		writeError(c, slog.New(slog.DiscardHandler), tc.err)
		require.Equal(t, http.StatusServiceUnavailable, rec.Code, name)
		require.Equal(t, retryAfterSeconds, rec.Header().Get("Retry-After"), name)
		require.Equal(t, tc.gateShut, c.GetBool(keyTemporalDown), name)
	}
}

// TestOutageGateFailsFastUntilAProbeSucceeds: once a request finds Temporal
// down, the others answer at once without calling it; one probe a second
// looks again, and the first that succeeds lets requests through.
func TestOutageGateFailsFastUntilAProbeSucceeds(t *testing.T) {
	var o outage
	probes := 0
	probeErr := errors.New("connection refused")
	probe := func(context.Context) error { probes++; return probeErr }
	require.True(t, o.pass(context.Background(), probe), "up: no probe needed")
	require.Zero(t, probes)

	o.markDown()
	require.False(t, o.pass(context.Background(), probe), "down: answered at once")
	require.Zero(t, probes, "no probe within a second of the outage")

	o.probes.last = time.Now().Add(-probeEvery)
	require.False(t, o.pass(context.Background(), probe), "the probe fails")
	require.Equal(t, 1, probes)
	require.False(t, o.pass(context.Background(), probe), "and the next request does not probe again at once")
	require.Equal(t, 1, probes)

	probeErr = nil
	o.probes.last = time.Now().Add(-probeEvery)
	require.True(t, o.pass(context.Background(), probe), "the probe finds Temporal back")
	require.True(t, o.pass(context.Background(), probe))
	require.Equal(t, 2, probes)
}

// TestOutageGateClosesOnlyWhenAProbeConfirms: a request that timed out on
// a loaded Temporal must not turn the next second's requests into 503s.
func TestOutageGateClosesOnlyWhenAProbeConfirms(t *testing.T) {
	var o outage
	up := func(context.Context) error { return nil }
	o.suspect(context.Background(), up)
	require.False(t, o.down, "Temporal answered the probe: only slow")
	require.True(t, o.pass(context.Background(), up))

	o.suspect(context.Background(), func(context.Context) error { return errors.New("connection refused") })
	require.True(t, o.down, "the probe failed too: down")
	require.False(t, o.pass(context.Background(), up), "answered at once within a second of the outage")
}

// TestAClientThatWentAwayIsNoTemporalOutage: when the client closes its
// request while recur waits for Temporal, whatever error the wait ended
// with says nothing of Temporal: no 503, no suspicion of an outage, and no
// ERROR in the log.
func TestAClientThatWentAwayIsNoTemporalOutage(t *testing.T) {
	for name, err := range map[string]error{
		"context":       context.Canceled,
		"grpc canceled": grpcstatus.Error(codes.Canceled, "context canceled"),
		"sdk wrapped":   errors.New("Timeout or cancellation waiting for update: context canceled"),
		"unavailable":   serviceerror.NewUnavailable("GetCurrentExecution operation failed. Error: context canceled"),
	} {
		var logged levels
		rec := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(rec)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c.Request = newRequest(http.MethodGet, "/x", nil).WithContext(ctx)
		writeError(c, slog.New(&logged), err)
		require.Equal(t, statusClientClosedRequest, rec.Code, name)
		require.False(t, c.GetBool(keyTemporalDown), name)
		require.Empty(t, rec.Header().Get("Retry-After"), name)
		require.Equal(t, []slog.Level{slog.LevelInfo}, logged.seen, name)
	}
}

// TestABodyThatTimedOutIsStillABadRequest: net/http cancels the context
// of a request whose body read failed, though its client still waits for
// the answer: the business error keeps its status.
func TestABodyThatTimedOutIsStillABadRequest(t *testing.T) {
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.Request = newRequest(http.MethodPut, "/x", nil).WithContext(ctx)
	writeError(c, slog.New(&levels{}), &apiError{status: http.StatusBadRequest, code: "InvalidRequestContent", message: "i/o timeout"})
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

// levels is a slog.Handler that keeps the level of each record.
type levels struct{ seen []slog.Level }

func (l *levels) Enabled(context.Context, slog.Level) bool { return true }
func (l *levels) Handle(_ context.Context, r slog.Record) error {
	l.seen = append(l.seen, r.Level)
	return nil
}
func (l *levels) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *levels) WithGroup(string) slog.Handler      { return l }

// A Temporal NotFound that no caller named still answers in the envelope,
// saying only that the resource was not found.
func TestUnnamedNotFoundAnswer(t *testing.T) {
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	c.Request = newRequest(http.MethodGet, "/x", nil)
	writeError(c, slog.New(slog.DiscardHandler), fmt.Errorf("read: %w", serviceerror.NewNotFound("workflow x")))
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.JSONEq(t, `{"error":{"code":"ResourceNotFound","message":"the resource was not found"}}`, rec.Body.String())
}

// TestAQuotaHeldByLeasesIsA503: a PUT the store refuses because its
// collection's quota is held by leases answers 503 with Retry-After, even
// when its client has gone meanwhile (the refusal ends a wait that the
// request's context ended).
func TestAQuotaHeldByLeasesIsA503(t *testing.T) {
	for name, gone := range map[string]bool{"client waiting": false, "client gone": true} {
		rec := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(rec)
		ctx, cancel := context.WithCancel(context.Background())
		if gone {
			cancel()
		}
		c.Request = newRequest(http.MethodPut, "/x", nil).WithContext(ctx)
		writeError(c, slog.New(slog.DiscardHandler), store.ErrQuotaLeased)
		cancel()
		require.Equal(t, http.StatusServiceUnavailable, rec.Code, name)
		require.Equal(t, retryAfterSeconds, rec.Header().Get("Retry-After"), name)
		require.JSONEq(t, `{"error":{"code":"ServiceUnavailable","message":"the job collection's quota is full, with some of it held by requests in flight; try again later"}}`,
			rec.Body.String(), name)
	}
}
