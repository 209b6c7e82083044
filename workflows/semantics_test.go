package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
	"github.com/recurhq/recur/worker"
)

// harness is a job workflow in the time-skipping test environment with the
// HTTP activity mocked: it records every attempt and answers with answer.
type harness struct {
	t          *testing.T
	env        *testsuite.TestWorkflowEnvironment
	collection *collectionStandIn

	mu       sync.Mutex
	attempts []attempt
	// activities are the types of the activities started, in order.
	activities []string
	upserts    []map[string]any // of the memo, in order
	answer     func(in jobs.HTTPRequestInput, n int) (jobs.HTTPResponse, error)
	// slow says how long an attempt takes, in workflow time; nil for
	// none. delay is what it said of the attempt starting.
	slow  func(in jobs.HTTPRequestInput) time.Duration
	delay time.Duration
}

// attempt is one call of the HTTP activity.
type attempt struct {
	id, action string
	at         time.Time
}

func newHarness(t *testing.T, now time.Time) *harness {
	return newHarnessOn(t, newEnv(t), now)
}

// newHarnessOn is newHarness on env.
func newHarnessOn(t *testing.T, env *testsuite.TestWorkflowEnvironment, now time.Time) *harness {
	h := &harness{t: t, env: env}
	h.env.SetStartTime(now)
	worker.Register(h.env, &activities.Activities{})
	h.collection = newCollectionStandIn(h.env)
	h.env.OnUpsertMemo(mock.Anything).Return(nil).Maybe().Run(func(args mock.Arguments) {
		h.mu.Lock()
		h.upserts = append(h.upserts, args.Get(0).(map[string]any))
		h.mu.Unlock()
	})
	h.answer = func(jobs.HTTPRequestInput, int) (jobs.HTTPResponse, error) {
		return jobs.HTTPResponse{StatusCode: 200, Status: "200 OK"}, nil
	}
	// The listener runs on the environment's own goroutine, where its
	// clock reads true; an activity runs on another one.
	h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		h.mu.Lock()
		h.activities = append(h.activities, info.ActivityType.Name)
		h.mu.Unlock()
		var in jobs.HTTPRequestInput
		if info.ActivityType.Name == "HTTP" && args.Get(&in) == nil {
			h.mu.Lock()
			h.attempts = append(h.attempts, attempt{id: in.OccurrenceID, action: in.ActionName, at: h.env.Now().UTC()})
			h.delay = 0
			if h.slow != nil {
				h.delay = h.slow(in)
			}
			h.mu.Unlock()
		}
	})
	h.env.OnActivity(acts.HTTP, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in jobs.HTTPRequestInput) (jobs.HTTPResponse, error) {
			return h.respond(in, int(activity.GetInfo(ctx).Attempt))
		}).AfterFn(func() time.Duration {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.delay
	})
	return h
}

// respond is h.answer to attempt n, as the HTTP activity returns it.
func (h *harness) respond(in jobs.HTTPRequestInput, n int) (jobs.HTTPResponse, error) {
	resp, err := h.answer(in, n)
	resp.Attempt = n
	if err != nil {
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) {
			// Failures carry the response as details, as the real activity does.
			if appErr.NonRetryable() {
				return resp, temporal.NewNonRetryableApplicationError(appErr.Message(), appErr.Type(), nil, resp)
			}
			return resp, temporal.NewApplicationError(appErr.Message(), appErr.Type(), resp)
		}
	}
	return resp, err
}

// at schedules f at offset d of workflow time.
func (h *harness) at(d time.Duration, f func()) { h.env.RegisterDelayedCallback(f, d) }

func (h *harness) put(job jobs.Job) {
	update(h.t, h.env, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job})
}

func (h *harness) view() jobs.Job { return queryJob(h.t, h.env).Job }

// run executes the job workflow until it ends (deleted at end).
func (h *harness) run(end time.Duration, in jobs.JobInput) {
	h.at(end, func() { update(h.t, h.env, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{}) })
	h.env.ExecuteWorkflow(jobs.JobWorkflowName, in)
	require.True(h.t, h.env.IsWorkflowCompleted())
}

// rows returns the history rows the job wrote, of the given status ("" for
// all), in the order written.
func (h *harness) rows(status jobs.ExecutionStatus) []jobs.HistoryRow {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []jobs.HistoryRow
	for _, u := range h.upserts {
		rows, _ := u[jobs.MemoRows].([]jobs.HistoryRow)
		for _, r := range rows {
			if status == "" || r.Status == status {
				out = append(out, r)
			}
		}
	}
	return out
}

// ids returns the distinct occurrence IDs of the main action, in order.
func (h *harness) ids() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, a := range h.attempts {
		if a.action == jobs.MainAction && (len(out) == 0 || out[len(out)-1] != a.id) {
			out = append(out, a.id)
		}
	}
	return out
}

func job(start time.Time, rec *recurrence.Recurrence) jobs.Job {
	j := jobs.Job{Properties: jobs.Properties{
		Action:     &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: "https://example.com/", Method: "POST"}}},
		Recurrence: rec,
	}}
	if !start.IsZero() {
		j.Properties.StartTime = recurrence.At(start)
	}
	return j
}

func intp(n int) *int { return &n }

func occurrences(times ...string) []string {
	out := make([]string, len(times))
	for i, t := range times {
		out[i] = "job:s/rg/c/j@" + t
	}
	return out
}

