package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/temporaltest"

	"github.com/recurhq/recur/internal/recurproc"
)

// The shapes an occurrence of a job can take on Temporal, reduced to what
// they cost: a durable timer, then one HTTP POST as the action, run
//   - child: by a child workflow that runs it as an activity;
//   - activity: as an activity of the looping workflow itself;
//   - local: as a local activity of the looping workflow (recur's shape,
//     without its memo and search attribute upserts);
//   - schedule: by a native Temporal Schedule starting a workflow that
//     runs it as an activity (backfilled, so that its occurrences come
//     at once as the loops' do).
//
// BenchmarkOccurrenceShapes runs b.N occurrences of each on one in-process
// server, shapeLoops loops at once, and reports the history events of
// every workflow involved and the process's CPU (server, worker and
// sink alike) per occurrence. Not their rate: the test server fires
// timers about once a second, which bounds every loop alike.
//
//	go test -run '^$' -bench OccurrenceShapes -benchtime 200x ./e2e/
func BenchmarkOccurrenceShapes(b *testing.B) {
	ts := temporaltest.NewServer()
	b.Cleanup(ts.Stop)
	sink := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	b.Cleanup(sink.Close)
	ts.NewWorker(shapeQueue, func(r worker.Registry) {
		r.RegisterWorkflowWithOptions(shapeLoop, workflow.RegisterOptions{Name: "shape.loop"})
		r.RegisterWorkflowWithOptions(shapeRun, workflow.RegisterOptions{Name: "shape.run"})
		r.RegisterActivityWithOptions(shapePost, activity.RegisterOptions{Name: "shape.post"})
	})
	c := ts.GetDefaultClient()
	for _, shape := range []string{"child", "activity", "local", "schedule"} {
		b.Run(shape, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cpu := recurproc.CPUOf(os.Getpid())
			var events int64
			var err error
			if shape == "schedule" {
				events, err = runSchedule(ctx, c, sink.URL, b.N)
			} else {
				events, err = runLoops(ctx, c, shape, sink.URL, b.N)
			}
			require.NoError(b, err)
			b.ReportMetric(float64(events)/float64(b.N), "events/occurrence")
			b.ReportMetric(float64((recurproc.CPUOf(os.Getpid())-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/occurrence")
		})
	}
}

const (
	shapeQueue = "shapes"
	// shapeLoops is how many looping workflows share the occurrences.
	shapeLoops = 10
)

// runLoops runs n occurrences of shape in shapeLoops workflows and returns
// the history events of every workflow they ran.
func runLoops(ctx context.Context, c client.Client, shape, target string, n int) (int64, error) {
	prefix := fmt.Sprintf("shape-%s-%d", shape, time.Now().UnixNano())
	var runs []client.WorkflowRun
	for i := range shapeLoops {
		count := n / shapeLoops
		if i < n%shapeLoops {
			count++
		}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("%s-%d", prefix, i), TaskQueue: shapeQueue},
			"shape.loop", shape, target, count)
		if err != nil {
			return 0, err
		}
		runs = append(runs, run)
	}
	for _, run := range runs {
		if err := run.Get(ctx, nil); err != nil {
			return 0, err
		}
	}
	workflows := shapeLoops
	if shape == "child" {
		workflows += n
	}
	return historyEvents(ctx, c, fmt.Sprintf("WorkflowId STARTS_WITH '%s'", prefix), workflows)
}

// runSchedule backfills n occurrences of an hourly schedule and returns
// the events its scheduler workflow wrote for them plus those of the
// workflows it started.
func runSchedule(ctx context.Context, c client.Client, target string, n int) (int64, error) {
	id := fmt.Sprintf("shape-schedule-%d", time.Now().UnixNano())
	h, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:      id,
		Spec:    client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: time.Hour}}},
		Action:  &client.ScheduleWorkflowAction{ID: id + "-run", Workflow: "shape.run", Args: []any{target}, TaskQueue: shapeQueue},
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
	})
	if err != nil {
		return 0, err
	}
	defer func() { _ = h.Delete(context.WithoutCancel(ctx)) }()
	scheduler := "temporal-sys-scheduler:" + id
	before, err := historyLength(ctx, c, scheduler)
	if err != nil {
		return 0, err
	}
	end := time.Now().Truncate(time.Hour)
	if err := h.Backfill(ctx, client.ScheduleBackfillOptions{Backfill: []client.ScheduleBackfill{{
		Start: end.Add(-time.Duration(n-1) * time.Hour), End: end, Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
	}}}); err != nil {
		return 0, err
	}
	runs, err := historyEvents(ctx, c, fmt.Sprintf("TemporalScheduledById = '%s'", id), n)
	if err != nil {
		return 0, err
	}
	after, err := historyLength(ctx, c, scheduler)
	return runs + after - before, err
}

// historyEvents waits until want workflows match query and have closed,
// and returns the sum of their history lengths.
func historyEvents(ctx context.Context, c client.Client, query string, want int) (int64, error) {
	for {
		var total int64
		closed := 0
		var token []byte
		for {
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
			if err != nil {
				return 0, err
			}
			for _, e := range resp.GetExecutions() {
				if e.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
					closed++
					total += e.GetHistoryLength()
				}
			}
			if token = resp.GetNextPageToken(); len(token) == 0 {
				break
			}
		}
		if closed >= want {
			return total, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%d of %d workflows closed (%s): %w", closed, want, query, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func historyLength(ctx context.Context, c client.Client, id string) (int64, error) {
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return 0, err
	}
	return d.GetWorkflowExecutionInfo().GetHistoryLength(), nil
}

// shapeLoop runs count occurrences of shape, each after a durable timer.
func shapeLoop(ctx workflow.Context, shape, target string, count int) error {
	actx := workflow.WithActivityOptions(ctx, shapeActivityOptions)
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}})
	for i := range count {
		if err := workflow.Sleep(ctx, time.Millisecond); err != nil {
			return err
		}
		var err error
		switch shape {
		case "child":
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
				WorkflowID: fmt.Sprintf("%s/%d", workflow.GetInfo(ctx).WorkflowExecution.ID, i)})
			err = workflow.ExecuteChildWorkflow(cctx, "shape.run", target).Get(ctx, nil)
		case "activity":
			err = workflow.ExecuteActivity(actx, "shape.post", target).Get(ctx, nil)
		case "local":
			err = workflow.ExecuteLocalActivity(lctx, "shape.post", target).Get(ctx, nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

var shapeActivityOptions = workflow.ActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}}

// shapeRun is one occurrence's own workflow: the action as an activity.
func shapeRun(ctx workflow.Context, target string) error {
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, shapeActivityOptions), "shape.post", target).Get(ctx, nil)
}

var shapeClient = &http.Client{Timeout: 10 * time.Second}

// shapePost is the action: one POST.
func shapePost(ctx context.Context, target string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, nil)
	if err != nil {
		return err
	}
	resp, err := shapeClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
