package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/activities"
)

// The peer's wire names: the workflow its schedules start, its activity
// and the task queue of the worker the firing tool runs in-process.
const (
	peerWorkflowName = "firing.Ping"
	peerActivityName = "firing.Post"
	peerTaskQueue    = "firing-peer"
	// scheduleWorkflowPrefix is the ID prefix of the server's scheduler
	// workflows (primitives.ScheduleWorkflowIDPrefix, V1 scheduler).
	scheduleWorkflowPrefix = "temporal-sys-scheduler:"
)

// postRequest is the activity's one argument.
type postRequest struct {
	URL     string
	Key     string // the workflow ID, as recur sends its occurrence ID
	Nominal time.Time
}

// pingWorkflow is the trivial workflow the schedules start: one activity
// making the same HTTP POST recur's job workflow makes. The schedule
// appends the nominal time (UTC, whole seconds, RFC 3339) to the workflow
// ID, so the workflow reads it from there.
func pingWorkflow(ctx workflow.Context, url string) error {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	nominal, err := time.Parse(time.RFC3339, id[max(0, len(id)-len("2006-01-02T15:04:05Z")):])
	if err != nil {
		return fmt.Errorf("nominal time of %s: %w", id, err)
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	return workflow.ExecuteActivity(ctx, peerActivityName, postRequest{URL: url, Key: id, Nominal: nominal}).Get(ctx, nil)
}

// peerActivities holds the HTTP client of the peer's activity.
type peerActivities struct{ http *http.Client }

// Post sends the request recur's HTTP action sends: POST, JSON body, the
// idempotency key and the nominal time in headers.
func (a *peerActivities) Post(ctx context.Context, in postRequest) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.URL, strings.NewReader(`{"peer":true}`))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(activities.HeaderIdempotencyKey, in.Key)
	req.Header.Set(activities.HeaderExpectedExecTime, in.Nominal.UTC().Format(time.RFC3339))
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("post %s: %w", in.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("post %s: %s: %s", in.URL, resp.Status, bytes.TrimSpace(body))
	}
	return nil
}

// startPeerWorker starts the in-process worker of the peer's workflow and
// activity; the caller stops it.
func startPeerWorker(c client.Client) (sdkworker.Worker, error) {
	w := sdkworker.New(c, peerTaskQueue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(pingWorkflow, workflow.RegisterOptions{Name: peerWorkflowName})
	acts := &peerActivities{http: &http.Client{Timeout: time.Minute}}
	w.RegisterActivityWithOptions(acts.Post, activity.RegisterOptions{Name: peerActivityName})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start the peer's worker: %w", err)
	}
	return w, nil
}

// createSchedules creates one every-minute schedule per name, firing at
// the offset of its index past each minute, like recur's jobs, from the
// first minute on if there is one. It returns the names it created.
func (f *firing) createSchedules(ctx context.Context, names []string, first time.Time) ([]string, error) {
	return parallel(names, func(i int, name string) error {
		_, err := f.temporal.ScheduleClient().Create(ctx, client.ScheduleOptions{
			ID: name,
			Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{
				{Every: time.Minute, Offset: offset(i, len(names))},
			}, StartAt: first},
			Action: &client.ScheduleWorkflowAction{
				ID:        name,
				Workflow:  peerWorkflowName,
				Args:      []any{f.sink.target("peer", name)},
				TaskQueue: peerTaskQueue,
			},
		})
		if err != nil {
			return fmt.Errorf("create schedule %s: %w", name, err)
		}
		return nil
	})
}

// deleteSchedules deletes the schedules; one already gone is not an error.
func (f *firing) deleteSchedules(ctx context.Context, names []string) error {
	_, err := parallel(names, func(_ int, name string) error {
		err := f.temporal.ScheduleClient().GetHandle(ctx, name).Delete(ctx)
		if _, ok := err.(*serviceerror.NotFound); err != nil && !ok {
			return fmt.Errorf("delete schedule %s: %w", name, err)
		}
		return nil
	})
	return err
}

// creators is how many jobs or schedules are created at once.
const creators = 8

// parallel calls do for every name, creators at a time, and returns the
// names for which it succeeded, in order, and the first error.
func parallel(names []string, do func(i int, name string) error) ([]string, error) {
	var wg sync.WaitGroup
	failed := make([]error, len(names))
	next := make(chan int)
	for range creators {
		wg.Go(func() {
			for i := range next {
				failed[i] = do(i, names[i])
			}
		})
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	var ok []string
	var first error
	for i, err := range failed {
		if err == nil {
			ok = append(ok, names[i])
		} else if first == nil {
			first = err
		}
	}
	return ok, first
}
