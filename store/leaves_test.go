package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/temporaltest"

	"github.com/recurhq/recur/jobs"
)

// leaver stands in for a job's workflow: it takes a DELETE and answers at
// once, and sends its collection the request to forget it only once told
// to ("go"), so that the test holds the request on its way.
func leaver(ctx workflow.Context) error {
	deleted := false
	if err := workflow.SetUpdateHandler(ctx, jobs.UpdateDeleteJob, func(workflow.Context, jobs.DeleteJobRequest) error {
		deleted = true
		return nil
	}); err != nil {
		return err
	}
	if err := workflow.Await(ctx, func() bool { return deleted }); err != nil {
		return err
	}
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, nil)
	if err := workflow.SignalExternalWorkflow(ctx, "collection", "", jobs.SignalMembership, "leave").Get(ctx, nil); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return false }) // runs on, so that only the history says the signal arrived
}

// sink stands in for the collection: it runs.
func sink(ctx workflow.Context) error { return workflow.Await(ctx, func() bool { return false }) }

// TestALeaveArrivesWhenTheHistorySaysSo: awaiting a deleted job's request
// to forget it waits while the request is unsent, and ends once Temporal
// has delivered it, the job's workflow still running.
func TestALeaveArrivesWhenTheHistorySaysSo(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	c := ts.GetDefaultClient()
	ctx := t.Context()
	w := worker.New(c, "leaves", worker.Options{})
	w.RegisterWorkflow(leaver)
	w.RegisterWorkflow(sink)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "collection", TaskQueue: "leaves"}, sink)
	require.NoError(t, err)
	job, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "job", TaskQueue: "leaves"}, leaver)
	require.NoError(t, err)
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: "job", UpdateName: jobs.UpdateDeleteJob,
		Args: []any{jobs.DeleteJobRequest{}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	require.NoError(t, err)
	require.NoError(t, h.Get(ctx, nil))

	s := New(c, Options{Namespace: ts.GetDefaultNamespace()})
	arrived := make(chan struct{})
	go func() {
		s.leaveArrived(ctx, deletedJob{workflowID: "job", run: job.GetRunID()})
		close(arrived)
	}()
	select {
	case <-arrived:
		t.Fatal("the leave counted as arrived before it was sent")
	case <-time.After(time.Second):
	}
	require.NoError(t, c.SignalWorkflow(ctx, "job", "", "go", nil))
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the leave's delivery was not seen")
	}
	d, err := c.DescribeWorkflowExecution(ctx, "job", "")
	require.NoError(t, err)
	assert.Nil(t, d.GetWorkflowExecutionInfo().GetCloseTime(), "seen from the history, not from the workflow's end")
}

// TestLeavesAreForgottenAfterTheirTransit: the jobs deleted lately are
// those of the collection asked for, within leaveTransit; one whose
// request arrived is no longer in transit but still deleted, until its
// name is admitted again.
func TestLeavesAreForgottenAfterTheirTransit(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	l := newLeaves()
	l.now = func() time.Time { return now }
	a := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "a"}
	b, c, other := a, a, a
	b.Job, c.Job = "b", "c"
	other.Collection = "d"
	l.add(a, "run-a")
	now = now.Add(leaveTransit / 2)
	l.add(b, "run-b")
	l.add(c, "run-c")
	assert.Len(t, l.inTransit(a), 3)
	assert.Empty(t, l.inTransit(other))
	run, ok := l.run(b)
	assert.True(t, ok)
	assert.Equal(t, "run-b", run)

	now = now.Add(leaveTransit/2 + time.Millisecond)
	assert.False(t, l.deleted(a), "a's is past its transit")
	ds := l.inTransit(a)
	require.Len(t, ds, 2)
	l.arrive(a, ds[:1])
	assert.Len(t, l.inTransit(a), 1, "one arrived")
	assert.True(t, l.deleted(b), "arrived, still deleted")
	l.forget(b)
	l.forget(c)
	assert.False(t, l.deleted(b))
	assert.Empty(t, l.byCollection, "nothing kept once every name is free")
}
