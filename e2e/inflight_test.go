package e2e

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/recurhq/recur/jobs"
)

// holdingTarget is a job target that takes every request and answers none
// until the test ends (or the caller gives up): an action against it runs
// as long as the test needs it to.
type holdingTarget struct {
	url     string
	arrived chan string // the Idempotency-Key of each request, as it arrives
	mu      sync.Mutex
	held    int // requests waiting for their answer now
}

func newHoldingTarget(t *testing.T) *holdingTarget {
	h := &holdingTarget{arrived: make(chan string, 64)}
	release := make(chan struct{})
	srv := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.held++
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			h.held--
			h.mu.Unlock()
		}()
		h.arrived <- r.Header.Get("Idempotency-Key")
		select {
		case <-release:
			w.WriteHeader(http.StatusOK)
		case <-r.Context().Done():
		}
	})
	h.url = srv.URL
	// Cleanups run last in, first out: the target answers before it closes.
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return h
}

// await returns the key of the next request to arrive.
func (h *holdingTarget) await(t *testing.T, what string) string {
	t.Helper()
	select {
	case key := <-h.arrived:
		return key
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no request reached the target", what)
		return ""
	}
}

// holding reports how many requests the target holds unanswered now.
func (h *holdingTarget) holding() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

// putHeldJob creates collectionPath and in it an hourly job, first due in
// an hour, whose action reaches target with the attempt timeout given and
// no retries; it returns the job's path and definition.
func (s *stack) putHeldJob(t *testing.T, target *holdingTarget, name, timeout string) (string, map[string]any) {
	t.Helper()
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	jobPath := collectionPath + "/jobs/" + name
	job := httpJob(target.url, map[string]any{"frequency": "Hour"})
	action := job["properties"].(map[string]any)["action"].(map[string]any)
	action["timeout"] = timeout
	action["retryPolicy"] = map[string]any{"retryType": "None"}
	status, body = s.do(t, http.MethodPut, jobPath, job)
	require.Equal(t, http.StatusCreated, status, body)
	return jobPath, job
}

// TestWritesDoNotWaitForARunningAction: every write on a job and on its
// collection is answered while the job's action runs against a target that
// has not answered, and will not before the test ends: an action is an
// activity of the job's workflow, which takes a write in a task of its
// own. What the writes do to the run in flight: a redefinition and a
// disable let it run on; a DELETE of the job, or of its collection,
// cancels it and ends the job's workflow at once, so the name is free for
// a new job at once.
func TestWritesDoNotWaitForARunningAction(t *testing.T) {
	s := newStack(t)
	target := newHoldingTarget(t)
	jobPath, job := s.putHeldJob(t, target, "slow", "PT5M") // longer than the test
	action := job["properties"].(map[string]any)["action"].(map[string]any)

	// answered sends a write and requires its answer, which can only come
	// while the target holds the action (once it holds one): it answers
	// nothing before the test ends. held < 0 checks nothing of the target.
	held := -1
	answered := func(want int, method, path string, body any) map[string]any {
		t.Helper()
		type answer struct {
			status int
			body   map[string]any
		}
		done := make(chan answer, 1)
		go func() {
			status, body := s.do(t, method, path, body)
			done <- answer{status, body}
		}()
		select {
		case a := <-done:
			require.Equal(t, want, a.status, "%s %s: %v", method, path, a.body)
			if held >= 0 {
				require.Equal(t, held, target.holding(), "%s %s: the action still runs", method, path)
			}
			return a.body
		case <-time.After(30 * time.Second):
			t.Fatalf("%s %s waits for the action in flight", method, path)
			return nil
		}
	}

	answered(http.StatusOK, http.MethodPost, jobPath+"/run", nil)
	first := target.await(t, "run now")
	held = 1
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "slow"}
	c := s.temporal.GetDefaultClient()
	desc, err := c.DescribeWorkflowExecution(context.Background(), k.JobWorkflowID(), "")
	require.NoError(t, err)
	runID := desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()

	action["request"].(map[string]any)["headers"] = map[string]any{"X-Version": "2"}
	answered(http.StatusOK, http.MethodPut, jobPath, job)
	answered(http.StatusOK, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"state": "Disabled"}})
	answered(http.StatusOK, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"state": "Enabled"}})
	past := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Hour)
	got := answered(http.StatusAccepted, http.MethodPost, jobPath+"/backfill", map[string]any{
		"startTime": past.Format(time.RFC3339), "endTime": past.Format(time.RFC3339)})
	require.EqualValues(t, 0, got["queued"], "nothing is due before the job's start")
	got = answered(http.StatusOK, http.MethodGet, jobPath, nil)
	require.Equal(t, "2", path(got, "properties", "action", "request", "headers", "X-Version"), "the redefinition holds while the run goes on")
	require.Equal(t, "enabled", path(got, "properties", "state"))
	// (A collection's enable and disable reach its jobs after they answer:
	// TestReadYourWrites.)
	answered(http.StatusOK, http.MethodPatch, collectionPath, map[string]any{"properties": map[string]any{
		"quota": map[string]any{"maxJobCount": 20}}})
	answered(http.StatusOK, http.MethodPost, collectionPath+"/disable", nil)
	answered(http.StatusOK, http.MethodPost, collectionPath+"/enable", nil)

	// The DELETE cancels the run: the workflow's run ends at once, and a
	// PUT of the same name starts a new one.
	answered(http.StatusOK, http.MethodDelete, jobPath, nil)
	answered(http.StatusNotFound, http.MethodGet, jobPath, nil)
	require.Eventually(t, func() bool {
		d, err := c.DescribeWorkflowExecution(context.Background(), k.JobWorkflowID(), runID)
		return err == nil && d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	}, 10*time.Second, 50*time.Millisecond, "the deleted job's workflow ends with its run in flight cancelled")
	requireActivityCancelled(t, s, k.JobWorkflowID(), runID)
	answered(http.StatusCreated, http.MethodPut, jobPath, job)
	held = -1 // its request may reach the target before its answer
	answered(http.StatusOK, http.MethodPost, jobPath+"/run", nil)
	second := target.await(t, "run now of the new job")
	held = 2 // the cancelled run's request stays with the target, which answers none
	require.NotEqual(t, first, second, "the new job's run is its own occurrence")

	// The collection's DELETE cancels the new job's run as well.
	desc, err = c.DescribeWorkflowExecution(context.Background(), k.JobWorkflowID(), "")
	require.NoError(t, err)
	runID = desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	answered(http.StatusOK, http.MethodDelete, collectionPath, nil)
	require.Eventually(t, func() bool {
		d, err := c.DescribeWorkflowExecution(context.Background(), k.JobWorkflowID(), runID)
		return err == nil && d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	}, 10*time.Second, 50*time.Millisecond, "the job of the deleted collection ends with its run in flight cancelled")
	requireActivityCancelled(t, s, k.JobWorkflowID(), runID)
}

