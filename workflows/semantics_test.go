package workflows_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
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
	t   *testing.T
	env *testsuite.TestWorkflowEnvironment

	mu        sync.Mutex
	attempts  []attempt
	postponed []jobs.RunInput // run workflows started for postponed occurrences
	answer    func(in jobs.HTTPRequestInput, n int) (jobs.HTTPResponse, error)
}

// attempt is one call of the HTTP activity.
type attempt struct {
	id, action string
	at         time.Time
}

func newHarness(t *testing.T, now time.Time) *harness {
	var suite testsuite.WorkflowTestSuite
	h := &harness{t: t, env: suite.NewTestWorkflowEnvironment()}
	h.env.SetStartTime(now)
	worker.Register(h.env, &activities.Activities{})
	h.env.SetOnChildWorkflowStartedListener(func(_ *workflow.Info, _ workflow.Context, args converter.EncodedValues) {
		var in jobs.RunInput
		if args.Get(&in) == nil && in.Postponed != "" {
			h.mu.Lock()
			h.postponed = append(h.postponed, in)
			h.mu.Unlock()
		}
	})
	h.answer = func(jobs.HTTPRequestInput, int) (jobs.HTTPResponse, error) {
		return jobs.HTTPResponse{StatusCode: 200, Status: "200 OK"}, nil
	}
	h.env.OnActivity(jobs.HTTPActivityName, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in jobs.HTTPRequestInput) (jobs.HTTPResponse, error) {
			h.mu.Lock()
			h.attempts = append(h.attempts, attempt{id: in.OccurrenceID, action: in.ActionName, at: h.env.Now().UTC()})
			n := 0
			for _, a := range h.attempts {
				if a.id == in.OccurrenceID && a.action == in.ActionName {
					n++
				}
			}
			h.mu.Unlock()
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
		})
	return h
}

// at schedules f at offset d of workflow time.
func (h *harness) at(d time.Duration, f func()) { h.env.RegisterDelayedCallback(f, d) }

func (h *harness) put(job jobs.Job) {
	update(h.t, h.env, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job})
}

func (h *harness) view() jobs.Job {
	res, err := h.env.QueryWorkflow(jobs.QueryJob)
	require.NoError(h.t, err)
	var v jobs.JobView
	require.NoError(h.t, res.Get(&v))
	return v.Job
}

// run executes the job workflow until it ends (deleted at end).
func (h *harness) run(end time.Duration, in jobs.JobInput) {
	h.at(end, func() { update(h.t, h.env, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{}) })
	h.env.ExecuteWorkflow(jobs.JobWorkflowName, in)
	require.True(h.t, h.env.IsWorkflowCompleted())
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

func TestFixedRetriesTakeTheirIntervalsThenTheErrorActionRuns(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.answer = func(in jobs.HTTPRequestInput, n int) (jobs.HTTPResponse, error) {
		if in.ActionName == jobs.ErrorAction {
			return jobs.HTTPResponse{StatusCode: 200, Status: "200 OK"}, nil
		}
		return failing(in, n)
	}
	j := job(now.Add(time.Minute), nil) // one-time
	j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "Fixed", RetryCount: intp(2), RetryInterval: "PT15S"}
	j.Properties.Action.ErrorAction = &jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: "https://example.com/error", Method: "POST"}}
	h.at(0, func() { h.put(j) })
	var v jobs.Job
	h.at(time.Hour, func() { v = h.view() })
	h.run(2*time.Hour, jobs.JobInput{Key: key})

	id := "job:s/rg/c/j@2026-06-01T12:01:00Z"
	var mains, errs []time.Time
	for _, a := range h.attempts {
		require.Equal(t, id, a.id, "every attempt carries the occurrence ID")
		if a.action == jobs.MainAction {
			mains = append(mains, a.at)
		} else {
			errs = append(errs, a.at)
		}
	}
	require.Len(t, mains, 3, "one attempt and retryCount 2")
	require.Equal(t, 30*time.Second, mains[2].Sub(mains[0]), "two retries 15 s apart")
	require.Equal(t, 15*time.Second, mains[1].Sub(mains[0]))
	require.Len(t, errs, 1, "the error action runs once, after the last attempt")
	require.False(t, errs[0].Before(mains[2]))
	require.Equal(t, jobs.Faulted, v.Properties.State, "a one-time job whose run faulted")
	require.Equal(t, jobs.Status{ExecutionCount: 1, FailureCount: 3, FaultedCount: 1, LastExecutionTime: v.Properties.Status.LastExecutionTime},
		*v.Properties.Status)
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
// first run fails five times 15 s apart before it succeeds (75 s), so the
// occurrence at now + 1 min finds it still running.
func slowFirstRun(h *harness, now time.Time, count int) jobs.Job {
	first := jobs.OccurrenceID(key.JobWorkflowID(), now)
	h.answer = func(in jobs.HTTPRequestInput, n int) (jobs.HTTPResponse, error) {
		if in.OccurrenceID == first && n < 6 {
			return failing(in, n)
		}
		return jobs.HTTPResponse{StatusCode: 200, Status: "200 OK"}, nil
	}
	j := job(now, &recurrence.Recurrence{Frequency: "Minute", Count: intp(count)})
	j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "Fixed", RetryCount: intp(5), RetryInterval: "PT15S"}
	return j
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
	require.Len(t, h.postponed, 1, "the skipped occurrence is a Postponed history row")
	require.Equal(t, now.Add(time.Minute), h.postponed[0].Nominal)
	require.Contains(t, h.postponed[0].Postponed, "still running")
}

