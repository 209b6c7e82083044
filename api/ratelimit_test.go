package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRateLimitPerSubscription(t *testing.T) {
	const burst = 5
	h := New(nil, Options{Auth: testTokens(t), Logger: discardLogger(), RateLimit: RateLimit{PerSecond: 0.5, Burst: burst}})
	path := func(sub string) string {
		return "/subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
	}
	get := func(sub, token string) *http.Response {
		rec := serveHandler(h, http.MethodGet, path(sub), token)
		return rec.Result()
	}
	for i := range burst {
		// Past the limit, the missing api-version is the answer.
		require.Equal(t, http.StatusBadRequest, get("sub-a", tokenA).StatusCode, "request %d", i+1)
	}
	resp := get("sub-a", tokenA)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	retry, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.Equal(t, 2, retry, "one request every 2 s")
	require.Contains(t, readAll(t, resp), `"code":"TooManyRequests"`)
	require.Equal(t, http.StatusTooManyRequests, get("sub-a", tokenOp).StatusCode, "the limit is the subscription's, whoever asks")

	require.Equal(t, http.StatusBadRequest, get("sub-b", tokenOp).StatusCode, "another subscription has its own bucket")
	require.Equal(t, http.StatusNotFound, get("sub-b", tokenA).StatusCode)
	for range 2 * burst {
		// Refused requests take nothing from the bucket of the
		// subscription they name.
		require.Equal(t, http.StatusUnauthorized, get("sub-b", "").StatusCode)
		require.Equal(t, http.StatusNotFound, get("sub-b", tokenA).StatusCode)
	}
	require.Equal(t, http.StatusBadRequest, get("sub-b", tokenOp).StatusCode)
	for range 2 * burst {
		require.Equal(t, http.StatusOK, serveHandler(h, http.MethodGet, "/healthz", "").Code, "/healthz is never limited")
	}
}

func serveHandler(h http.Handler, method, path, token string) *httptest.ResponseRecorder {
	req := newRequest(method, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(data)
}

func TestRateLimitRefillsAndForgets(t *testing.T) {
	now := time.Now()
	l := newLimiters(RateLimit{PerSecond: 10, Burst: 2})
	l.now = func() time.Time { return now }
	require.Zero(t, l.wait("a"))
	require.Zero(t, l.wait("a"))
	d := l.wait("a")
	require.InDelta(t, 100*time.Millisecond, d, float64(time.Millisecond))
	now = now.Add(d)
	require.Zero(t, l.wait("a"), "a token came back")
	require.NotZero(t, l.wait("a"))

	// Buckets idle long enough to be full again are dropped on the next
	// sweep; the others stay.
	now = now.Add(time.Minute)
	require.Zero(t, l.wait("b"))
	require.Len(t, l.buckets, 1, "a refilled and was dropped; b is new")
	require.Zero(t, l.wait("b"))
	require.NotZero(t, l.wait("b"), "b keeps its bucket")

	require.Nil(t, newLimiters(RateLimit{}), "zero rate: no limit")
	require.Equal(t, 1, newLimiters(RateLimit{PerSecond: 1}).burst, "a burst of at least one")
}

func TestRateLimitMemoryIsBounded(t *testing.T) {
	now := time.Now()
	l := newLimiters(RateLimit{PerSecond: 1, Burst: 1000})
	l.now = func() time.Time { return now }
	for i := range maxLimiters + 100 {
		l.wait("sub-" + strconv.Itoa(i))
	}
	require.LessOrEqual(t, len(l.buckets), maxLimiters)
}