var failing = func(jobs.HTTPRequestInput, int) (jobs.HTTPResponse, error) {
	return jobs.HTTPResponse{StatusCode: 500, Status: "500 Internal Server Error", Body: "boom"},
		temporal.NewApplicationError("POST https://example.com/: 500 Internal Server Error", activities.ErrTypeHTTPStatus)
}

func TestWeeklyMonWedFriTwiceADayCount10(t *testing.T) {
	// The seed's example: weekly on Monday, Wednesday and Friday at 10:00
	// and 22:00, count 10, from 2012-08-04.
	h := newHarness(t, time.Date(2012, 8, 1, 0, 0, 0, 0, time.UTC))
	j := job(time.Date(2012, 8, 4, 0, 0, 0, 0, time.UTC), &recurrence.Recurrence{
		Frequency: "Week", Count: intp(10),
		Schedule: &recurrence.Schedule{WeekDays: []recurrence.DayOfWeek{"Monday", "Wednesday", "Friday"}, Hours: []int{10, 22}},
	})
	h.at(0, func() { h.put(j) })
	var end jobs.Job
	h.at(20*24*time.Hour, func() { end = h.view() })
	h.run(21*24*time.Hour, jobs.JobInput{Key: key})
	require.Equal(t, occurrences(
		"2012-08-06T10:00:00Z", "2012-08-06T22:00:00Z", "2012-08-08T10:00:00Z", "2012-08-08T22:00:00Z",
		"2012-08-10T10:00:00Z", "2012-08-10T22:00:00Z", "2012-08-13T10:00:00Z", "2012-08-13T22:00:00Z",
		"2012-08-15T10:00:00Z", "2012-08-15T22:00:00Z"), h.ids())
	require.Equal(t, jobs.Completed, end.Properties.State)
	require.Equal(t, 10, end.Properties.Status.ExecutionCount)
}

func TestEndTimeStopsTheJob(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	end := recurrence.At(now.Add(30 * time.Minute))
	h.at(0, func() { h.put(job(now, &recurrence.Recurrence{Frequency: "Minute", Interval: intp(10), EndTime: end})) })
	var v jobs.Job
	h.at(2*time.Hour, func() { v = h.view() })
	h.run(3*time.Hour, jobs.JobInput{Key: key})
	require.Equal(t, occurrences("2026-06-01T12:00:00Z", "2026-06-01T12:10:00Z", "2026-06-01T12:20:00Z", "2026-06-01T12:30:00Z"), h.ids())
	require.Equal(t, jobs.Completed, v.Properties.State)
	require.Nil(t, v.Properties.Status.NextExecutionTime)
}

// TestCountAndEndTimeTheEarlierEnds: Azure took both at once (its recorded
// traffic has "count":10000 with an endTime); whichever comes first ends
// the job.
func TestCountAndEndTimeTheEarlierEnds(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for name, c := range map[string]struct {
		count int
		want  []string
	}{
		"endTime first": {10000, occurrences("2026-06-01T12:00:00Z", "2026-06-01T12:10:00Z", "2026-06-01T12:20:00Z", "2026-06-01T12:30:00Z")},
		"count first":   {2, occurrences("2026-06-01T12:00:00Z", "2026-06-01T12:10:00Z")},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, now)
			end := recurrence.At(now.Add(30 * time.Minute))
			h.at(0, func() {
				h.put(job(now, &recurrence.Recurrence{Frequency: "Minute", Interval: intp(10), Count: intp(c.count), EndTime: end}))
			})
			var v jobs.Job
			h.at(2*time.Hour, func() { v = h.view() })
			h.run(3*time.Hour, jobs.JobInput{Key: key})
			require.Equal(t, c.want, h.ids())
			require.Equal(t, jobs.Completed, v.Properties.State)
			require.Equal(t, len(c.want), v.Properties.Status.ExecutionCount)
		})
	}
}

// TestTheErrorActionRunsWhenTheMainActionFailsForGood: the main action's
// attempts, then the error action once, all under the occurrence's ID.
// (The test environment mishandles local activities retried after a
// timer, so the retry policy's intervals are checked on a real server, by
// e2e TestFailedRunRetriesAndHistory, and its translation by
// TestRetryPolicyBecomesTheLocalActivityOptions.)
func TestTheErrorActionRunsWhenTheMainActionFailsForGood(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.answer = func(in jobs.HTTPRequestInput, n int) (jobs.HTTPResponse, error) {
		if in.ActionName == jobs.ErrorAction {
			return jobs.HTTPResponse{StatusCode: 200, Status: "200 OK"}, nil
		}
		return failing(in, n)
	}
	j := job(now.Add(time.Minute), nil) // one-time
	j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "None"}
	j.Properties.Action.ErrorAction = &jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: "https://example.com/error", Method: "POST"}}
	h.at(0, func() { h.put(j) })
	var v jobs.Job
	h.at(time.Hour, func() { v = h.view() })
	h.run(2*time.Hour, jobs.JobInput{Key: key})

	id := "job:s/rg/c/j@2026-06-01T12:01:00Z"
	var actions []string
	for _, a := range h.attempts {
		require.Equal(t, id, a.id, "every attempt carries the occurrence ID")
		actions = append(actions, a.action)
	}
	require.Equal(t, []string{jobs.MainAction, jobs.ErrorAction}, actions)
	require.Equal(t, jobs.Faulted, v.Properties.State, "a one-time job whose run faulted")
	require.Equal(t, jobs.Status{ExecutionCount: 1, FailureCount: 1, FaultedCount: 1, LastExecutionTime: v.Properties.Status.LastExecutionTime,
		ConsecutiveFailures: 1, LastLateness: jobs.DurationOf(0)}, *v.Properties.Status)
	rows := h.rows("")
	require.Len(t, rows, 2)
	require.Equal(t, jobs.MainAction, rows[0].ActionName)
	require.Equal(t, jobs.ExecutionFailed, rows[0].Status)
	require.Contains(t, rows[0].Message, "500 Internal Server Error")
	require.Equal(t, jobs.ErrorAction, rows[1].ActionName)
	require.Equal(t, jobs.ExecutionCompleted, rows[1].Status)
}

