package e2e

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
)

// TestFailingJobsAreOneFilterAway: a job workflow keeps its last run's
// outcome in RecurStatus, so Temporal's visibility finds the jobs whose
// last run failed, and a job that succeeds again leaves that list.
func TestFailingJobsAreOneFilterAway(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	var failing atomic.Bool
	failing.Store(true)
	target := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/flaky" && failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	t.Cleanup(target.Close)
	s.putCollection(t)
	for _, name := range []string{"flaky", "fine"} {
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/"+name, map[string]any{"properties": map[string]any{
			"startTime": time.Now().UTC().Add(time.Hour).Format(time.RFC3339),
			"action": map[string]any{"type": "http", "retryPolicy": map[string]any{"retryType": "none"},
				"request": map[string]any{"uri": target.URL + "/" + name, "method": "post"}},
			"recurrence": map[string]any{"frequency": "hour"}}})
		require.Equal(t, http.StatusCreated, status, body)
		status, body = s.do(t, http.MethodPost, collectionPath+"/jobs/"+name+"/run", nil)
		require.Equal(t, http.StatusOK, status, body)
	}
	c := s.temporal.GetDefaultClient()
	jobsWhose := func(outcome string) []string {
		resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: `RecurKind = 'job' AND RecurStatus = '` + outcome + `' AND ExecutionStatus = 'Running'`})
		require.NoError(t, err)
		var ids []string
		for _, e := range resp.GetExecutions() {
			ids = append(ids, e.GetExecution().GetWorkflowId())
		}
		slices.Sort(ids)
		return ids
	}
	require.Eventually(t, func() bool {
		return slices.Equal(jobsWhose("Failed"), []string{"job:sub1/rg1/coll1/flaky"}) &&
			slices.Equal(jobsWhose("Completed"), []string{"job:sub1/rg1/coll1/fine"})
	}, 20*time.Second, 100*time.Millisecond, "failed %v, completed %v", jobsWhose("Failed"), jobsWhose("Completed"))

	failing.Store(false)
	status, body := s.do(t, http.MethodPost, collectionPath+"/jobs/flaky/run", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Eventually(t, func() bool {
		return len(jobsWhose("Failed")) == 0 && len(jobsWhose("Completed")) == 2
	}, 20*time.Second, 100*time.Millisecond, "failed %v, completed %v", jobsWhose("Failed"), jobsWhose("Completed"))
}
