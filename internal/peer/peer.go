// Package peer is the native-Temporal counterpart the bench tools measure
// recur against: Schedules whose action is a trivial workflow making the
// same HTTP POST a recur job's Http action makes, with the same headers,
// so that one sink reads both. Its worker runs in the bench tool's own
// process.
package peer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/activities"
)

// The peer's wire names: the workflow its schedules start, its activity
// and the task queue of its worker.
const (
	workflowName = "peer.Ping"
	activityName = "peer.Post"
	taskQueue    = "peer"
	// SchedulerWorkflowPrefix is the ID prefix of the server's scheduler
	// workflows (primitives.ScheduleWorkflowIDPrefix, V1 scheduler).
	SchedulerWorkflowPrefix = "temporal-sys-scheduler:"
)

// Dial connects a plain client to the Temporal frontend at address: the
// peer's payloads are not encrypted, and counting events needs none
// decoded. Its log is dropped.
func Dial(ctx context.Context, address, namespace string) (client.Client, error) {
	c, err := client.DialContext(ctx, client.Options{HostPort: address, Namespace: namespace,
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", address, err)
	}
	return c, nil
}

// Action is a schedule's action: start the peer's workflow, with ID id
// (the server appends the nominal time), posting to url.
func Action(id, url string) *client.ScheduleWorkflowAction {
	return &client.ScheduleWorkflowAction{ID: id, Workflow: workflowName, Args: []any{url}, TaskQueue: taskQueue}
}

// postRequest is the activity's one argument.
type postRequest struct {
	URL     string
	Key     string // the workflow ID, as recur sends its occurrence ID
	Nominal time.Time
}

// ping is the trivial workflow the schedules start: one activity making
// the same HTTP POST recur's job workflow makes. The schedule appends the
// nominal time (UTC, whole seconds, RFC 3339) to the workflow ID, so the
// workflow reads it from there.
func ping(ctx workflow.Context, url string) error {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	nominal, err := time.Parse(time.RFC3339, id[max(0, len(id)-len("2006-01-02T15:04:05Z")):])
	if err != nil {
		return fmt.Errorf("nominal time of %s: %w", id, err)
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	return workflow.ExecuteActivity(ctx, activityName, postRequest{URL: url, Key: id, Nominal: nominal}).Get(ctx, nil)
}

// poster holds the HTTP client of the peer's activity.
type poster struct{ http *http.Client }

// Post sends the request recur's HTTP action sends: POST, JSON body, the
// idempotency key and the nominal time in headers.
func (a *poster) Post(ctx context.Context, in postRequest) error {
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

// DeleteSchedule deletes schedule id; one already gone is not an error.
func DeleteSchedule(ctx context.Context, c client.Client, id string) error {
	err := c.ScheduleClient().GetHandle(ctx, id).Delete(ctx)
	if _, gone := err.(*serviceerror.NotFound); gone {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete schedule %s: %w", id, err)
	}
	return nil
}

// StartWorker starts the worker of the peer's workflow and activity; the
// caller stops it.
func StartWorker(c client.Client) (sdkworker.Worker, error) {
	w := sdkworker.New(c, taskQueue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(ping, workflow.RegisterOptions{Name: workflowName})
	acts := &poster{http: &http.Client{Timeout: time.Minute}}
	w.RegisterActivityWithOptions(acts.Post, activity.RegisterOptions{Name: activityName})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start the peer's worker: %w", err)
	}
	return w, nil
}