func TestOverlapBufferOneRunsTheOccurrenceAfterThePreviousRun(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	j := slowFirstRun(h, now, 2)
	j.Properties.OverlapPolicy = "bufferone"
	h.at(0, func() { h.put(j) })
	h.run(10*time.Minute, jobs.JobInput{Key: key})
	require.Equal(t, occurrences("2026-06-01T12:00:00Z", "2026-06-01T12:01:00Z"), h.ids())
	var second time.Time
	for _, a := range h.attempts {
		if strings.HasSuffix(a.id, "12:01:00Z") {
			second = a.at
		}
	}
	require.Equal(t, now.Add(75*time.Second), second, "the buffered occurrence runs when the first run ends")
}

func TestCatchUpAfterAThreeDayOutageRunsOnlyTheMostRecentOccurrence(t *testing.T) {
	// The workflow resumes with its state as it was three days ago: the
	// next occurrence planned then is long past.
	now := time.Date(2026, 6, 4, 12, 30, 0, 0, time.UTC)
	h := newHarness(t, now)
	created := now.Add(-72 * time.Hour)
	j := job(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC), &recurrence.Recurrence{Frequency: "Hour"})
	require.NoError(t, j.Normalize(key, created))
	next := created.Add(30 * time.Minute) // 2026-06-01T13:00Z
	j.Properties.Status = &jobs.Status{NextExecutionTime: &next}
	state := &jobs.JobState{Job: j, Created: created, Next: &next}
	var v jobs.Job
	h.at(time.Minute, func() { v = h.view() })
	h.run(40*time.Minute, jobs.JobInput{Key: key, State: state})
	require.Equal(t, occurrences("2026-06-04T12:00:00Z", "2026-06-04T13:00:00Z"), h.ids(),
		"72 missed occurrences: the most recent (within the 1 h window) runs, then the schedule goes on")
	require.Equal(t, 1, v.Properties.Status.ExecutionCount)
	// 72 occurrences were missed: 71 do not run; 49 are listed as
	// Postponed rows, the last of them counting the 22 left out.
	require.Len(t, h.postponed, 49)
	slices.SortFunc(h.postponed, func(a, b jobs.RunInput) int { return a.Nominal.Compare(b.Nominal) })
	require.Equal(t, time.Date(2026, 6, 1, 13, 0, 0, 0, time.UTC), h.postponed[0].Nominal)
	require.Equal(t, time.Date(2026, 6, 3, 13, 0, 0, 0, time.UTC), h.postponed[48].Nominal)
	require.Contains(t, h.postponed[48].Postponed, "the 22 missed occurrences after it")
}