func TestNonRetryableFailureStopsRetriesAtOnce(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.answer = func(jobs.HTTPRequestInput, int) (jobs.HTTPResponse, error) {
		return jobs.HTTPResponse{StatusCode: 404, Status: "404 Not Found"},
			temporal.NewNonRetryableApplicationError("POST https://example.com/: 404 Not Found", activities.ErrTypeHTTPStatus, nil)
	}
	h.at(0, func() { h.put(job(now, &recurrence.Recurrence{Frequency: "Hour", Count: intp(2), Interval: intp(1)})) })
	var v jobs.Job
	h.at(3*time.Hour, func() { v = h.view() })
	h.run(4*time.Hour, jobs.JobInput{Key: key})
	require.Len(t, h.attempts, 2, "one attempt per occurrence")
	require.Equal(t, 2, v.Properties.Status.FaultedCount)
	require.Equal(t, jobs.Completed, v.Properties.State, "a recurring job without maxConsecutiveFaults stays on")
}

func TestMaxConsecutiveFaultsFaultsARecurringJob(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.answer = failing
	j := job(now, &recurrence.Recurrence{Frequency: "Hour"})
	j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "None"}
	j.Properties.MaxConsecutiveFaults = 2
	h.at(0, func() { h.put(j) })
	var v jobs.Job
	h.at(5*time.Hour, func() { v = h.view() })
	h.run(6*time.Hour, jobs.JobInput{Key: key})
	require.Equal(t, occurrences("2026-06-01T12:00:00Z", "2026-06-01T13:00:00Z"), h.ids())
	require.Equal(t, jobs.Faulted, v.Properties.State)
	require.Nil(t, v.Properties.Status.NextExecutionTime)
}

func TestDisableThenEnableResumesAtTheNextOccurrenceToCome(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	j := job(now, &recurrence.Recurrence{Frequency: "Hour"})
	h.at(0, func() { h.put(j) })
	h.at(90*time.Minute, func() {
		d := j
		d.Properties.State = jobs.Disabled
		h.put(d)
	})
	var enabled jobs.Job
	h.at(210*time.Minute, func() { h.put(j) })
	h.at(211*time.Minute, func() { enabled = h.view() })
	h.run(5*time.Hour+30*time.Minute, jobs.JobInput{Key: key})
	require.Equal(t, occurrences("2026-06-01T12:00:00Z", "2026-06-01T13:00:00Z",
		"2026-06-01T16:00:00Z", "2026-06-01T17:00:00Z"), h.ids(), "nothing ran while disabled, nothing ran twice")
	require.Equal(t, jobs.Enabled, enabled.Properties.State)
	require.Equal(t, 2, enabled.Properties.Status.ExecutionCount, "counters are kept")
}

