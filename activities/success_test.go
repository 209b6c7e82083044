package activities

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

// TestSuccessRules: successStatusCodes and successBodyPattern decide an
// answer's success; one that fails them fails the attempt, retryably, and
// the failure says which rule.
func TestSuccessRules(t *testing.T) {
	// The body's verdict comes after 3 KiB of padding: past what history
	// keeps, within what the pattern sees.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusOK
		if r.URL.Path == "/gone" {
			status = http.StatusNotFound
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, strings.Repeat(" ", 3<<10)+`{"done":`+r.URL.Query().Get("done")+`}`)
	}))
	t.Cleanup(srv.Close)
	a := New(localPolicy)
	for _, tc := range []struct {
		name, path string
		codes      jobs.StatusCodes
		pattern    string
		failure    string // "" for success; else the failure's type
		message    string
	}{
		{"2xx by default", "/?done=true", nil, "", "", ""},
		{"a 404 the job expects", "/gone", jobs.StatusCodes{"404"}, "", "", ""},
		{"a class", "/gone", jobs.StatusCodes{"201", "4xx"}, "", "", ""},
		{"a 200 the job does not expect", "/?done=true", jobs.StatusCodes{"201"}, "", ErrTypeHTTPStatus, "200 OK, not one of successStatusCodes 201"},
		{"the body matches", "/?done=true", nil, `"done":true`, "", ""},
		{"the body does not match", "/?done=false", nil, `"done":true`, ErrTypeSuccessBody, "the body does not match successBodyPattern"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runHTTP(t, a, jobs.HTTPRequest{URI: srv.URL + tc.path, Method: "GET",
				SuccessStatusCodes: tc.codes, SuccessBodyPattern: tc.pattern})
			if tc.failure == "" {
				require.NoError(t, err)
				require.LessOrEqual(t, len(out.Body), jobs.MaxResponseBody, "history keeps its share of the body")
				return
			}
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "%v", err)
			require.Equal(t, tc.failure, appErr.Type())
			require.False(t, appErr.NonRetryable(), "retried per the policy")
			require.Contains(t, appErr.Message(), tc.message)
		})
	}
}
