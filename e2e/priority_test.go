package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
)

// TestACollectionRunsFirstAndAnIdleWriteRaisesNothing checks the
// priorities that keep writes ahead of a burst's workflow tasks on an idle
// server: a collection's workflow runs at the first priority, and a job's
// at the default, which a write on an idle server leaves alone: no event
// in its history but the write's (store's TestJobsAreRaisedOnlyWhileWritesAreSlow
// has the raise of a busy server, TestPrioritizeSetsTheRunsPriority
// Temporal taking it).
func TestACollectionRunsFirstAndAnIdleWriteRaisesNothing(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	target, _ := newTarget(t)
	s.putCollection(t)
	c := s.temporal.GetDefaultClient()
	ctx := context.Background()
	coll, err := c.DescribeWorkflowExecution(ctx, "collection:sub1/rg1/coll1", "")
	require.NoError(t, err)
	assert.EqualValues(t, 1, coll.GetWorkflowExecutionInfo().GetPriority().GetPriorityKey(), "the collection's priority")

	jobPath := collectionPath + "/jobs/written"
	status, body := s.do(t, http.MethodPut, jobPath, hourlyJob(target.URL, time.Now().UTC().Add(time.Hour).Truncate(time.Second)))
	require.Equal(t, http.StatusCreated, status, body)
	const jobID = "job:sub1/rg1/coll1/written"
	job, err := c.DescribeWorkflowExecution(ctx, jobID, "")
	require.NoError(t, err)
	assert.Zero(t, job.GetWorkflowExecutionInfo().GetPriority().GetPriorityKey(), "a new job's priority: its creation is a start")

	began := time.Now()
	status, body = s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"state": "Disabled"}})
	took := time.Since(began)
	require.Equal(t, http.StatusOK, status, body)

	sequence := func() []string { return prioritiesAndUpdates(t, s, jobID) }
	// A write unanswered after 250 ms (store's slowWrite) is raised then,
	// and lowered 10 s after its answer: a loaded machine may make this
	// one that slow.
	if took < 250*time.Millisecond {
		assert.Equal(t, []string{"update"}, sequence(), "the job's history")
	} else {
		t.Logf("the PATCH took %s: raised while it waited", took)
		require.Eventually(t, func() bool { return len(sequence()) == 3 }, 30*time.Second, 50*time.Millisecond)
		assert.ElementsMatch(t, []string{"priority 1", "update", "priority 0"}, sequence(), "the job's history: raised and lowered")
	}
	job, err = c.DescribeWorkflowExecution(ctx, jobID, "")
	require.NoError(t, err)
	assert.Zero(t, job.GetWorkflowExecutionInfo().GetPriority().GetPriorityKey(), "the job's priority after the write")
}

// TestACollectionsJobsAreToldAtTheWritePriority: a collection's disable
// tells each job at jobs.PriorityWrite, so that its workflow task goes
// ahead of a burst's, and sets the job back to the default once told.
func TestACollectionsJobsAreToldAtTheWritePriority(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	target, _ := newTarget(t)
	s.putCollection(t)
	c := s.temporal.GetDefaultClient()
	ctx := context.Background()
	jobPath := collectionPath + "/jobs/told"
	status, body := s.do(t, http.MethodPut, jobPath, hourlyJob(target.URL, time.Now().UTC().Add(time.Hour).Truncate(time.Second)))
	require.Equal(t, http.StatusCreated, status, body)

	status, body = s.do(t, http.MethodPost, collectionPath+"/disable", nil)
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, status, body)
	const jobID = "job:sub1/rg1/coll1/told"
	sequence := func() []string { return prioritiesAndUpdates(t, s, jobID) }
	want := []string{"priority 1", "update", "priority 0"}
	require.Eventually(t, func() bool { return len(sequence()) >= len(want) }, 30*time.Second, 50*time.Millisecond)
	assert.Equal(t, want, sequence(), "the job's history: raised, told, lowered")
	job, err := c.DescribeWorkflowExecution(ctx, jobID, "")
	require.NoError(t, err)
	assert.Zero(t, job.GetWorkflowExecutionInfo().GetPriority().GetPriorityKey(), "the job's priority once told")
}

// prioritiesAndUpdates returns the events of workflowID's history that
// set its priority ("priority N") or take an update ("update"), in order.
func prioritiesAndUpdates(t *testing.T, s *stack, workflowID string) []string {
	t.Helper()
	var out []string
	iter := s.temporal.GetDefaultClient().GetWorkflowHistory(context.Background(), workflowID, "", false,
		enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_OPTIONS_UPDATED:
			out = append(out, fmt.Sprintf("priority %d", e.GetWorkflowExecutionOptionsUpdatedEventAttributes().GetPriority().GetPriorityKey()))
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			out = append(out, "update")
		}
	}
	return out
}
