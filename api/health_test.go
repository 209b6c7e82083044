package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
)

// healthyTemporal answers the health check and DescribeNamespace; any other
// call panics (the embedded interfaces are nil), which the router's
// recovery turns into a 500.
type healthyTemporal struct{ client.Client }

func (healthyTemporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	return &client.CheckHealthResponse{}, nil
}

func (healthyTemporal) WorkflowService() workflowservice.WorkflowServiceClient { return namespaces{} }

type namespaces struct {
	workflowservice.WorkflowServiceClient
}

func (namespaces) DescribeNamespace(context.Context, *workflowservice.DescribeNamespaceRequest, ...grpc.CallOption) (*workflowservice.DescribeNamespaceResponse, error) {
	return &workflowservice.DescribeNamespaceResponse{}, nil
}

// TestNotReadyAnswers503UntilReadySucceeds: while Options.Ready fails,
// /readyz answers 503 and a PUT answers 503 with Retry-After without
// reaching its handler (which would panic on this client); once Ready
// succeeds, both go through.
func TestNotReadyAnswers503UntilReadySucceeds(t *testing.T) {
	readyErr := errors.New("Namespace recur has no mapping defined for search attribute RecurKind")
	// The router's recovery, made now, would print the panic's stack.
	defer func(w io.Writer) { gin.DefaultErrorWriter = w }(gin.DefaultErrorWriter)
	gin.DefaultErrorWriter = io.Discard
	h := New(healthyTemporal{}, Options{Namespace: "recur", Logger: slog.New(slog.DiscardHandler),
		Ready: func(context.Context) error { return readyErr }})
	request := func(method, path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := newRequest(method, path, strings.NewReader(`{"location":"westeurope","properties":{"sku":{"name":"Standard"}}}`))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		return rec
	}

	rec := request(http.MethodGet, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "search attributes")
	rec = request(http.MethodPut, badCollection+badVersion)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Equal(t, retryAfterSeconds, rec.Header().Get("Retry-After"))
	require.Equal(t, "ServiceUnavailable", armAnswer(t, rec).Code)

	readyErr = nil
	// Ready is asked again at most once per probeEvery.
	require.Eventually(t, func() bool { return request(http.MethodGet, "/readyz").Code == http.StatusOK },
		5*probeEvery, probeEvery/10)
	rec = request(http.MethodPut, badCollection+badVersion)
	require.Equal(t, http.StatusInternalServerError, rec.Code, "past whileTemporalUp, the handler calls this client, which panics")
}

// TestReadinessProbesOncePerSecondAndLatches: until Ready succeeds, one
// request per probeEvery calls it and the others are answered at once;
// after it has succeeded, it is never called again.
func TestReadinessProbesOncePerSecondAndLatches(t *testing.T) {
	calls := 0
	var checkErr error = errors.New("not yet")
	r := &readiness{check: func(context.Context) error { calls++; return checkErr }}
	ctx := context.Background()
	require.ErrorIs(t, r.pass(ctx), errNotReady)
	require.ErrorIs(t, r.pass(ctx), errNotReady)
	require.Equal(t, 1, calls, "the second request within a second does not probe")

	checkErr = nil
	r.probes.last = time.Now().Add(-probeEvery)
	require.NoError(t, r.pass(ctx))
	require.NoError(t, r.pass(ctx))
	checkErr = errors.New("would not be asked")
	r.probes.last = time.Now().Add(-probeEvery)
	require.NoError(t, r.pass(ctx))
	require.Equal(t, 2, calls)

	var none *readiness
	require.NoError(t, none.pass(ctx), "without Options.Ready the API is ready")
}

// TestUnmappedSearchAttributeIs503: a frontend whose namespace cache does
// not know recur's search attributes yet refuses a start with an
// InvalidArgument; the client is told to retry, with Retry-After, not
// that the server failed.
func TestUnmappedSearchAttributeIs503(t *testing.T) {
	unmapped := serviceerror.NewInvalidArgument("Namespace recur has no mapping defined for search attribute RecurSubscription")
	for name, err := range map[string]error{
		"from a start":              unmapped,
		"from an update-with-start": fmt.Errorf("failed workflow start: %w", unmapped),
	} {
		rec := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(rec)
		c.Request = newRequest(http.MethodPut, "/x", nil)
		writeError(c, slog.New(slog.DiscardHandler), err)
		require.Equal(t, http.StatusServiceUnavailable, rec.Code, name)
		require.Equal(t, retryAfterSeconds, rec.Header().Get("Retry-After"), name)
		require.Equal(t, "ServiceUnavailable", armAnswer(t, rec).Code, name)
	}
	status, _ := answer(t, serviceerror.NewInvalidArgument("some other invalid argument"))
	require.Equal(t, http.StatusInternalServerError, status, "other invalid arguments are not retried")
}