// requireActivityCancelled checks that a run of a job workflow asked for
// the cancellation of an action's activity: what the job's history in
// Temporal records of a run a DELETE cancelled.
func requireActivityCancelled(t *testing.T, s *stack, workflowID, runID string) {
	t.Helper()
	iter := s.temporal.GetDefaultClient().GetWorkflowHistory(context.Background(), workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		if e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED {
			return
		}
	}
	t.Fatalf("run %s of %s records no cancellation of its action", runID, workflowID)
}

// TestAnActionThatNeverAnswersFailsOnItsTimeoutWhileWritesGoOn: against a
// target that never answers, the attempt fails at the action's timeout and
// the row says so; writes meanwhile are answered.
func TestAnActionThatNeverAnswersFailsOnItsTimeoutWhileWritesGoOn(t *testing.T) {
	s := newStack(t)
	target := newHoldingTarget(t)
	jobPath, _ := s.putHeldJob(t, target, "silent", "PT15S")
	status, body := s.do(t, http.MethodPost, jobPath+"/run", nil)
	require.Equal(t, http.StatusOK, status, body)
	target.await(t, "run now")
	status, body = s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"state": "Disabled"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, 1, target.holding(), "the PATCH is answered before the action's timeout")

	require.Eventually(t, func() bool {
		status, body := s.do(t, http.MethodGet, jobPath+"/history", nil)
		rows, _ := body["value"].([]any)
		return status == http.StatusOK && len(rows) == 1
	}, time.Minute, 250*time.Millisecond, "the attempt ends at its timeout")
	_, body = s.do(t, http.MethodGet, jobPath+"/history", nil)
	row := body["value"].([]any)[0].(map[string]any)
	require.Equal(t, "Failed", path(row, "properties", "status"))
	require.Contains(t, path(row, "properties", "message"), "15s", "the row names the timeout")
	_, body = s.do(t, http.MethodGet, jobPath, nil)
	require.Equal(t, "disabled", path(body, "properties", "state"), "the disable holds; the run in flight counted")
	require.EqualValues(t, 1, path(body, "properties", "status", "executionCount"))
}
