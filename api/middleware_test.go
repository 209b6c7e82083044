package api

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// These requests never reach Temporal: the router answers them first.
func serve(t *testing.T, method, path, contentType, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	h := New(nil, Options{Namespace: "default"})
	req := newRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestARMPathSegmentsMatchInAnyCase(t *testing.T) {
	// Without api-version the answer is 400 once a route matched, 404 if
	// none did.
	for _, path := range []string{
		"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c",
		"/SUBSCRIPTIONS/s/resourcegroups/rg/PROVIDERS/microsoft.scheduler/JobCollections/c/JOBS/j",
		"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/j/HISTORY",
	} {
		rec := serve(t, http.MethodGet, path, "", "")
		require.Equal(t, http.StatusBadRequest, rec.Code, path)
		require.Contains(t, rec.Body.String(), "MissingApiVersionParameter", path)
	}
	rec := serve(t, http.MethodGet, "/subscriptions/s/resourceGroups/rg/providers/Other/jobCollections/c", "", "")
	require.Equal(t, http.StatusNotFound, rec.Code, "names stay case-sensitive where ARM's are fixed")
}

func TestEveryResponseCarriesARequestID(t *testing.T) {
	rec := serve(t, http.MethodGet, "/healthz", "", "")
	require.Len(t, rec.Header().Get(headerRequestID), 32)
	other := serve(t, http.MethodGet, "/healthz", "", "")
	require.NotEqual(t, rec.Header().Get(headerRequestID), other.Header().Get(headerRequestID))

	// A well-formed ID the client sends is the request's; anything else
	// (which could forge a log line) gets a random one.
	rec = serve(t, http.MethodGet, "/healthz", "", "", headerClientRequestID, "client-42")
	require.Equal(t, "client-42", rec.Header().Get(headerRequestID))
	require.Equal(t, "client-42", rec.Header().Get(headerClientRequestID), "echoed, as ARM does")
	rec = serve(t, http.MethodGet, "/healthz", "", "", headerXRequestID, "6f1c2a9e-0b7d-4e55-9a51-3c1e9f0d2b44")
	require.Equal(t, "6f1c2a9e-0b7d-4e55-9a51-3c1e9f0d2b44", rec.Header().Get(headerRequestID))
	for _, bad := range []string{`x" level=ERROR msg="forged`, strings.Repeat("a", 129), "a b", "ü"} {
		rec = serve(t, http.MethodGet, "/healthz", "", "", headerXRequestID, bad)
		require.Len(t, rec.Header().Get(headerRequestID), 32, "%q", bad)
	}
}

// TestRequestLogLinesCarryTheRequestID: the access log line and a line
// logged inside the request (a refused token's) both name the request.
func TestRequestLogLinesCarryTheRequestID(t *testing.T) {
	var logs strings.Builder
	tokens, err := ParseTokenList("a-token-for-tests-0123=sub-a")
	require.NoError(t, err)
	h := New(nil, Options{Namespace: "default", Auth: tokens,
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	req := newRequest(http.MethodPost, "/recur/v1/preview", nil)
	req.Header.Set(headerClientRequestID, "req-7")
	req.Header.Set("Authorization", "Bearer not-a-known-token-0123")
	h.ServeHTTP(httptest.NewRecorder(), req)
	var msgs []string
	for line := range strings.Lines(logs.String()) {
		var entry map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &entry), line)
		require.Equal(t, "req-7", entry[logKeyRequestID], line)
		msgs = append(msgs, entry["msg"].(string))
	}
	require.Equal(t, []string{"bearer token refused", "request"}, msgs)
	require.NotContains(t, logs.String(), "not-a-known-token")
}