func TestRunNowRunsOnceWithoutUsingTheCount(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.at(0, func() { h.put(job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Hour", Count: intp(2)})) })
	h.at(10*time.Minute, func() { update(t, h.env, jobs.UpdateRunNow, jobs.RunNowRequest{}) })
	var v jobs.Job
	h.at(4*time.Hour, func() { v = h.view() })
	h.run(5*time.Hour, jobs.JobInput{Key: key})
	require.Equal(t, []string{"job:s/rg/c/j@2026-06-01T12:10:00Z/run-now",
		"job:s/rg/c/j@2026-06-01T13:00:00Z", "job:s/rg/c/j@2026-06-01T14:00:00Z"}, h.ids())
	require.Equal(t, 3, v.Properties.Status.ExecutionCount)
	require.Equal(t, jobs.Completed, v.Properties.State)
}

// TestRunsNowInOneTaskEachRun: run-now updates handled in one workflow
// task share their nominal time, and each still runs under its own ID.
func TestRunsNowInOneTaskEachRun(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.at(0, func() { h.put(job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Hour", Count: intp(1)})) })
	h.at(10*time.Minute, func() {
		for range 3 {
			update(t, h.env, jobs.UpdateRunNow, jobs.RunNowRequest{})
		}
	})
	var v jobs.Job
	h.at(30*time.Minute, func() { v = h.view() })
	h.run(2*time.Hour, jobs.JobInput{Key: key})
	require.ElementsMatch(t, []string{"job:s/rg/c/j@2026-06-01T12:10:00Z/run-now",
		"job:s/rg/c/j@2026-06-01T12:10:00Z/run-now-2", "job:s/rg/c/j@2026-06-01T12:10:00Z/run-now-3",
		"job:s/rg/c/j@2026-06-01T13:00:00Z"}, h.ids())
	require.Equal(t, 3, v.Properties.Status.ExecutionCount)
}

// slowFirstRun returns an every-minute job from now with count whose
// first run takes 75 s, so the occurrence at now + 1 min finds it still
// running.
func slowFirstRun(h *harness, now time.Time, count int) jobs.Job {
	first := jobs.OccurrenceID(key.JobWorkflowID(), now)
	h.slow = func(in jobs.HTTPRequestInput) time.Duration {
		if in.OccurrenceID == first {
			return 75 * time.Second
		}
		return 0
	}
	return job(now, &recurrence.Recurrence{Frequency: "Minute", Count: intp(count)})
}

func TestOverlapSkipPostponesAnOccurrenceWhileTheRunRuns(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	j := slowFirstRun(h, now, 3)
	h.at(0, func() { h.put(j) })
	var v jobs.Job
	h.at(10*time.Minute, func() { v = h.view() })
	h.run(15*time.Minute, jobs.JobInput{Key: key})
	require.Equal(t, occurrences("2026-06-01T12:00:00Z", "2026-06-01T12:02:00Z", "2026-06-01T12:03:00Z"), h.ids(),
		"12:01 was postponed and does not use the count")
	require.Equal(t, 3, v.Properties.Status.ExecutionCount)
	postponed := h.rows(jobs.ExecutionPostponed)
	require.Len(t, postponed, 1, "the skipped occurrence is a Postponed history row")
	require.Equal(t, now.Add(time.Minute), postponed[0].ExpectedExecutionTime)
	require.Contains(t, postponed[0].Message, "still running")
}

func TestOverlapBufferOneRunsTheOccurrenceAfterThePreviousRun(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	j := slowFirstRun(h, now, 2)
	j.Properties.OverlapPolicy = "bufferone"
	h.at(0, func() { h.put(j) })
	h.run(10*time.Minute, jobs.JobInput{Key: key})
	require.Equal(t, occurrences("2026-06-01T12:00:00Z", "2026-06-01T12:01:00Z"), h.ids())
	var first, second time.Time
	for _, a := range h.attempts {
		switch {
		case strings.HasSuffix(a.id, "12:00:00Z"):
			first = a.at
		case strings.HasSuffix(a.id, "12:01:00Z"):
			second = a.at
		}
	}
	require.Equal(t, first.Add(75*time.Second), second, "the buffered occurrence runs when the first run ends")
}

// TestARedefinitionKeepsTheBufferedOccurrence: a PUT while a BufferOne
// job's run runs and its next occurrence waits for it keeps that
// occurrence, which runs when the run ends: it was due, and counted, under
// the definition before.
func TestARedefinitionKeepsTheBufferedOccurrence(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	j := slowFirstRun(h, now, 10)
	j.Properties.OverlapPolicy = jobs.OverlapBufferOne
	h.at(0, func() { h.put(j) })
	redefined := j
	redefined.Properties.Action = &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http",
		Request: &jobs.HTTPRequest{URI: "https://example.com/v2", Method: "POST"}}}
	h.at(70*time.Second, func() { h.put(redefined) })
	h.run(150*time.Second, jobs.JobInput{Key: key})
	require.Equal(t, occurrences("2026-06-01T12:00:00Z", "2026-06-01T12:01:00Z", "2026-06-01T12:02:00Z"), h.ids(),
		"12:01, buffered at the PUT, runs when 12:00's run ends")
}

func TestCatchUpAfterAThreeDayOutageRunsOnlyTheMostRecentOccurrence(t *testing.T) {
	// The workflow resumes with its state as it was three days ago: the
	// next occurrence planned then is long past.
	now := time.Date(2026, 6, 4, 12, 30, 0, 0, time.UTC)
	h := newHarness(t, now)
	created := now.Add(-72 * time.Hour)
	j := job(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC), &recurrence.Recurrence{Frequency: "Hour"})
	require.NoError(t, j.Accept(key, created))
	next := created.Add(30 * time.Minute) // 2026-06-01T13:00Z
	j.Properties.Status = &jobs.Status{NextExecutionTime: &next}
	state := &jobs.JobState{Job: j, PlannedFrom: created, Next: &next}
	var v jobs.Job
	h.at(time.Minute, func() { v = h.view() })
	h.run(40*time.Minute, jobs.JobInput{Key: key, State: state})
	require.Equal(t, occurrences("2026-06-04T12:00:00Z", "2026-06-04T13:00:00Z"), h.ids(),
		"72 missed occurrences: the most recent (within the 1 h window) runs, then the schedule goes on")
	require.Equal(t, 1, v.Properties.Status.ExecutionCount)
	// 72 occurrences were missed: 71 do not run; 49 are listed as
	// Postponed rows, the last of them counting the 22 left out.
	postponed := h.rows(jobs.ExecutionPostponed)
	require.Len(t, postponed, 49)
	require.True(t, slices.IsSortedFunc(postponed, func(a, b jobs.HistoryRow) int {
		return a.ExpectedExecutionTime.Compare(b.ExpectedExecutionTime)
	}), "written in the order they fell due")
	require.Equal(t, time.Date(2026, 6, 1, 13, 0, 0, 0, time.UTC), postponed[0].ExpectedExecutionTime)
	require.Equal(t, time.Date(2026, 6, 3, 13, 0, 0, 0, time.UTC), postponed[48].ExpectedExecutionTime)
	require.Contains(t, postponed[48].Message, "the 22 missed occurrences after it")
}

// TestContinueAsNewCarriesTheState: after 100 occurrences the workflow
// continues as new with its whole state, once the run now that arrived
// with the last occurrence has run.
func TestContinueAsNewCarriesTheState(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.at(0, func() { h.put(job(now, &recurrence.Recurrence{Frequency: "Minute"})) })
	completed := false
	h.at(99*time.Minute, func() {
		h.env.UpdateWorkflow(jobs.UpdateRunNow, "late", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("rejected: %v", err) }, OnAccept: func() {},
			OnComplete: func(_ any, err error) { completed = err == nil },
		}, jobs.RunNowRequest{})
	})
	h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key})
	require.True(t, h.env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, h.env.GetWorkflowError(), &can)
	require.True(t, completed, "the pending update finished before continue-as-new")
	require.Len(t, h.ids(), 101, "100 occurrences and the run now ran in this run of the workflow")
	var in jobs.JobInput
	require.NoError(t, converterFor().FromPayloads(can.Input, &in))
	require.Equal(t, key, in.Key)
	require.Equal(t, 100, in.State.Runs)
	require.Equal(t, 101, in.State.Job.Properties.Status.ExecutionCount, "100 occurrences and one run now")
	require.Equal(t, now.Add(100*time.Minute), *in.State.Next)
}

