package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/recurhq/recur/jobs"
)

// TestAnActionIsScheduledInTheTaskThatAcceptedItsUpdate: an action's
// first attempt is a local activity of the workflow task that runs it,
// whose marker Temporal records together with that task's acceptance of an
// update (a task it loses is run again, and the attempt sent again under
// its idempotency key). So a run now, a backfill and a redefinition whose
// first occurrence is due at once each start their action in the very
// task that accepted them, with no timer in between; a new job due at
// once, whose PUT starts its workflow, in the workflow's first task.
func TestAnActionIsScheduledInTheTaskThatAcceptedItsUpdate(t *testing.T) {
	s := newStack(t)
	target, got := newTarget(t)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	jobPath := collectionPath + "/jobs/gated"
	past := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Hour)
	job := httpJob(target.URL, map[string]any{"frequency": "Hour"})
	job["properties"].(map[string]any)["startTime"] = past.Format(time.RFC3339) // first run at the next hour
	status, body = s.do(t, http.MethodPut, jobPath, job)
	require.Equal(t, http.StatusCreated, status, body)

	waitHit := func(what string) {
		t.Helper()
		select {
		case <-got:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the target got no request", what)
		}
	}
	// Each run must end before the next write: under the default
	// overlapPolicy Skip, a run due while another runs waits for its end
	// (a backfill) or is postponed (an occurrence).
	ended := func(runs int) {
		t.Helper()
		require.Eventually(t, func() bool {
			status, body := s.do(t, http.MethodGet, jobPath, nil)
			return status == http.StatusOK && path(body, "properties", "status", "executionCount") == float64(runs)
		}, 10*time.Second, 50*time.Millisecond, "run %d ended", runs)
	}
	status, body = s.do(t, http.MethodPost, jobPath+"/run", nil)
	require.Equal(t, http.StatusOK, status, body)
	waitHit("run now")
	ended(1)

	status, body = s.do(t, http.MethodPost, jobPath+"/backfill", map[string]any{
		"startTime": past.Format(time.RFC3339), "endTime": past.Format(time.RFC3339)})
	require.Equal(t, http.StatusAccepted, status, body)
	require.EqualValues(t, 1, body["queued"])
	waitHit("a backfill")
	ended(2)

	delete(job["properties"].(map[string]any), "startTime") // due at once
	status, body = s.do(t, http.MethodPut, jobPath, job)
	require.Equal(t, http.StatusOK, status, body)
	waitHit("a redefinition due at once")

	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "gated"}
	var accepted, ran map[int64]bool
	require.Eventually(t, func() bool {
		accepted, ran = s.completions(t, k.JobWorkflowID())
		return len(ran) == 3
	}, 10*time.Second, 50*time.Millisecond, "three actions scheduled")
	require.Len(t, accepted, 3, "the run now, the backfill and the redefinition each accepted in a task")
	for task := range ran {
		require.Contains(t, accepted, task, "the completion at event %d schedules an action but accepts no update", task)
	}

	// A new job due at once: its PUT starts the workflow, whose first
	// task (completed at event 4) starts the action.
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/gated-now", job)
	require.Equal(t, http.StatusCreated, status, body)
	waitHit("a new job due at once")
	k.Job = "gated-now"
	require.Eventually(t, func() bool {
		accepted, ran = s.completions(t, k.JobWorkflowID())
		return len(ran) == 1
	}, 10*time.Second, 50*time.Millisecond, "its action scheduled")
	require.Empty(t, accepted, "the PUT of a new job is a start, not an update")
	require.Equal(t, map[int64]bool{4: true}, ran, "the action starts in the workflow's first task")
}

// completions returns, by the event ID of the workflow task completion
// that wrote them, the completions of the workflow's present run that
// accept an update of those that may start actions (the run now, PUT and
// backfill) and those that start an action (its first attempt's local
// activity, or an activity).
func (s *stack) completions(t *testing.T, workflowID string) (accepted, ran map[int64]bool) {
	t.Helper()
	accepted, ran = map[int64]bool{}, map[int64]bool{}
	starts := map[string]bool{jobs.UpdateRunNow: true, jobs.UpdatePutJob: true, jobs.UpdateBackfill: true}
	var task int64
	iter := s.temporal.GetDefaultClient().GetWorkflowHistory(context.Background(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			task = e.GetEventId()
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			if starts[e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput().GetName()] {
				accepted[task] = true
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			ran[task] = true
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if s.localActivity(e) == "FirstAttempt" {
				ran[task] = true
			}
		}
	}
	return accepted, ran
}
