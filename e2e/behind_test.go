package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/jobs"
)

// TestDeleteWritesTheRowOfFoldedOccurrences runs a job on a real server
// whose runs queue no worker polls, so that its runs and Postponed rows
// start and never finish: Temporal far behind. The job's first task
// comes two minutes late and writes two Postponed rows; at the next
// minute the run is still running and the occurrence is folded, since
// those rows are not written yet. A DELETE then must write its row before
// the workflow ends.
func TestDeleteWritesTheRowOfFoldedOccurrences(t *testing.T) {
	t.Parallel()
	st, err := recurtest.StartWith(recurtest.Config{NoRunWorker: true})
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	c := st.Temporal.GetDefaultClient()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "behind"}
	minute, err := recurtest.StartJobBehind(ctx, c, k)
	require.NoError(t, err)
	late := minute.Add(-2 * time.Minute)

	exists := func(nominal time.Time) bool {
		_, err := c.DescribeWorkflowExecution(ctx, jobs.OccurrenceID(k.JobWorkflowID(), nominal), "")
		return err == nil
	}
	require.Eventually(t, func() bool { return exists(late) && exists(late.Add(time.Minute)) && exists(minute) },
		30*time.Second, 100*time.Millisecond, "two Postponed rows and a run")
	folded := minute.Add(time.Minute)
	// The fire at the next minute folds its occurrence; give its task
	// a few seconds, then delete.
	time.Sleep(time.Until(folded) + 5*time.Second)
	require.False(t, exists(folded), "the occurrence due while the rows were unwritten waits folded")

	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: k.JobWorkflowID(), UpdateName: jobs.UpdateDeleteJob, Args: []any{jobs.DeleteJobRequest{}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	require.NoError(t, err)
	require.NoError(t, handle.Get(ctx, nil))
	require.NoError(t, c.GetWorkflow(ctx, k.JobWorkflowID(), "").Get(ctx, nil), "the job's workflow ends")
	d, err := c.DescribeWorkflowExecution(ctx, jobs.OccurrenceID(k.JobWorkflowID(), folded), "")
	require.NoError(t, err, "the folded occurrence has its Postponed row")
	require.Equal(t, jobs.RunTaskQueue, d.GetExecutionConfig().GetTaskQueue().GetName())
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, d.GetWorkflowExecutionInfo().GetStatus(), "written by no worker yet")
}