// TestStateIsUpsertedOnlyWhenItChanges: each upsert is a history event and
// a visibility write; an every-minute job upserted its state twice an
// occurrence although it stayed Enabled.
func TestStateIsUpsertedOnlyWhenItChanges(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	var states []string
	h.env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		if state, ok := args.Get(0).(temporal.SearchAttributes).GetKeyword(jobs.AttrState); ok {
			states = append(states, state)
		}
	})
	h.at(0, func() { h.put(job(now, &recurrence.Recurrence{Frequency: "Minute", Count: intp(5)})) })
	var v jobs.Job
	h.at(30*time.Minute, func() { v = h.view() })
	h.run(time.Hour, jobs.JobInput{Key: key})
	require.Equal(t, 5, v.Properties.Status.ExecutionCount)
	require.Equal(t, []string{string(jobs.Enabled), string(jobs.Completed)}, states)
}

// TestAnOccurrenceIsOneUpsertOfTheMemo: the status waits for the end of
// the run it counts, so an occurrence writes its rows and the status in
// one upsert: one history event.
func TestAnOccurrenceIsOneUpsertOfTheMemo(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.at(0, func() { h.put(job(now, &recurrence.Recurrence{Frequency: "Minute", Count: intp(5)})) })
	h.run(time.Hour, jobs.JobInput{Key: key})
	require.Len(t, h.ids(), 5)
	require.Len(t, h.upserts, 7, "the definition, five occurrences (the last completes the job), the DELETE")
	require.Contains(t, h.upserts[0], jobs.MemoJob)
	require.Contains(t, h.upserts[0], jobs.MemoStatus, "a new job shows its status at once")
	for i, u := range h.upserts[1:6] {
		require.Contains(t, u, jobs.MemoRows, i)
		require.Contains(t, u, jobs.MemoStatus, i)
		st := u[jobs.MemoStatus].(jobs.StatusView)
		require.Equal(t, i+1, st.Status.ExecutionCount, i)
		require.Equal(t, i+1, st.Runs, i)
	}
	require.NotContains(t, h.upserts[4], jobs.MemoJob, "an occurrence leaves the definition alone")
	require.Equal(t, jobs.Completed, h.upserts[5][jobs.MemoJob].(jobs.JobView).Job.Properties.State)
	require.True(t, h.upserts[6][jobs.MemoJob].(jobs.JobView).Deleted)
	require.Len(t, h.rows(jobs.ExecutionCompleted), 5)
}

// TestARedefinitionWithinTheSecondOfARunDoesNotRunItAgain: C is in whole
// seconds, so a PUT in the second of a run plans that run's occurrence
// first again; it has been handled and does not run twice.
func TestARedefinitionWithinTheSecondOfARunDoesNotRunItAgain(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	j := job(now, &recurrence.Recurrence{Frequency: "Hour"})
	h.at(0, func() { h.put(j) })
	h.at(500*time.Millisecond, func() { h.put(j) })
	var v jobs.Job
	h.at(30*time.Minute, func() { v = h.view() })
	h.run(90*time.Minute, jobs.JobInput{Key: key})
	require.Len(t, h.attempts, 2, "12:00 once, 13:00")
	require.Equal(t, occurrences("2026-06-01T12:00:00Z", "2026-06-01T13:00:00Z"), h.ids())
	require.Equal(t, 1, v.Properties.Status.ExecutionCount)
	require.Equal(t, now.Add(time.Hour), *v.Properties.Status.NextExecutionTime)
}

