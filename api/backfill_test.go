package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// backfillFake is an hourly job in every subscription whose workflow
// queues every backfill it gets as its budget allows, or refuses the
// next ones with refuse.
type backfillFake struct {
	client.Client
	view    jobs.JobView
	refuse  int // backfills to refuse, as a disabled job does
	updates []jobs.BackfillRequest
}

// backfillLastRun is the fake's lastRunTime.
var backfillLastRun = time.Date(2026, 6, 1, 13, 0, 0, 0, time.UTC)

func (f *backfillFake) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return describedJob(f.view)
}

func (f *backfillFake) UpdateWorkflow(_ context.Context, opts client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	req := opts.Args[0].(jobs.BackfillRequest)
	f.updates = append(f.updates, req)
	if f.refuse > 0 {
		f.refuse--
		return backfillAnswer{err: (&jobs.Error{Code: jobs.CodeConflict, Message: "job j is disabled: enable it before a backfill"}).ToApplicationError()}, nil
	}
	n := jobs.BackfillCount(f.view.Job, f.view.PlannedFrom, req.StartTime, req.EndTime)
	if req.Budget != nil && n > *req.Budget {
		return backfillAnswer{err: (&jobs.Error{Code: jobs.CodeConflict, Message: "over budget"}).ToApplicationError()}, nil
	}
	return backfillAnswer{res: jobs.BackfillResult{Queued: n, LastRunTime: &backfillLastRun}}, nil
}

// backfillAnswer is the outcome of a backfill's update.
type backfillAnswer struct {
	client.WorkflowUpdateHandle
	res jobs.BackfillResult
	err error
}

func (backfillAnswer) RunID() string { return "" }

func (a backfillAnswer) Get(_ context.Context, into any) error {
	if a.err != nil {
		return a.err
	}
	*into.(*jobs.BackfillResult) = a.res
	return nil
}

// TestABackfillIsChargedToItsSubscription: each subscription's backfills
// take the occurrences they queue from its budget, counted before the
// job's workflow is asked, which queues no more than were counted; one
// that would take more than the budget holds is refused with 429 and
// Retry-After, one past its burst or past 1000 with 400, and a refused
// backfill takes nothing. The answer says when the last may start, and
// the workflow hears the operator's pace.
func TestABackfillIsChargedToItsSubscription(t *testing.T) {
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	f := &backfillFake{view: jobs.JobView{PlannedFrom: start.Add(24 * time.Hour), Job: jobs.Job{Properties: jobs.Properties{
		State: jobs.Enabled, StartTime: recurrence.At(start), Recurrence: &recurrence.Recurrence{Frequency: "Hour"}}}}}
	const pace = 3 * time.Second
	h := New(f, Options{Logger: slog.New(slog.DiscardHandler), Backfill: BackfillLimits{Pace: pace,
		PerSubscription: RateLimit{PerSecond: 0.1, Burst: 10}}})
	backfill := func(sub string, hours int) *httptest.ResponseRecorder {
		body := `{"startTime":"` + start.Format(time.RFC3339) + `","endTime":"` +
			start.Add(time.Duration(hours-1)*time.Hour).Format(time.RFC3339) + `"}`
		req := newRequest(http.MethodPost, strings.Replace(badJob, "/s/", "/"+sub+"/", 1)+"/backfill"+badVersion, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}

	rec := backfill("sub-a", 6)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	var res map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res))
	require.EqualValues(t, 6, res["queued"])
	require.Equal(t, backfillLastRun.Format(time.RFC3339), res["lastRunTime"])
	require.Len(t, f.updates, 1)
	require.Equal(t, pace, f.updates[0].Pace, "the operator's pace")
	require.Equal(t, 6, *f.updates[0].Budget, "no more than were charged")

	rec = backfill("sub-a", 6)
	require.Equal(t, http.StatusTooManyRequests, rec.Code, "4 of 10 left: %s", rec.Body.String())
	retry, err := strconv.Atoi(rec.Header().Get("Retry-After"))
	require.NoError(t, err)
	require.True(t, retry >= 1 && retry <= 20, "two more at one every 10 s: %d", retry)
	require.Equal(t, "TooManyRequests", armAnswer(t, rec).Code)
	require.Contains(t, armAnswer(t, rec).Message, "subscription sub-a has queued as many backfill occurrences as it may for now")
	require.Len(t, f.updates, 1, "the job's workflow was not asked")
	require.Equal(t, http.StatusAccepted, backfill("sub-a", 4).Code, "what is left may queue")

	require.Equal(t, http.StatusAccepted, backfill("sub-b", 10).Code, "another subscription has a budget of its own")

	f.refuse = 1
	require.Equal(t, http.StatusConflict, backfill("sub-c", 10).Code)
	require.Equal(t, http.StatusAccepted, backfill("sub-c", 10).Code, "the refused backfill gave back what it took")

	rec = backfill("sub-d", 11)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Contains(t, armAnswer(t, rec).Message, "the range holds 11 occurrences, more than the 10 backfill occurrences a subscription may queue at once")
	rec = backfill("sub-d", jobs.MaxBackfill+1)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Contains(t, armAnswer(t, rec).Message, "more than 1000 occurrences")
	sent := len(f.updates)
	require.Equal(t, http.StatusAccepted, backfill("sub-d", 10).Code, "the refused ranges took nothing")
	require.Len(t, f.updates, sent+1)
}

// TestABackfillWithoutABudgetIsPacedAlone: with no budget per
// subscription the API counts nothing and sets no budget; the workflow
// still hears the pace.
func TestABackfillWithoutABudgetIsPacedAlone(t *testing.T) {
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	f := &backfillFake{view: jobs.JobView{PlannedFrom: start, Job: jobs.Job{Properties: jobs.Properties{
		State: jobs.Enabled, StartTime: recurrence.At(start), Recurrence: &recurrence.Recurrence{Frequency: "Hour"}}}}}
	h := New(f, Options{Logger: slog.New(slog.DiscardHandler)})
	for range 3 {
		req := newRequest(http.MethodPost, badJob+"/backfill"+badVersion, strings.NewReader(
			`{"startTime":"`+start.Format(time.RFC3339)+`","endTime":"`+start.Add(999*time.Hour).Format(time.RFC3339)+`"}`))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	}
	require.Len(t, f.updates, 3)
	require.Nil(t, f.updates[0].Budget)
	require.Zero(t, f.updates[0].Pace, "zero: the workflow's default")
}

// idleTaskQueue is the workflow service of a fake whose task queue has no
// backlog: the store asks it before a write (store's backlogged).
type idleTaskQueue struct {
	workflowservice.WorkflowServiceClient
}

func (idleTaskQueue) DescribeTaskQueue(context.Context, *workflowservice.DescribeTaskQueueRequest, ...grpc.CallOption) (*workflowservice.DescribeTaskQueueResponse, error) {
	return &workflowservice.DescribeTaskQueueResponse{}, nil
}

func (f *backfillFake) WorkflowService() workflowservice.WorkflowServiceClient {
	return idleTaskQueue{}
}
