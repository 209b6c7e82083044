package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
)

// TestAWriteRaisesItsJobsPriorityWhileInFlight checks the priorities that
// keep writes ahead of a burst's workflow tasks: a collection's workflow
// runs at the first priority, a job's at the default but while a write to
// it is in flight: its history shows the raise before the write's update
// and the return to the default after it.
func TestAWriteRaisesItsJobsPriorityWhileInFlight(t *testing.T) {
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

	status, body = s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"state": "Disabled"}})
	require.Equal(t, http.StatusOK, status, body)

	// The kinds of the job's events that say its priority or take the
	// update: "1" and "0" for a priority set, "update" for the update
	// accepted.
	sequence := func() []string {
		var out []string
		iter := c.GetWorkflowHistory(ctx, jobID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for iter.HasNext() {
			e, err := iter.Next()
			require.NoError(t, err)
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_OPTIONS_UPDATED:
				key := e.GetWorkflowExecutionOptionsUpdatedEventAttributes().GetPriority().GetPriorityKey()
				out = append(out, map[int32]string{0: "0", 1: "1"}[key])
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
				out = append(out, "update")
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return assert.ObjectsAreEqual([]string{"1", "update", "0"}, sequence()) },
		10*time.Second, 50*time.Millisecond, "the job's history: %v", sequence())
	job, err = c.DescribeWorkflowExecution(ctx, jobID, "")
	require.NoError(t, err)
	assert.Zero(t, job.GetWorkflowExecutionInfo().GetPriority().GetPriorityKey(), "the job's priority after the write")
}
