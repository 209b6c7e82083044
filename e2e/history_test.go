package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/activities"
)

// failingTarget answers every request with 500 and keeps the
// idempotency key of each.
type failingTarget struct {
	*httptest.Server
	mu   sync.Mutex
	keys []string
}

func newFailingTarget(t *testing.T) *failingTarget {
	f := &failingTarget{}
	f.Server = newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.keys = append(f.keys, r.Header.Get(activities.HeaderIdempotencyKey))
		f.mu.Unlock()
		http.Error(w, "target is down", http.StatusInternalServerError)
	})
	t.Cleanup(f.Close)
	return f
}

func (f *failingTarget) hits() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.keys...)
}

// get sends a GET to the API with api-version and the given query
// parameters and decodes the JSON answer.
func (s *stack) get(t testing.TB, path string, query url.Values) (int, map[string]any) {
	t.Helper()
	if query == nil {
		query = url.Values{}
	}
	query.Set("api-version", "2016-03-01")
	return getURL(t, s.api.URL+path+"?"+query.Encode())
}

func getURL(t testing.TB, u string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(data, &out), string(data))
	return resp.StatusCode, out
}

// historyRows returns the properties of each row of a history answer.
func historyRows(t *testing.T, body map[string]any) []map[string]any {
	t.Helper()
	value, ok := body["value"].([]any)
	require.True(t, ok, "value is an array: %v", body)
	rows := make([]map[string]any, len(value))
	for i, v := range value {
		rows[i] = path(v.(map[string]any), "properties").(map[string]any)
	}
	return rows
}

// TestFailedRunRetriesAndHistory runs a one-time job whose target always
// fails: the action is tried 1+2 times 15 s apart (the minimum interval),
// then the error action runs once, the job ends Faulted and its history
// holds both rows. It takes about 35 s.
func TestFailedRunRetriesAndHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: its retries are 15 s apart, the least an interval may be (about 35 s)")
	}
	t.Parallel() // it waits on timers: beside the others (TestMain)
	s := newStack(t)
	failing := newFailingTarget(t)
	errTarget, errGot := newTarget(t)
	status, _ := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status)

	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	jobPath := collectionPath + "/jobs/flaky"
	historyPath := jobPath + "/history"
	status, job := s.do(t, http.MethodPut, jobPath, map[string]any{"properties": map[string]any{
		"startTime": start.Format(time.RFC3339),
		"action": map[string]any{
			"type":        "Http",
			"request":     map[string]any{"uri": failing.URL + "/work", "method": "POST", "body": "x"},
			"retryPolicy": map[string]any{"retryType": "Fixed", "retryCount": 2, "retryInterval": "PT15S"},
			"errorAction": map[string]any{
				"type":    "Http",
				"request": map[string]any{"uri": errTarget.URL + "/compensate", "method": "POST"},
			},
		},
	}})
	require.Equal(t, http.StatusCreated, status, job)

	status, body := s.get(t, historyPath, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Empty(t, historyRows(t, body), "no run yet")

	occurrence := "job:sub1/rg1/coll1/flaky@" + start.Format(time.RFC3339)
	select {
	case r := <-errGot:
		require.Equal(t, occurrence, r.header.Get(activities.HeaderIdempotencyKey))
	case <-time.After(90 * time.Second):
		t.Fatalf("the error action never ran; the failing target got %d requests", len(failing.hits()))
	}

	require.Eventually(t, func() bool {
		status, job = s.do(t, http.MethodGet, jobPath, nil)
		return status == http.StatusOK && path(job, "properties", "state") != "enabled"
	}, 30*time.Second, 200*time.Millisecond, "job: %v", job)
	require.Equal(t, "faulted", path(job, "properties", "state"), "job: %v", job)
	require.EqualValues(t, 1, path(job, "properties", "status", "executionCount"), "job: %v", job)
	require.EqualValues(t, 3, path(job, "properties", "status", "failureCount"), "job: %v", job)
	require.EqualValues(t, 1, path(job, "properties", "status", "faultedCount"), "job: %v", job)

	// The run is over: every attempt has been made.
	require.Equal(t, []string{occurrence, occurrence, occurrence}, failing.hits(), "1 attempt + 2 retries, one idempotency key")

	var rows []map[string]any
	require.Eventually(t, func() bool {
		status, body = s.get(t, historyPath, nil)
		if status != http.StatusOK {
			return false
		}
		rows = historyRows(t, body)
		return len(rows) == 2
	}, 20*time.Second, 200*time.Millisecond, "history: %v", body)
	require.Nil(t, body["nextLink"])
	// Newest first: the error action ran after the main action.
	require.Equal(t, "ErrorAction", rows[0]["actionName"], "rows: %v", rows)
	require.Equal(t, "Completed", rows[0]["status"])
	require.Equal(t, "MainAction", rows[1]["actionName"])
	require.Equal(t, "Failed", rows[1]["status"])
	require.EqualValues(t, 2, rows[1]["retryCount"])
	require.Contains(t, rows[1]["message"], "500")
	require.Equal(t, start.Format(time.RFC3339), rows[1]["expectedExecutionTime"])
	entry := body["value"].([]any)[1].(map[string]any)
	require.Equal(t, "Microsoft.Scheduler/jobCollections/jobs/history", entry["type"])
	require.Contains(t, entry["id"], "/jobCollections/coll1/jobs/flaky/history/")
	require.Contains(t, entry["name"], "coll1/flaky/")

	status, body = s.get(t, historyPath, url.Values{"$filter": {"status eq 'Failed'"}})
	require.Equal(t, http.StatusOK, status, body)
	filtered := historyRows(t, body)
	require.Len(t, filtered, 2, "the failed run's rows, its completed error action included")
	require.Equal(t, rows, filtered)

	status, body = s.get(t, historyPath, url.Values{"$filter": {"status eq 'postponed'"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Empty(t, historyRows(t, body))
	require.Nil(t, body["nextLink"])

	status, body = s.get(t, historyPath, url.Values{"$filter": {"state eq 'Enabled'"}})
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "InvalidFilter", path(body, "error", "code"))

	status, body = s.get(t, historyPath, url.Values{"$top": {"1"}})
	require.Equal(t, http.StatusOK, status, body)
	page := historyRows(t, body)
	require.Len(t, page, 1)
	require.Equal(t, "ErrorAction", page[0]["actionName"])
	next, ok := body["nextLink"].(string)
	require.True(t, ok, "a nextLink: %v", body)
	status, body = getURL(t, next)
	require.Equal(t, http.StatusOK, status, body)
	page = historyRows(t, body)
	require.Len(t, page, 1)
	require.Equal(t, "MainAction", page[0]["actionName"])
	require.Nil(t, body["nextLink"])

	status, body = s.get(t, collectionPath+"/jobs/nope/history", nil)
	require.Equal(t, http.StatusNotFound, status, body)

	require.Empty(t, errGot, "the error action ran once")
	require.Len(t, failing.hits(), 3)
}
