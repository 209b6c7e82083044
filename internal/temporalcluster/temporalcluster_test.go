package temporalcluster_test

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/internal/temporalcluster"
)

const taskQueue = "temporalcluster-test"

// greet calls an activity, so that a run needs the history, matching and
// frontend services and the worker's both task queues.
func greet(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var upper string
	err := workflow.ExecuteActivity(ctx, "upper", name).Get(ctx, &upper)
	return "hello, " + upper, err
}

func upper(_ context.Context, s string) (string, error) { return strings.ToUpper(s), nil }

// TestWorkflowsSurviveServerRestarts runs a workflow on a fresh cluster,
// stops the server gracefully and starts it again, then kills it and starts
// it again: each time the completed workflows' histories and visibility
// records are as they were, PostgreSQL is the same process, and the
// worker, connected throughout, runs a new workflow.
func TestWorkflowsSurviveServerRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it starts PostgreSQL and a Temporal server (seconds; minutes when the server is not built yet)")
	}
	begin := time.Now()
	c := temporalcluster.Start(t)
	t.Logf("cluster ready in %v: frontend %s, namespace %s, postgres %s, server pid %d",
		time.Since(begin).Round(time.Millisecond), c.FrontendAddress(), c.Namespace(), c.Postgres.Address(), c.Server.PID())

	cl, err := client.Dial(client.Options{
		HostPort:  c.FrontendAddress(),
		Namespace: c.Namespace(),
		// While the server is down, the worker's polls fail and it says so.
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	w := sdkworker.New(cl, taskQueue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(greet, workflow.RegisterOptions{Name: "greet"})
	w.RegisterActivityWithOptions(upper, activity.RegisterOptions{Name: "upper"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	ctx := t.Context()
	completed := map[string]string{} // workflow ID to result
	histories := map[string][]string{}
	runWorkflow := func(id string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		begin := time.Now()
		run, err := cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue}, "greet", id)
		require.NoError(t, err)
		var got string
		require.NoError(t, run.Get(ctx, &got))
		require.Equal(t, "hello, "+strings.ToUpper(id), got)
		t.Logf("workflow %s completed in %v", id, time.Since(begin).Round(time.Millisecond))
		completed[id] = got
		histories[id] = history(t, cl, id)
		require.Equal(t, "WorkflowExecutionCompleted", histories[id][len(histories[id])-1])
	}
	checkKept := func() {
		t.Helper()
		for id := range completed {
			assert.Equal(t, histories[id], history(t, cl, id), "history of %s", id)
		}
		// Visibility is written asynchronously: a record may lag its run.
		begin := time.Now()
		defer func() { t.Logf("visibility listed them after %v", time.Since(begin).Round(time.Millisecond)) }()
		require.Eventually(t, func() bool {
			resp, err := cl.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
				Namespace: c.Namespace(),
				Query:     "ExecutionStatus = 'Completed'",
			})
			return err == nil && len(resp.GetExecutions()) == len(completed)
		}, 30*time.Second, 100*time.Millisecond, "visibility lists every completed workflow")
	}

	before, err := c.Postgres.Writes(ctx)
	require.NoError(t, err)
	runWorkflow("before-stop")
	pgPID := c.Postgres.PID()
	// A workflow's start, tasks and completion are transactions that write
	// rows and the log; the statistics counters may lag them by seconds.
	require.EventuallyWithT(t, func(t *assert.CollectT) {
		after, err := c.Postgres.Writes(ctx)
		require.NoError(t, err)
		wrote := after.Sub(before)
		assert.Positive(t, wrote.Commits, "commits")
		assert.Positive(t, wrote.Rows, "rows")
		assert.Positive(t, wrote.WALBytes, "WAL bytes")
	}, 30*time.Second, 500*time.Millisecond, "PostgreSQL's write counters count the workflow's writes")
	tables, err := c.Postgres.TableBytes(ctx)
	require.NoError(t, err)
	assert.Positive(t, tables["temporal.history_node"], "the history's table: %v", tables)
	assert.Positive(t, tables["temporal_visibility.executions_visibility"], "the visibility table: %v", tables)

	serverPID := c.Server.PID()
	begin = time.Now()
	require.NoError(t, c.Server.Stop())
	t.Logf("graceful stop in %v", time.Since(begin).Round(time.Millisecond))
	require.Zero(t, c.Server.PID())
	require.False(t, listening(c.FrontendAddress()), "the frontend still answers after Stop")
	begin = time.Now()
	require.NoError(t, c.Server.Start(ctx))
	t.Logf("ready again %v after start", time.Since(begin).Round(time.Millisecond))
	require.NotEqual(t, serverPID, c.Server.PID())
	checkKept()
	runWorkflow("after-stop")

	require.NoError(t, c.Server.Kill())
	require.Zero(t, c.Server.PID())
	require.False(t, listening(c.FrontendAddress()), "the frontend still answers after Kill")
	begin = time.Now()
	require.NoError(t, c.Server.Start(ctx))
	t.Logf("ready again %v after a start that follows a kill", time.Since(begin).Round(time.Millisecond))
	checkKept()
	runWorkflow("after-kill")
	checkKept()

	assert.Equal(t, pgPID, c.Postgres.PID(), "PostgreSQL kept running through the server's restarts")
	assert.Error(t, c.Server.Start(ctx), "starting a running server")
}

// history is the event types of the workflow's history, read from the
// server.
func history(t *testing.T, cl client.Client, id string) []string {
	t.Helper()
	var events []string
	it := cl.GetWorkflowHistory(t.Context(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		events = append(events, e.GetEventType().String())
	}
	require.NotEmpty(t, events, "history of %s", id)
	return events
}

// listening says whether something accepts connections at addr.
func listening(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}
