package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/server/temporaltest"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/jobs"
)

// stack is a running recur: Temporal in process, a worker and the API.
type stack struct {
	api      *httptest.Server
	temporal *temporaltest.TestServer
	recur    *recurtest.Stack
}

// newStack starts a stack for the test; opts configure its activities
// (endpoints of emulators, for one).
func newStack(t testing.TB, opts ...func(*activities.Activities)) *stack {
	t.Helper()
	return newStackWith(t, recurtest.Config{Activities: opts})
}

// smoke is the one end-to-end test that -short keeps: a job fires through
// the API, the worker and Temporal and answers GET. The others are
// scenarios that take seconds to a minute each of real time; go test ./...
// runs them all.
const smoke = "TestJobFiresEndToEnd"

// newStackWith starts a stack for the test as cfg says.
func newStackWith(t testing.TB, cfg recurtest.Config) *stack {
	t.Helper()
	if testing.Short() && strings.Split(t.Name(), "/")[0] != smoke {
		t.Skip("-short: an end-to-end scenario; -short keeps one, " + smoke + ", and go test ./... runs them all")
	}
	st, err := recurtest.StartWith(cfg)
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	return &stack{api: st.API, temporal: st.Temporal, recur: st}
}

const collectionPath = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/coll1"

// do sends a request with api-version and returns the status and the
// decoded JSON body (nil when empty): an operation's, once it has ended.
func (s *stack) do(t testing.TB, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.api.URL+path+"?api-version=2016-03-01", rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := followed(http.DefaultClient, req)
	require.NoError(t, err, "%s %s", method, path)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	if len(data) > 0 {
		require.NoError(t, json.Unmarshal(data, &out), string(data))
	}
	return resp.StatusCode, out
}

// followed sends req and follows an operation's 202 (a collection's
// DELETE, enable or disable) to its end, as Azure's SDKs do: it returns
// the answer of the operation's Location once it is not 202, each GET of
// which waits up to two seconds for the end. Any other answer is returned
// as it is.
func followed(client *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := client.Do(req)
	for polls := 0; err == nil && resp.StatusCode == http.StatusAccepted && strings.Contains(resp.Header.Get("Location"), "/operations/"); polls++ {
		resp.Body.Close()
		if polls == 30 {
			return nil, fmt.Errorf("the operation at %s still runs after 30 polls", resp.Header.Get("Location"))
		}
		resp, err = client.Get(resp.Header.Get("Location"))
	}
	return resp, err
}

// putCollection creates collectionPath, of sku Standard.
func (s *stack) putCollection(t *testing.T) {
	t.Helper()
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"location": "westus",
		"properties": map[string]any{"sku": map[string]any{"name": "standard"}}})
	require.Equal(t, http.StatusCreated, status, body)
}

// received is one request a target got.
type received struct {
	method string
	header http.Header
	body   string
}

// newJobTarget serves h as the target of a test's jobs. A gRPC client of
// an earlier test's stopped Temporal server may redial the port the
// target was given: its HTTP/2 preface ("PRI * HTTP/2.0") is no job's
// request, and h never sees it.
func newJobTarget(h http.HandlerFunc) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "PRI" {
			return
		}
		h(w, r)
	}))
}

// newTarget is a real HTTP endpoint that records what it receives.
func newTarget(t testing.TB) (*httptest.Server, chan received) {
	got := make(chan received, 16)
	srv := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{method: r.Method, header: r.Header.Clone(), body: string(body)}
		w.WriteHeader(http.StatusOK)
	})
	t.Cleanup(srv.Close)
	return srv, got
}

func path(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[k]
	}
	return v
}

