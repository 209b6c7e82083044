package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/internal/syncbuf"
)

// TestSplitRolesServeMetricsAndLogs runs `recur worker --metrics-addr
// --log-format text` and `recur api` (JSON logs by default) against one
// Temporal server: the worker serves its own /metrics (the SDK's series
// and the occurrence it ran), the API its /metrics on the API port (jobs
// by state, request latency).
func TestSplitRolesServeMetricsAndLogs(t *testing.T) {
	bin := buildRecur(t)
	srv := startCluster(t, t.TempDir(), freePort(t))
	defer srv.Stop()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer target.Close()

	metricsURL := "http://127.0.0.1:" + strconv.Itoa(freePort(t))
	w := &devProcess{output: &syncbuf.Buffer{}, done: make(chan error, 1)}
	w.launch(t, bin, "worker", "--temporal-address", srv.FrontendAddress(), "--namespace", "recur-cluster",
		"--egress-allow-loopback", "--encryption-key-file", testKeyFile(t),
		"--metrics-addr", strings.TrimPrefix(metricsURL, "http://"), "--log-format", "text")
	a := &devProcess{api: "http://127.0.0.1:" + strconv.Itoa(freePort(t)), output: &syncbuf.Buffer{}, done: make(chan error, 1)}
	a.start(t, bin, "api", "--temporal-address", srv.FrontendAddress(), "--namespace", "recur-cluster",
		"--encryption-key-file", testKeyFile(t), "--http-addr", strings.TrimPrefix(a.api, "http://"))

	coll := "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
	status, body := a.do(t, http.MethodPut, coll, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	status, body = a.do(t, http.MethodPut, coll+"/jobs/once", map[string]any{"properties": map[string]any{
		"startTime": time.Now().UTC().Add(2 * time.Second).Format(time.RFC3339),
		"action":    map[string]any{"type": "Http", "request": map[string]any{"uri": target.URL, "method": "GET"}},
	}})
	require.Equal(t, http.StatusCreated, status, body)

	var (
		families map[string]*dto.MetricFamily
		err      error
	)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		families, err = recurtest.Scrape(metricsURL)
		if !assert.NoError(c, err) {
			return
		}
		assert.Equal(c, 1.0, recurtest.Sum(families, "recur_occurrences_total"))
		assert.Equal(c, 1.0, recurtest.Sum(families, "recur_action_duration_seconds", "outcome", "succeeded"))
	}, 60*time.Second, 500*time.Millisecond, "worker log:\n%s", w.output)
	require.Greater(t, recurtest.Sum(families, "temporal_workflow_task_queue_poll_succeed_total"), 0.0)
	require.Equal(t, -1.0, recurtest.Sum(families, "recur_jobs"), "jobs by state are the API's")

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		families, err = recurtest.Scrape(a.api)
		if !assert.NoError(c, err) {
			return
		}
		assert.Equal(c, 1.0, recurtest.Sum(families, "recur_jobs", "state", "completed"))
	}, 30*time.Second, 500*time.Millisecond)
	require.Greater(t, recurtest.Sum(families, "recur_api_request_duration_seconds", "method", "PUT", "status", "201"), 1.0)
	require.Greater(t, recurtest.Sum(families, "temporal_request_total"), 0.0, "the API's client reports too")

	a.stop(t, syscall.SIGTERM)
	w.stop(t, syscall.SIGTERM)
	for line := range strings.Lines(a.output.String()) {
		var entry map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &entry), "recur api logs JSON lines: %s", line)
	}
	require.Contains(t, a.output.String(), `"msg":"REST API listening"`)
	worker := w.output.String()
	require.Contains(t, worker, `level=INFO msg="metrics listening"`)
	require.Contains(t, worker, `msg="http action"`)
	require.Contains(t, worker, "jobId=job:s/rg/c/once occurrenceId=job:s/rg/c/once@")
	require.NotContains(t, worker, `"level":`, "--log-format text")
}

func TestLogFormats(t *testing.T) {
	for format, want := range map[string]string{"json": `{"time":`, "JSON": `{"time":`, "text": "time="} {
		var out strings.Builder
		log, err := (&common{logLevel: "info", logFormat: format}).logger(&out)
		require.NoError(t, err, format)
		log.Info("hello", "jobId", "job:s/rg/c/j")
		require.True(t, strings.HasPrefix(out.String(), want), "%s: %s", format, out.String())
	}
	_, err := (&common{logLevel: "info", logFormat: "logfmt"}).logger(io.Discard)
	require.ErrorContains(t, err, `--log-format: want json or text, not "logfmt"`)
}