// TestACronJobRunsAtItsTimesAndCounts: a cron recurrence (the last
// weekday of each month at 18:00, three times) runs at its times under
// its occurrence IDs, then completes, and its catch-up window defaults to
// its shortest gap.
func TestACronJobRunsAtItsTimesAndCounts(t *testing.T) {
	now := time.Date(2026, 5, 20, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	count := 3
	def := job(now, &recurrence.Recurrence{Cron: "0 18 LW * *", Count: &count})
	require.Equal(t, 28*24*time.Hour, def.Properties.CatchUp(), "February's last weekday to March's, at the least")
	h.at(0, func() { h.put(def) })
	var view jobs.Job
	h.at(100*24*time.Hour, func() { view = h.view() })
	h.run(101*24*time.Hour, jobs.JobInput{Key: key})
	var got []time.Time
	for _, a := range h.attempts {
		got = append(got, a.at)
	}
	// 2026-05-31 is a Sunday; 2026-06-30 a Tuesday; 2026-07-31 a Friday.
	require.Equal(t, []time.Time{
		time.Date(2026, 5, 29, 18, 0, 0, 0, time.UTC),
		time.Date(2026, 6, 30, 18, 0, 0, 0, time.UTC),
		time.Date(2026, 7, 31, 18, 0, 0, 0, time.UTC),
	}, got)
	require.Equal(t, jobs.Completed, view.Properties.State)
	require.Equal(t, 3, view.Properties.Status.ExecutionCount)
}

// TestAJobOfSeveralRulesRunsTheirUnionAndCounts: a list of rules (an
// Azure rule, a cron and an RRULE with BYSETPOS) runs at the union of
// their times under its occurrence IDs, an instant two rules reach once,
// and count counts the union; the job's view reads the same.
func TestAJobOfSeveralRulesRunsTheirUnionAndCounts(t *testing.T) {
	now := time.Date(2026, 5, 29, 0, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	def := job(now, &recurrence.Recurrence{Count: intp(5), Rules: []recurrence.RuleSpec{
		{Frequency: "Day", Schedule: &recurrence.Schedule{Hours: []int{9}, Minutes: []int{0}}},
		{Cron: "0 9,18 * * 6"},
		{RRule: "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1;BYHOUR=12;BYMINUTE=0;BYSECOND=0"},
	}})
	require.Equal(t, 3*time.Hour, def.Properties.CatchUp(), "9:00 to 12:00 on a first weekday, at the least")
	h.at(0, func() { h.put(def) })
	var view jobs.Job
	h.at(10*24*time.Hour, func() { view = h.view() })
	h.run(11*24*time.Hour, jobs.JobInput{Key: key})
	// 2026-05-29 is a Friday, 05-30 a Saturday; 06-01 a Monday, June's
	// first weekday.
	require.Equal(t, occurrences("2026-05-29T09:00:00Z", "2026-05-30T09:00:00Z", "2026-05-30T18:00:00Z",
		"2026-05-31T09:00:00Z", "2026-06-01T09:00:00Z"), h.ids())
	require.Equal(t, jobs.Completed, view.Properties.State)
	require.Equal(t, 5, view.Properties.Status.ExecutionCount)
	require.Len(t, view.Properties.Recurrence.Rules, 3, "the view shows the rules as given")
}

// TestMaxConcurrentRunsBoundsAllowAll: every-minute runs of 150 s with
// AllowAll and maxConcurrentRuns 2: two run at once, and the occurrence
// due while both run is postponed, saying why.
func TestMaxConcurrentRunsBoundsAllowAll(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.slow = func(jobs.HTTPRequestInput) time.Duration { return 150 * time.Second }
	j := job(now, &recurrence.Recurrence{Frequency: "Minute", Count: intp(4)})
	j.Properties.OverlapPolicy, j.Properties.MaxConcurrentRuns = "AllowAll", 2
	h.at(0, func() { h.put(j) })
	h.run(15*time.Minute, jobs.JobInput{Key: key})
	require.Equal(t, occurrences("2026-06-01T12:00:00Z", "2026-06-01T12:01:00Z", "2026-06-01T12:03:00Z", "2026-06-01T12:04:00Z"), h.ids(),
		"12:02 fell due while 12:00 and 12:01 ran")
	postponed := h.rows(jobs.ExecutionPostponed)
	require.Len(t, postponed, 1)
	require.Equal(t, now.Add(2*time.Minute), postponed[0].ExpectedExecutionTime)
	require.Contains(t, postponed[0].Message, "2 runs were still running (maxConcurrentRuns)")
}

// TestJitterStartsEachOccurrenceAtItsOwnOffset: an hourly job with a
// 10-minute jitter runs each occurrence at its nominal time plus the
// occurrence's own offset, and its history keeps the nominal time.
func TestJitterStartsEachOccurrenceAtItsOwnOffset(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	j := job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Hour", Count: intp(3)})
	j.Properties.Jitter = "PT10M"
	h.at(0, func() { h.put(j) })
	h.run(5*time.Hour, jobs.JobInput{Key: key})
	require.Len(t, h.attempts, 3)
	for i, a := range h.attempts {
		nominal := now.Add(time.Duration(i+1) * time.Hour)
		id := jobs.OccurrenceID(key.JobWorkflowID(), nominal)
		require.Equal(t, id, a.id, "the occurrence keeps its nominal ID")
		require.Equal(t, nominal.Add(jobs.JitterOffset(id, 10*time.Minute)), a.at, "occurrence %d", i)
	}
	rows := h.rows(jobs.ExecutionCompleted)
	require.Len(t, rows, 3)
	require.Equal(t, now.Add(time.Hour), rows[0].ExpectedExecutionTime, "history keeps the nominal time")
}

// TestBackfillRunsPastOccurrencesUnderTheirOwnIDs: an hourly job (count
// 2) backfilled over three past hours runs those occurrences one at a
// time, under the IDs they would have had on time, marks their rows, and
// counts them in the status but not toward count: both scheduled
// occurrences still run. A range in the future is refused.
func TestBackfillRunsPastOccurrencesUnderTheirOwnIDs(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 30, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.slow = func(jobs.HTTPRequestInput) time.Duration { return 10 * time.Second }
	h.at(0, func() {
		h.put(job(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC), &recurrence.Recurrence{Frequency: "Hour", Count: intp(2)}))
	})
	var queued jobs.BackfillResult
	var future error
	h.at(time.Second, func() {
		updates++
		h.env.UpdateWorkflow(jobs.UpdateBackfill, fmt.Sprintf("backfill-%d", updates), &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("backfill rejected: %v", err) }, OnAccept: func() {},
			OnComplete: func(r any, err error) {
				require.NoError(t, err)
				queued = r.(jobs.BackfillResult)
			},
		}, jobs.BackfillRequest{StartTime: now.Add(-3*time.Hour - 30*time.Minute), EndTime: now.Add(-90 * time.Minute)})
		updates++
		h.env.UpdateWorkflow(jobs.UpdateBackfill, fmt.Sprintf("backfill-%d", updates), &testsuite.TestUpdateCallback{
			OnReject: func(err error) { future = err }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, jobs.BackfillRequest{StartTime: now, EndTime: now.Add(time.Hour)})
	})
	// A redefinition while the backfill runs keeps what it has left.
	h.at(15*time.Second, func() {
		h.put(job(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC), &recurrence.Recurrence{Frequency: "Hour", Count: intp(2)}))
	})
	var v jobs.Job
	h.at(3*time.Hour, func() { v = h.view() })
	h.run(4*time.Hour, jobs.JobInput{Key: key})
	require.Equal(t, 3, queued.Queued, "09:00, 10:00 and 11:00")
	require.Error(t, future, "a range in the future")
	require.Equal(t, occurrences("2026-06-01T09:00:00Z", "2026-06-01T10:00:00Z", "2026-06-01T11:00:00Z",
		"2026-06-01T13:00:00Z", "2026-06-01T14:00:00Z"), h.ids())
	for i := 1; i < 3; i++ {
		require.GreaterOrEqual(t, h.attempts[i].at.Sub(h.attempts[i-1].at), 10*time.Second, "one at a time")
	}
	var backfilled int
	for _, r := range h.rows(jobs.ExecutionCompleted) {
		if r.Backfill {
			backfilled++
			require.True(t, r.ExpectedExecutionTime.Before(now), "a backfilled row keeps its past nominal time")
		}
	}
	require.Equal(t, 3, backfilled)
	require.Equal(t, 5, v.Properties.Status.ExecutionCount)
	require.Equal(t, jobs.Completed, v.Properties.State, "count 2 of the schedule used up; the backfill did not use it")
}

