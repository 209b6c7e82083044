package api

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDashboardIsServedWithoutAuthAndHoldsNoData: the page and its files
// need no token (the API behind them does), carry a policy that runs only
// their own script, and nothing else is served under /dashboard.
func TestDashboardIsServedWithoutAuthAndHoldsNoData(t *testing.T) {
	opts := Options{Namespace: "default", Auth: testTokens(t)}
	for path, ctype := range map[string]string{
		"/dashboard":               "text/html",
		"/dashboard/dashboard.js":  "text/javascript",
		"/dashboard/dashboard.css": "text/css",
	} {
		rec := serveWith(t, opts, http.MethodGet, path, "", "")
		require.Equal(t, http.StatusOK, rec.Code, path)
		require.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), ctype), path)
		require.Contains(t, rec.Header().Get("Content-Security-Policy"), "script-src 'self'", path)
		require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"), path)
	}
	page := serveWith(t, opts, http.MethodGet, "/dashboard", "", "").Body.String()
	require.NotRegexp(t, regexp.MustCompile(`(?i)<script>|\son[a-z]+=|https?://`), page,
		"no inline script, no inline handler, nothing from another site")

	rec := serveWith(t, opts, http.MethodGet, "/", "", "")
	require.Equal(t, http.StatusFound, rec.Code)
	require.Equal(t, "/dashboard", rec.Header().Get("Location"))
	for _, path := range []string{"/dashboard/index.go", "/dashboard/nothing.js", "/dashboard/..%2fdashboard.go", "/dashboard/x/y.js"} {
		require.Equal(t, http.StatusNotFound, serveWith(t, opts, http.MethodGet, path, "", "").Code, path)
	}
	// The data stays behind the token.
	require.Equal(t, http.StatusUnauthorized, serveWith(t, opts, http.MethodGet,
		"/subscriptions/sub-a/providers/Microsoft.Scheduler/jobCollections?api-version=2016-03-01", "", "").Code)
}
