package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/recurhq/recur/jobs"
)

// TestANewJobsStartCarriesItsFirstTask: a new job's workflow starts with
// its state as input and asks for its first workflow task in the start's
// answer, so that the task skips the task queue, where a burst of
// creations queues the first tasks of many jobs behind one another and a
// write to a job just created waits for its own; a second start of the
// name fails rather than joins the running workflow.
func TestANewJobsStartCarriesItsFirstTask(t *testing.T) {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	var def jobs.Job
	require.NoError(t, json.Unmarshal([]byte(`{"properties": {
		"startTime": "2036-11-26T10:00:00Z",
		"recurrence": {"frequency": "Hour", "interval": 1},
		"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "POST"}}}}`), &def))
	created := time.Date(2036, 11, 26, 9, 0, 0, 0, time.UTC)
	require.NoError(t, def.AcceptNew(k, created))
	opts, in, ok := NewJobStart(k, def, created, jobs.Admission{Until: created.Add(time.Minute)})
	require.True(t, ok)
	require.True(t, opts.EnableEagerStart, "the first workflow task comes back with the start")
	require.Equal(t, enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL, opts.WorkflowIDConflictPolicy)
	require.Equal(t, k.JobWorkflowID(), opts.ID)
	require.Equal(t, jobs.TaskQueue, opts.TaskQueue)
	require.Contains(t, opts.Memo, jobs.MemoJob)
	require.Equal(t, time.Date(2036, 11, 26, 10, 0, 0, 0, time.UTC), *in.State.Next)
}