func TestJobFiresEndToEnd(t *testing.T) {
	s := newStack(t)
	target, got := newTarget(t)

	status, coll := s.do(t, http.MethodPut, collectionPath, map[string]any{
		"location": "westus", "properties": map[string]any{"sku": map[string]any{"name": "standard"}},
	})
	require.Equal(t, http.StatusCreated, status, coll)
	require.Equal(t, "Standard", path(coll, "properties", "sku", "name"))
	require.Equal(t, "enabled", path(coll, "properties", "state"))
	status, _ = s.do(t, http.MethodPut, collectionPath, map[string]any{"location": "westus", "properties": map[string]any{}})
	require.Equal(t, http.StatusOK, status, "a second PUT updates")
	status, coll = s.do(t, http.MethodGet, collectionPath, nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, collectionPath, coll["id"])

	start := time.Now().UTC().Add(3 * time.Second).Truncate(time.Second)
	jobPath := collectionPath + "/jobs/once"
	status, job := s.do(t, http.MethodPut, jobPath, map[string]any{"properties": map[string]any{
		"startTime": start.Format(time.RFC3339),
		"action": map[string]any{"type": "http", "request": map[string]any{
			"uri": target.URL + "/hook", "method": "post", "body": "hello", "headers": map[string]string{"X-Test": "yes"},
		}},
	}})
	require.Equal(t, http.StatusCreated, status, job)
	require.Equal(t, "enabled", path(job, "properties", "state"))
	require.Equal(t, start.Format(time.RFC3339), path(job, "properties", "status", "nextExecutionTime"))
	require.EqualValues(t, 0, path(job, "properties", "status", "executionCount"))

	select {
	case r := <-got:
		require.Equal(t, http.MethodPost, r.method)
		require.Equal(t, "yes", r.header.Get("X-Test"))
		require.Equal(t, "hello", r.body)
		require.Equal(t, "job:sub1/rg1/coll1/once@"+start.Format(time.RFC3339), r.header.Get(activities.HeaderIdempotencyKey))
		require.Equal(t, "once", r.header.Get(activities.HeaderJobID))
	case <-time.After(30 * time.Second):
		t.Fatal("the target received nothing")
	}
	require.Eventually(t, func() bool {
		status, job = s.do(t, http.MethodGet, jobPath, nil)
		return status == http.StatusOK && path(job, "properties", "state") == "completed"
	}, 20*time.Second, 200*time.Millisecond, "job: %v", job)
	// The occurrence ran as a local activity of the job's workflow (its
	// target answers within the budget): it has no workflow of its own. Its events precede the workflow task that
	// completes the job, so they are there once GET says completed.
	c := s.temporal.GetDefaultClient()
	_, err := c.DescribeWorkflowExecution(context.Background(), "job:sub1/rg1/coll1/once@"+start.Format(time.RFC3339), "")
	var notFound *serviceerror.NotFound
	require.ErrorAs(t, err, &notFound)
	require.True(t, s.hasActivity(t, "job:sub1/rg1/coll1/once", "FirstAttempt"),
		"the job's history records the action")
	require.EqualValues(t, 1, path(job, "properties", "status", "executionCount"))
	require.NotEmpty(t, path(job, "properties", "status", "lastExecutionTime"))
	require.Nil(t, path(job, "properties", "status", "nextExecutionTime"))

	// Completed is final.
	status, body := s.do(t, http.MethodPut, jobPath, map[string]any{"properties": map[string]any{
		"action": map[string]any{"type": "http", "request": map[string]any{"uri": target.URL, "method": "GET"}},
	}})
	require.Equal(t, http.StatusConflict, status, body)

	// A completed job stays readable until it is deleted.
	status, _ = s.do(t, http.MethodDelete, jobPath, nil)
	require.Equal(t, http.StatusOK, status)
	status, body = s.do(t, http.MethodGet, jobPath, nil)
	require.Equal(t, http.StatusNotFound, status, body)
	status, _ = s.do(t, http.MethodDelete, jobPath, nil)
	require.Equal(t, http.StatusNotFound, status, "a second DELETE finds nothing")
}

func TestRecurringJobPlansNextAndDeletes(t *testing.T) {
	s := newStack(t)
	target, got := newTarget(t)
	status, _ := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status)

	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	jobPath := collectionPath + "/jobs/every-minute"
	status, job := s.do(t, http.MethodPut, jobPath, map[string]any{"properties": map[string]any{
		"startTime":  start.Format(time.RFC3339),
		"action":     map[string]any{"type": "Http", "request": map[string]any{"uri": target.URL, "method": "GET"}},
		"recurrence": map[string]any{"frequency": "Minute", "interval": 1},
	}})
	require.Equal(t, http.StatusCreated, status, job)
	require.Equal(t, "minute", path(job, "properties", "recurrence", "frequency"))

	select {
	case <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the target received nothing")
	}
	next := start.Add(time.Minute).Format(time.RFC3339)
	require.Eventually(t, func() bool {
		status, job = s.do(t, http.MethodGet, jobPath, nil)
		return status == http.StatusOK && path(job, "properties", "status", "nextExecutionTime") == next &&
			path(job, "properties", "status", "executionCount") == float64(1)
	}, 20*time.Second, 200*time.Millisecond, "job: %v", job)
	require.Equal(t, "enabled", path(job, "properties", "state"))
	require.EqualValues(t, 1, path(job, "properties", "status", "executionCount"))

	status, _ = s.do(t, http.MethodDelete, jobPath, nil)
	require.Equal(t, http.StatusOK, status)
	status, body := s.do(t, http.MethodGet, jobPath, nil)
	require.Equal(t, http.StatusNotFound, status, body)
	require.Equal(t, jobs.CodeNotFound, path(body, "error", "code"))
}

