package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadsNeedNoWorker stops every worker and reads everything again:
// GET of a job and of a collection, job lists of any state and of one,
// collection lists, history and a saved job's preview answer at once with what Temporal
// persisted, as they did with the workers up. A read that queried a
// workflow would wait for a worker until the API's timeout.
func TestReadsNeedNoWorker(t *testing.T) {
	const previewPath = "/recur/v1/subscriptions/sub1/resourceGroups/rg1/jobCollections/coll1/jobs/hourly/preview"
	t.Parallel()
	s := newStack(t)
	target, got := newTarget(t)
	s.putCollection(t)
	action := map[string]any{"type": "http", "request": map[string]any{"uri": target.URL + "/hook", "method": "post"}}
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/once", map[string]any{"properties": map[string]any{
		"startTime": time.Now().UTC().Format(time.RFC3339), "action": action}})
	require.Equal(t, http.StatusCreated, status, body)
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/hourly", map[string]any{"properties": map[string]any{
		"startTime": time.Now().UTC().Add(time.Hour).Format(time.RFC3339), "action": action,
		"recurrence": map[string]any{"frequency": "hour", "interval": 1}}})
	require.Equal(t, http.StatusCreated, status, body)
	select {
	case <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the one-time job did not run")
	}
	completed := url.Values{"$filter": {"state eq 'completed'"}}
	s.listEventually(t, collectionPath+"/jobs", completed, jobNames, []string{"once"})
	s.listEventually(t, collectionPath+"/jobs", nil, jobNames, []string{"hourly", "once"})
	s.listEventually(t, rg1Path, nil, listIDs, []string{collectionPath})
	require.Eventually(t, func() bool {
		status, body := s.get(t, collectionPath+"/jobs/once/history", nil)
		return status == http.StatusOK && len(historyRows(t, body)) == 1
	}, 20*time.Second, 100*time.Millisecond, "the run's history row")

	reads := []struct {
		path  string
		query url.Values
	}{
		{collectionPath, nil},
		{collectionPath + "/jobs/once", nil},
		{collectionPath + "/jobs/hourly", nil},
		{collectionPath + "/jobs", nil},
		{collectionPath + "/jobs", completed},
		{collectionPath + "/jobs/once/history", nil},
		{rg1Path, nil},
		{subscriptionPath, nil},
		{previewPath, url.Values{"count": {"3"}}},
	}
	before := make([]string, len(reads))
	for i, r := range reads {
		status, body := s.get(t, r.path, r.query)
		if r.path == previewPath {
			require.Len(t, body["value"], 3, "the hourly job's next three runs: %v", body)
		}
		require.Equal(t, http.StatusOK, status, "%s %v: %v", r.path, r.query, body)
		data, err := json.Marshal(body)
		require.NoError(t, err)
		before[i] = string(data)
	}

	s.recur.StopWorkers()
	client := http.Client{Timeout: 5 * time.Second}
	for i, r := range reads {
		query := url.Values{"api-version": {"2016-03-01"}}
		for k, v := range r.query {
			query[k] = v
		}
		resp, err := client.Get(s.api.URL + r.path + "?" + query.Encode())
		require.NoError(t, err, "%s %v: answered without a worker", r.path, r.query)
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s %v: %s", r.path, r.query, data)
		assert.JSONEq(t, before[i], string(data), "%s %v: the last written state", r.path, r.query)
	}
}