// TestALostWorkerCostsTheTargetNoAttempt: an attempt lost with its worker
// (its heartbeat stopped) is given again when it was the last, so that an
// action without retries still runs; one that loses its worker each time
// fails after maxWorkerLosses more, and its error action runs.
func TestALostWorkerCostsTheTargetNoAttempt(t *testing.T) {
	lost := temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
	for _, tc := range []struct {
		name     string
		losses   int // of the main action's first attempts
		attempts int // of the main action
		status   jobs.ExecutionStatus
	}{
		{"once", 1, 2, jobs.ExecutionCompleted},
		{"every time", 100, 4, jobs.ExecutionFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
			h := newHarness(t, now)
			losses := 0
			h.answer = func(in jobs.HTTPRequestInput, _ int) (jobs.HTTPResponse, error) {
				if in.ActionName == jobs.MainAction && losses < tc.losses {
					losses++
					return jobs.HTTPResponse{}, lost
				}
				return jobs.HTTPResponse{StatusCode: 200, Status: "200 OK"}, nil
			}
			j := job(now.Add(time.Minute), nil) // one-time
			j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "None"}
			j.Properties.Action.ErrorAction = &jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: "https://example.com/error", Method: "POST"}}
			h.at(0, func() { h.put(j) })
			h.run(2*time.Hour, jobs.JobInput{Key: key})

			var main int
			for _, a := range h.attempts {
				if a.action == jobs.MainAction {
					main++
				}
			}
			require.Equal(t, tc.attempts, main)
			rows := h.rows("")
			require.NotEmpty(t, rows)
			require.Equal(t, tc.status, rows[0].Status)
			require.Equal(t, tc.attempts-1, rows[0].RetryCount)
			if tc.status == jobs.ExecutionFailed {
				require.Len(t, rows, 2, "the error action runs")
				require.Equal(t, jobs.ErrorAction, rows[1].ActionName)
			} else {
				require.Len(t, rows, 1, "no error action")
			}
		})
	}
}

