package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/internal/syncbuf"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
	"github.com/recurhq/recur/workflows"
)

// scrape reads /metrics as Prometheus does.
func scrape(t require.TestingT, base string, header ...string) map[string]*dto.MetricFamily {
	families, err := recurtest.Scrape(base, header...)
	require.NoError(t, err)
	return families
}

// sum is recurtest.Sum.
var sum = recurtest.Sum

const jobRoute = "/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/Microsoft.Scheduler/jobCollections/:jobCollectionName/jobs/:jobName"

// TestMetricsAndLogs runs a job that succeeds, one that fails and one
// that waits, then reads /metrics and the JSON log: the occurrence, run
// (by outcome), failure, fault and missed counters, the gauge of failing
// jobs, the lateness and duration
// histograms, jobs by state, the API's latency by route template, the
// SDK's own series; request, job and occurrence IDs in the log lines and
// no secret of a job's body anywhere in them.
func TestMetricsAndLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it waits for a failing run's retry and a postponed occurrence (about 12 s)")
	}
	const (
		password    = "metrics-basic-pa55word"
		bearer      = "metrics-bearer-token-0123456789"
		clientReqID = "client-req-42.metrics"
	)
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st, err := recurtest.StartWith(recurtest.Config{Logger: logger})
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	s := &stack{api: st.API, temporal: st.Temporal}
	okTarget, got := newTarget(t)
	failing := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	})
	t.Cleanup(failing.Close)

	coll := "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/metrics-coll"
	req, err := http.NewRequest(http.MethodPut, st.API.URL+coll+"?api-version=2016-03-01", strings.NewReader(`{"properties":{}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-ms-client-request-id", clientReqID)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.Equal(t, clientReqID, resp.Header.Get("x-ms-request-id"), "a well-formed client request ID is the request's ID")

	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	once := func(uri string, extra map[string]any) map[string]any {
		request := map[string]any{"uri": uri, "method": "post", "body": "hello"}
		for k, v := range extra {
			request[k] = v
		}
		return map[string]any{"properties": map[string]any{"startTime": start.Format(time.RFC3339),
			"action": map[string]any{"type": "http", "request": request, "retryPolicy": map[string]any{"retryType": "None"}}}}
	}
	status, body := s.do(t, http.MethodPut, coll+"/jobs/ok-job", once(okTarget.URL+"/ok", map[string]any{
		"authentication": map[string]any{"type": "basic", "username": "user1", "password": password}}))
	require.Equal(t, http.StatusCreated, status, body)
	status, body = s.do(t, http.MethodPut, coll+"/jobs/bad-job", once(failing.URL+"/bad", map[string]any{
		"headers": map[string]string{"Authorization": "Bearer " + bearer}}))
	require.Equal(t, http.StatusCreated, status, body)
	status, body = s.do(t, http.MethodPut, coll+"/jobs/later-job", map[string]any{"properties": map[string]any{
		"startTime":  time.Now().UTC().Add(time.Hour).Format(time.RFC3339),
		"action":     map[string]any{"type": "http", "request": map[string]any{"uri": okTarget.URL, "method": "GET"}},
		"recurrence": map[string]any{"frequency": "Hour", "interval": 1},
	}})
	require.Equal(t, http.StatusCreated, status, body)
	select {
	case <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the target received nothing")
	}
	for name, state := range map[string]string{"ok-job": "completed", "bad-job": "faulted"} {
		require.Eventually(t, func() bool {
			status, body = s.do(t, http.MethodGet, coll+"/jobs/"+name, nil)
			return status == http.StatusOK && path(body, "properties", "state") == state
		}, 30*time.Second, 200*time.Millisecond, "job %s: %v", name, body)
	}

	// An occurrence missed (recorded as Postponed, past its catch-up
	// window), on the real worker: a job whose workflow resumes half an
	// hour after its hourly occurrence, with a catch-up window of a
	// minute. It counts as missed, not as postponed (which overlap and
	// maxConcurrentRuns make).
	ghost := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "metrics-coll", Job: "ghost"}
	missed := time.Now().UTC().Add(-30 * time.Minute).Truncate(time.Second)
	j := jobs.Job{Properties: jobs.Properties{
		StartTime:     recurrence.At(missed),
		Action:        &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: okTarget.URL, Method: "GET"}}},
		Recurrence:    &recurrence.Recurrence{Frequency: "Hour"},
		CatchUpWindow: "PT1M",
	}}
	require.NoError(t, j.Accept(ghost, missed))
	_, err = st.Temporal.GetDefaultClient().ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID: ghost.JobWorkflowID(), TaskQueue: jobs.TaskQueue, TypedSearchAttributes: ghost.SearchAttributes(jobs.KindJob),
	}, jobs.JobWorkflowName, jobs.JobInput{Key: ghost, State: &jobs.JobState{Job: j, PlannedFrom: missed, Next: &missed}})
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 1.0, sum(scrape(c, st.API.URL), workflows.MetricMissed), "missed")
	}, 30*time.Second, 500*time.Millisecond)
	// Its part done, it is deleted: it counts in no state of the gauge.
	gone, err := st.Temporal.GetDefaultClient().UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		WorkflowID: ghost.JobWorkflowID(), UpdateName: jobs.UpdateDeleteJob, Args: []any{jobs.DeleteJobRequest{}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	require.NoError(t, err)
	require.NoError(t, gone.Get(context.Background(), nil))

	status, _ = s.do(t, http.MethodGet, coll+"/jobs/no-such-job-name", nil)
	require.Equal(t, http.StatusNotFound, status)
	nf, err := http.Get(st.API.URL + "/no/route/named-like-a-secret")
	require.NoError(t, err)
	nf.Body.Close()

	var families map[string]*dto.MetricFamily
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		families = scrape(c, st.API.URL)
		assert.Equal(c, 2.0, sum(families, workflows.MetricOccurrences), "occurrences")
		assert.Equal(c, 1.0, sum(families, workflows.MetricFailures), "failed attempts")
		assert.Equal(c, 1.0, sum(families, workflows.MetricFaults), "faults")
		assert.Equal(c, 1.0, sum(families, workflows.MetricMissed), "missed")
		assert.Equal(c, -1.0, sum(families, workflows.MetricPostponed), "no series of postponed: no run held another back")
		assert.Equal(c, 1.0, sum(families, workflows.MetricRuns, "outcome", workflows.OutcomeCompleted), "runs completed")
		assert.Equal(c, 1.0, sum(families, workflows.MetricRuns, "outcome", workflows.OutcomeFailed), "runs failed")
		assert.Equal(c, 0.0, sum(families, "recur_jobs_failing"), "the failed one-shot job faulted: it is no enabled job failing")
		assert.Equal(c, 2.0, sum(families, workflows.MetricLateness), "lateness observations")
		assert.Equal(c, 1.0, sum(families, activities.MetricActionDuration, "outcome", "succeeded"), "successful attempts")
		assert.Equal(c, 1.0, sum(families, activities.MetricActionDuration, "outcome", "failed"), "failed attempts")
		for state, want := range map[string]float64{"enabled": 1, "disabled": 0, "completed": 1, "faulted": 1} {
			assert.Equal(c, want, sum(families, "recur_jobs", "state", state), "jobs %s", state)
		}
	}, 30*time.Second, 500*time.Millisecond)
	lateness := families[workflows.MetricLateness].GetMetric()[0].GetHistogram()
	require.Less(t, lateness.GetSampleSum(), 2*20.0, "each run started within 20 s of its nominal time")
	require.Greater(t, sum(families, "temporal_request_total"), 0.0, "the SDK's own series are in the same registry")
	require.Greater(t, sum(families, "temporal_workflow_task_execution_latency_seconds"), 0.0)
	require.Greater(t, sum(families, "temporal_activity_execution_latency_seconds")+sum(families, "temporal_local_activity_execution_latency_seconds"), 0.0,
		"actions run as local activities, and activities past their budget")

	requests := "recur_api_request_duration_seconds"
	require.Equal(t, 3.0, sum(families, requests, "method", "PUT", "route", jobRoute, "status", "201"))
	require.GreaterOrEqual(t, sum(families, requests, "method", "GET", "route", jobRoute, "status", "404"), 1.0)
	require.Equal(t, 1.0, sum(families, requests, "route", "unmatched", "status", "404"))
	require.Equal(t, 3.0, sum(families, "recur_api_lease_slot_wait_seconds"), "each new job's PUT waited once for a slot of a lease")
	for _, m := range families[requests].GetMetric() {
		for _, l := range m.GetLabel() {
			for _, name := range []string{"metrics-coll", "ok-job", "no-such-job-name", "named-like-a-secret"} {
				require.NotContains(t, l.GetValue(), name, "labels hold route templates, never names")
			}
		}
	}

	status, body = s.do(t, http.MethodPatch, coll+"/jobs/later-job", map[string]any{"properties": map[string]any{"state": "Disabled"}})
	require.Equal(t, http.StatusOK, status, body)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		families = scrape(c, st.API.URL)
		assert.Equal(c, 0.0, sum(families, "recur_jobs", "state", "enabled"))
		assert.Equal(c, 1.0, sum(families, "recur_jobs", "state", "disabled"))
	}, 30*time.Second, time.Second, "the gauge follows a disable within its 5 s cache")

	// Scrapes share one count of every state (4 queries) per 5 s: ten
	// scrapes within 3 s cost at most two rounds, not ten. The SDK's own
	// request counter, reported every second, tells.
	counts := func() float64 {
		time.Sleep(1500 * time.Millisecond) // the SDK's series reach the registry every second
		return sum(scrape(t, st.API.URL), "temporal_request_total", "operation", "CountWorkflowExecutions")
	}
	before := counts()
	require.Greater(t, before, 0.0)
	for range 10 {
		scrape(t, st.API.URL)
	}
	require.LessOrEqual(t, counts()-before, 8.0)

	checkLogs(t, logs.String(), clientReqID, password, bearer)
}

// checkLogs: every line is JSON; every API request line carries a request
// ID, the client's where it sent one; the activities' and the run
// workflow's lines carry the job's and the occurrence's IDs; no secret of
// a job body appears.
func checkLogs(t *testing.T, logs, clientReqID string, secrets ...string) {
	t.Helper()
	for _, secret := range secrets {
		require.NotContains(t, logs, secret)
	}
	require.NotContains(t, logs, "metric not registered", "every series of the SDK and recur fits the registry")
	var requests, actions, runs int
	sawClientID := false
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line), "not JSON: %s", sc.Text())
		require.NotEmpty(t, line["level"])
		switch line["msg"] {
		case "request":
			requests++
			id, _ := line["requestId"].(string)
			require.NotEmpty(t, id, "%s", sc.Text())
			sawClientID = sawClientID || id == clientReqID
		case "http action", "occurrence ran":
			if line["msg"] == "http action" {
				actions++
			} else {
				runs++
			}
			job, _ := line["jobId"].(string)
			occurrence, _ := line["occurrenceId"].(string)
			require.Contains(t, []string{"job:sub1/rg1/metrics-coll/ok-job", "job:sub1/rg1/metrics-coll/bad-job"}, job, "%s", sc.Text())
			require.True(t, strings.HasPrefix(occurrence, job+"@"), "%s", sc.Text())
			require.Equal(t, line["WorkflowID"], job, "the occurrence runs in its job's workflow: %s", sc.Text())
		}
	}
	require.NoError(t, sc.Err())
	require.Greater(t, requests, 5)
	require.True(t, sawClientID, "the client's request ID is in the access log")
	require.Equal(t, 2, actions, "one attempt of each job")
	require.Equal(t, 2, runs)
}

// TestMetricsNeedAnOperatorWithAuthentication: with tokens, /metrics
// answers operators only (the counts span every tenant); probes stay open.
func TestMetricsNeedAnOperatorWithAuthentication(t *testing.T) {
	tokens, err := api.ParseTokenList(tokenTenantA + "=sub-a;" + tokenOps + "=*")
	require.NoError(t, err)
	st, err := recurtest.StartWith(recurtest.Config{Auth: tokens})
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	for token, want := range map[string]int{"": http.StatusUnauthorized, tokenTenantA: http.StatusForbidden, tokenOps: http.StatusOK} {
		req, err := http.NewRequest(http.MethodGet, st.API.URL+"/metrics", nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, "token %q: %s", token, data)
		if want == http.StatusOK {
			require.Contains(t, string(data), "recur_jobs{state=\"enabled\"}")
		}
	}
}
