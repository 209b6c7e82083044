package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLimitsAndMalformedInputAreClientErrors: every documented limit and
// every kind of bad input is a 4xx with the ARM envelope, never a 500.
func TestLimitsAndMalformedInputAreClientErrors(t *testing.T) {
	s := newStack(t)
	status, _ := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status)
	job := func(request map[string]any) map[string]any {
		return map[string]any{"properties": map[string]any{"action": map[string]any{"type": "Http", "request": request}}}
	}
	manyHeaders := map[string]string{}
	for i := range 51 {
		manyHeaders[fmt.Sprintf("X-H%d", i)] = "v"
	}
	for name, tc := range map[string]struct {
		body   any
		status int
		target string
	}{
		"uri longer than 2048": {job(map[string]any{"uri": "http://example.com/" + strings.Repeat("a", 2040), "method": "GET"}),
			http.StatusBadRequest, "properties.action.request.uri"},
		"more than 50 headers": {job(map[string]any{"uri": "http://example.com/", "method": "GET", "headers": manyHeaders}),
			http.StatusBadRequest, "properties.action.request.headers"},
		"headers over 4096 bytes": {job(map[string]any{"uri": "http://example.com/", "method": "GET",
			"headers": map[string]string{"X-Big": strings.Repeat("v", 4096)}}), http.StatusBadRequest, "properties.action.request.headers"},
		"body over 8192 characters": {job(map[string]any{"uri": "http://example.com/", "method": "POST", "body": strings.Repeat("x", 8193)}),
			http.StatusBadRequest, "properties.action.request.body"},
		"wrong JSON type": {map[string]any{"properties": map[string]any{"recurrence": map[string]any{"frequency": "Day", "interval": "two"}}},
			http.StatusBadRequest, "properties.recurrence.interval"},
		"job definition over 16 KiB": {job(map[string]any{"uri": "http://example.com/", "method": "POST", "body": strings.Repeat("x", 17*1024)}),
			http.StatusRequestEntityTooLarge, ""},
	} {
		t.Run(name, func(t *testing.T) {
			status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/limited", tc.body)
			require.Equal(t, tc.status, status, body)
			if tc.target != "" {
				require.Equal(t, tc.target, path(body, "error", "target"), fmt.Sprint(body))
			}
			require.NotEmpty(t, path(body, "error", "code"))
		})
	}
	for name, tc := range map[string]struct {
		contentType, body string
		status            int
	}{
		"malformed JSON":    {"application/json", `{"properties":`, http.StatusBadRequest},
		"not an object":     {"application/json", `[1,2]`, http.StatusBadRequest},
		"not JSON at all":   {"text/plain", `hello`, http.StatusUnsupportedMediaType},
		"form encoded":      {"application/x-www-form-urlencoded", `a=b`, http.StatusUnsupportedMediaType},
		"JSON with charset": {"application/json; charset=utf-8", `{"properties":`, http.StatusBadRequest},
	} {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPut, s.api.URL+collectionPath+"/jobs/raw?api-version=2016-03-01", bytes.NewBufferString(tc.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", tc.contentType)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode, string(data))
			require.Contains(t, string(data), `"error":{"code":`)
		})
	}
}
