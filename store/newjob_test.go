package store

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

// TestANewJobsFirstTaskWaitsUntilShortlyBeforeItIsDue: the start of a job
// due in an hour delays its workflow's first task by a moment drawn at
// random up to a minute before the occurrence, so that the first tasks of
// many jobs created together spread over the hour; a job due within the
// minute, or never, starts its first task at once.
func TestANewJobsFirstTaskWaitsUntilShortlyBeforeItIsDue(t *testing.T) {
	now := time.Date(2036, 11, 26, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	require.Zero(t, firstTaskDelay(nil, now))
	require.Zero(t, firstTaskDelay(at(-time.Minute), now))
	require.Zero(t, firstTaskDelay(at(firstTaskLead), now))
	lo, hi := time.Hour, time.Duration(0)
	for range 1000 {
		d := firstTaskDelay(at(time.Hour), now)
		require.GreaterOrEqual(t, d, time.Duration(0))
		require.Less(t, d, time.Hour-firstTaskLead)
		lo, hi = min(lo, d), max(hi, d)
	}
	require.Less(t, lo, 5*time.Minute, "spread over the hour")
	require.Greater(t, hi, 50*time.Minute, "spread over the hour")
}