func TestAPIErrors(t *testing.T) {
	s := newStack(t)
	t.Run("healthz and readyz", func(t *testing.T) {
		for _, p := range []string{"/healthz", "/readyz"} {
			resp, err := http.Get(s.api.URL + p)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode, p)
		}
	})
	t.Run("api-version is required", func(t *testing.T) {
		resp, err := http.Get(s.api.URL + collectionPath)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	})
	t.Run("a job needs its collection", func(t *testing.T) {
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/j", map[string]any{"properties": map[string]any{
			"action": map[string]any{"type": "http", "request": map[string]any{"uri": "http://example.invalid", "method": "GET"}},
		}})
		require.Equal(t, http.StatusNotFound, status, body)
	})
	t.Run("a missing collection is 404", func(t *testing.T) {
		status, body := s.do(t, http.MethodGet, collectionPath, nil)
		require.Equal(t, http.StatusNotFound, status, body)
	})
	t.Run("a bad recurrence is 400 with its path", func(t *testing.T) {
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/j", map[string]any{"properties": map[string]any{
			"action":     map[string]any{"type": "http", "request": map[string]any{"uri": "http://example.invalid", "method": "GET"}},
			"recurrence": map[string]any{"frequency": "Day", "interval": 1000},
		}})
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Equal(t, "properties.recurrence.interval", path(body, "error", "target"), fmt.Sprint(body))
	})
}

func TestPatchDisablesAndEnablesAndRunNowRunsOnce(t *testing.T) {
	s := newStack(t)
	target, got := newTarget(t)
	status, _ := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status)
	jobPath := collectionPath + "/jobs/hourly"
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	status, job := s.do(t, http.MethodPut, jobPath, map[string]any{"properties": map[string]any{
		"startTime":  start.Format(time.RFC3339),
		"action":     map[string]any{"type": "Http", "request": map[string]any{"uri": target.URL, "method": "GET"}},
		"recurrence": map[string]any{"frequency": "Hour", "count": 5},
	}})
	require.Equal(t, http.StatusCreated, status, job)

	status, job = s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"state": "disabled"}})
	require.Equal(t, http.StatusOK, status, job)
	require.Equal(t, "disabled", path(job, "properties", "state"))
	require.Equal(t, "hour", path(job, "properties", "recurrence", "frequency"), "PATCH keeps what it does not name")

	status, _ = s.do(t, http.MethodPost, jobPath+"/run", nil)
	require.Equal(t, http.StatusOK, status)
	select {
	case r := <-got:
		require.Contains(t, r.header.Get(activities.HeaderIdempotencyKey), "/run-now")
	case <-time.After(30 * time.Second):
		t.Fatal("run now ran nothing")
	}
	require.Eventually(t, func() bool {
		status, job = s.do(t, http.MethodGet, jobPath, nil)
		return path(job, "properties", "status", "executionCount") == float64(1)
	}, 20*time.Second, 200*time.Millisecond)
	require.Equal(t, "disabled", path(job, "properties", "state"))

	status, job = s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"state": "Enabled"}})
	require.Equal(t, http.StatusOK, status, job)
	require.Equal(t, start.Format(time.RFC3339), path(job, "properties", "status", "nextExecutionTime"))
	require.EqualValues(t, 1, path(job, "properties", "status", "executionCount"), "counters are kept")

	status, body := s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"recurrence": map[string]any{"interval": 0}}})
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "properties.recurrence.interval", path(body, "error", "target"))
}

// hasActivity reports whether the workflow's history records an activity
// of the given type, or a local activity's marker of it.
func (s *stack) hasActivity(t *testing.T, workflowID, activityType string) bool {
	t.Helper()
	iter := s.temporal.GetDefaultClient().GetWorkflowHistory(context.Background(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		if a := e.GetActivityTaskScheduledEventAttributes(); a.GetActivityType().GetName() == activityType {
			return true
		}
		if s.localActivity(e) == activityType {
			return true
		}
	}
	return false
}

// localActivity returns the type of the local activity whose marker e
// is, "" when e is none.
func (s *stack) localActivity(e *historypb.HistoryEvent) string {
	m := e.GetMarkerRecordedEventAttributes()
	if m.GetMarkerName() != "LocalActivity" {
		return ""
	}
	var data struct{ ActivityType string }
	dc := converter.GetDefaultDataConverter()
	if s.recur.Keys != nil {
		dc = codec.DataConverter(s.recur.Keys)
	}
	if p := m.GetDetails()["data"].GetPayloads(); len(p) == 0 || dc.FromPayload(p[0], &data) != nil {
		return ""
	}
	return data.ActivityType
}