// TestContinueAsNewCarriesTheStateAfterEnoughOccurrences: after 200
// occurrences the workflow continues as new with its whole state, once
// the update that arrived with the last occurrence has finished.
func TestContinueAsNewCarriesTheState(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.at(0, func() { h.put(job(now, &recurrence.Recurrence{Frequency: "Minute"})) })
	completed := false
	h.at(199*time.Minute, func() {
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
	var in jobs.JobInput
	require.NoError(t, converterFor().FromPayloads(can.Input, &in))
	require.Equal(t, key, in.Key)
	require.Equal(t, 200, in.State.Runs)
	require.Equal(t, 201, in.State.Job.Properties.Status.ExecutionCount, "200 occurrences and one run now")
	require.Equal(t, now.Add(200*time.Minute), *in.State.Next)
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

// behindJob is an every-minute job from 12:00 (returned) whose runs take
// 5 min 30 s and whose Postponed rows take 2 min 20 s to be written:
// Temporal falling behind. The run workflow is a stand-in.
func behindJob(t *testing.T) (*harness, time.Time) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.env.OnWorkflow(jobs.RunWorkflowName, mock.Anything, mock.Anything).Return(
		func(ctx workflow.Context, in jobs.RunInput) (jobs.RunResult, error) {
			if in.Postponed != "" {
				return jobs.RunResult{Status: jobs.Postponed}, workflow.Sleep(ctx, 140*time.Second)
			}
			return jobs.RunResult{Status: jobs.Succeeded}, workflow.Sleep(ctx, 330*time.Second)
		})
	h.at(0, func() { h.put(job(now, &recurrence.Recurrence{Frequency: "Minute"})) })
	return h, now
}

// TestPostponedOccurrencesFoldWhileARowIsBeingWritten: while a Postponed
// row of an earlier occurrence is not yet written, the occurrences a job
// postpones are folded into one row, written once the rows in flight are.
func TestPostponedOccurrencesFoldWhileARowIsBeingWritten(t *testing.T) {
	h, now := behindJob(t)
	// 12:00 runs until 12:05:30. 12:01's row is written 12:01-12:03:20;
	// 12:02 and 12:03 fold into one row, written 12:03:20-12:05:40; 12:04
	// and 12:05 fold into the next, written 12:05:40-12:08. 12:06 runs;
	// 12:07 folds, and the DELETE at 12:07:30 writes its row.
	h.run(450*time.Second, jobs.JobInput{Key: key})
	require.Len(t, h.postponed, 4)
	at := func(m int) time.Time { return now.Add(time.Duration(m) * time.Minute) }
	for i, want := range []struct {
		nominal time.Time
		folded  int
		reason  string
	}{
		{at(1), 0, "the previous run was still running (overlapPolicy Skip)"},
		{at(2), 1, "the previous run was still running (overlapPolicy Skip); this row also stands for the 1 occurrence after it, up to 2026-06-01T12:03:00Z, postponed while recur was behind"},
		{at(4), 1, "up to 2026-06-01T12:05:00Z"},
		{at(7), 0, "the previous run was still running (overlapPolicy Skip)"},
	} {
		require.Equal(t, want.nominal, h.postponed[i].Nominal, i)
		require.Equal(t, want.folded, h.postponed[i].Folded, i)
		require.Contains(t, h.postponed[i].Postponed, want.reason, i)
	}
}

// TestFoldedOccurrencesAreWrittenBeforeTheJobEnds: a DELETE while
// occurrences wait folded writes their one row. (The test environment
// counts a child as starting until it ends, so the job waits for every
// row here; e2e TestDeleteWritesTheRowOfFoldedOccurrences checks the
// DELETE against a real server, where it does not.)
func TestFoldedOccurrencesAreWrittenBeforeTheJobEnds(t *testing.T) {
	h, now := behindJob(t)
	// 12:01's row is written 12:01-12:03:20; 12:02 and 12:03 are folded
	// when the DELETE comes at 12:03:10.
	h.run(190*time.Second, jobs.JobInput{Key: key})
	require.Len(t, h.postponed, 2)
	require.Equal(t, now.Add(time.Minute), h.postponed[0].Nominal)
	require.Equal(t, now.Add(2*time.Minute), h.postponed[1].Nominal, "12:02 and 12:03, folded while 12:01's row was written")
	require.Equal(t, 1, h.postponed[1].Folded)
}