// TestADeleteCancelsTheRunInFlight: a job deleted while its action runs
// ends at once: the run is cancelled (its error action does not run) and
// the name is free for a new job, where a disable lets the run finish and
// counts it.
func TestADeleteCancelsTheRunInFlight(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	start := func(h *harness) {
		h.slow = func(jobs.HTTPRequestInput) time.Duration { return time.Hour }
		h.answer = func(jobs.HTTPRequestInput, int) (jobs.HTTPResponse, error) {
			return jobs.HTTPResponse{StatusCode: 500, Status: "500 Internal Server Error"},
				temporal.NewNonRetryableApplicationError("500", activities.ErrTypeHTTPStatus, nil)
		}
		j := job(now.Add(time.Minute), &recurrence.Recurrence{Frequency: "Hour", Interval: intp(1)})
		j.Properties.Action.ErrorAction = &jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: "https://example.com/error", Method: "POST"}}
		h.at(0, func() { h.put(j) })
	}
	t.Run("delete", func(t *testing.T) {
		h := newHarness(t, now)
		start(h)
		h.run(10*time.Minute, jobs.JobInput{Key: key})
		require.Equal(t, now.Add(10*time.Minute), h.env.Now().UTC(), "the workflow ends at the DELETE, not at the action's end")
		require.Len(t, h.attempts, 1)
		require.Empty(t, h.rows(""), "a cancelled run records nothing")
	})
	t.Run("disable", func(t *testing.T) {
		h := newHarness(t, now)
		start(h)
		var v jobs.Job
		h.at(10*time.Minute, func() {
			update(t, h.env, jobs.UpdatePatchJob, jobs.PatchJobRequest{Base: h.view().ETag, Patch: []byte(`{"properties":{"state":"Disabled"}}`)})
		})
		h.at(150*time.Minute, func() { v = h.view() }) // both actions took an hour
		h.run(3*time.Hour, jobs.JobInput{Key: key})
		require.Equal(t, jobs.Disabled, v.Properties.State)
		require.Equal(t, 1, v.Properties.Status.ExecutionCount, "the run in flight finished and counts")
		rows := h.rows("")
		require.Len(t, rows, 2, "the main action's failure, then the error action, and nothing after the disable")
		require.Equal(t, jobs.ExecutionFailed, rows[0].Status)
		require.Equal(t, jobs.ErrorAction, rows[1].ActionName)
	})
}

// TestACatchUpWithJitterTakesEveryOccurrenceWhoseStartHasPassed: a job
// with a jitter resumes after an outage at a moment when an occurrence
// less than a jitter old has already reached its own start. The catch-up
// takes it in the same step as the older ones: the planner makes every
// start that has passed due, and wakes the loop only for one to come.
func TestACatchUpWithJitterTakesEveryOccurrenceWhoseStartHasPassed(t *testing.T) {
	const jitter = 50 * time.Second
	// The first minute whose occurrence starts within its first 40 s.
	o := time.Date(2026, 6, 4, 12, 0, 0, 0, time.UTC)
	for jobs.JitterOffset(jobs.OccurrenceID(key.JobWorkflowID(), o), jitter) >= 40*time.Second {
		o = o.Add(time.Minute)
	}
	now := o.Add(jobs.JitterOffset(jobs.OccurrenceID(key.JobWorkflowID(), o), jitter) + 5*time.Second)
	h := newHarness(t, now)
	created := o.Add(-time.Hour)
	j := job(created, &recurrence.Recurrence{Frequency: "Minute"})
	j.Properties.Jitter = "PT50S"
	require.NoError(t, j.Accept(key, created))
	next := o.Add(-10 * time.Minute) // the outage began ten minutes before
	j.Properties.Status = &jobs.Status{NextExecutionTime: &next}
	h.run(30*time.Second, jobs.JobInput{Key: key, State: &jobs.JobState{Job: j, PlannedFrom: created, Next: &next}})
	ran := h.ids()
	require.NotEmpty(t, ran)
	require.Equal(t, jobs.OccurrenceID(key.JobWorkflowID(), o), ran[len(ran)-1], "the occurrence whose start has passed runs at once")
}

// TestADisabledJobDoesNotStartItsBufferedOccurrence: a BufferOne job
// disabled while its next occurrence waits for the run before it, by a
// PUT or by its collection, postpones that occurrence when the run ends,
// with a row that says why; enabled again, the job is planned anew, its
// count too, from the next occurrence.
func TestADisabledJobDoesNotStartItsBufferedOccurrence(t *testing.T) {
	for _, by := range []string{"PUT", "collection"} {
		t.Run(by, func(t *testing.T) {
			now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
			h := newHarness(t, now)
			j := slowFirstRun(h, now, 3)
			j.Properties.OverlapPolicy = jobs.OverlapBufferOne
			h.at(0, func() { h.put(j) })
			disabled, enabled := j, j
			disabled.Properties.State = jobs.Disabled
			h.at(65*time.Second, func() { // 12:01 is buffered behind 12:00's run, which ends at 12:01:15
				if by == "PUT" {
					h.put(disabled)
				} else {
					update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{State: jobs.Disabled})
				}
			})
			var v jobs.Job
			h.at(150*time.Second, func() { v = h.view() })
			h.at(200*time.Second, func() {
				if by == "PUT" {
					h.put(enabled)
				} else {
					update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{State: jobs.Enabled})
				}
			})
			h.run(10*time.Minute, jobs.JobInput{Key: key})
			require.Equal(t, jobs.Disabled, v.Properties.State)
			require.Equal(t, 1, v.Properties.Status.ExecutionCount, "only 12:00 ran while the job was disabled")
			ids := h.ids()
			require.Equal(t, occurrences("2026-06-01T12:00:00Z"), ids[:1])
			require.NotContains(t, ids, occurrences("2026-06-01T12:01:00Z")[0], "the buffered occurrence never started")
			postponed := h.rows(jobs.ExecutionPostponed)
			require.Len(t, postponed, 1)
			require.Equal(t, now.Add(time.Minute), postponed[0].ExpectedExecutionTime)
			require.Contains(t, postponed[0].Message, "disabled")
			require.Equal(t, occurrences("2026-06-01T12:00:00Z", "2026-06-01T12:04:00Z", "2026-06-01T12:05:00Z", "2026-06-01T12:06:00Z"), ids,
				"enabled again at 12:03:20, the job runs a count of 3 from 12:04")
		})
	}
}
