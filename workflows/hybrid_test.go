package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// processQueue stands for the task queue of the worker process that
// started a first attempt.
const processQueue = "recur-attempts@test"

// firstAttempts stands in for a worker with a budget: the local activity
// of a first attempt answers as h.answer does, unless handOff, when it
// hands the attempt off and its await answers after awaitFor, or fails
// with lost.
type firstAttempts struct {
	handOff  bool
	awaitFor time.Duration
	lost     error

	mu          sync.Mutex
	started     []time.Time // of each local activity, in workflow time
	awaits      int
	awaitQueues []string
}

func (h *harness) firstAttempts(f *firstAttempts) {
	h.env.OnActivity(acts.FirstAttempt, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in jobs.FirstAttemptInput) (jobs.FirstAttempt, error) {
			f.mu.Lock()
			f.started = append(f.started, h.env.Now().UTC())
			f.mu.Unlock()
			if f.handOff {
				return jobs.FirstAttempt{Queue: processQueue, ID: in.HTTP.OccurrenceID}, nil
			}
			resp, err := h.respond(*in.HTTP, 1)
			return jobs.FirstAttempt{Response: resp}, err
		})
	h.env.OnActivity(acts.AwaitAttempt, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in jobs.AwaitAttemptInput) (jobs.HTTPResponse, error) {
			f.mu.Lock()
			f.awaits++
			f.awaitQueues = append(f.awaitQueues, activity.GetInfo(ctx).TaskQueue)
			f.mu.Unlock()
			if f.lost != nil {
				return jobs.HTTPResponse{}, f.lost
			}
			return h.respond(jobs.HTTPRequestInput{OccurrenceID: in.ID, ActionName: jobs.MainAction}, 1)
		}).AfterFn(func() time.Duration { return f.awaitFor })
}

// TestAFirstAttemptAnsweredWithinTheBudgetIsOneLocalActivity: the
// occurrence's action is the local activity's answer; no activity runs.
func TestAFirstAttemptAnsweredWithinTheBudgetIsOneLocalActivity(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	f := &firstAttempts{}
	h.firstAttempts(f)
	h.at(0, func() {
		h.put(job(now.Add(time.Minute), &recurrence.Recurrence{Frequency: "Hour", Count: intp(2)}))
	})
	h.run(3*time.Hour, jobs.JobInput{Key: key})

	require.Equal(t, []time.Time{now.Add(time.Minute), now.Add(61 * time.Minute)}, f.started)
	require.Zero(t, f.awaits)
	require.Empty(t, h.activities, "no activity")
	rows := h.rows("")
	require.Len(t, rows, 2)
	for _, r := range rows {
		require.Equal(t, jobs.ExecutionCompleted, r.Status)
		require.Zero(t, r.RetryCount)
	}
}

// TestAFirstAttemptPastTheBudgetIsAwaitedOnItsProcessQueue: the attempt
// handed off is awaited by an activity on the queue of the process that
// holds it, and its answer is the occurrence's; nothing is sent again.
func TestAFirstAttemptPastTheBudgetIsAwaitedOnItsProcessQueue(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	f := &firstAttempts{handOff: true, awaitFor: 40 * time.Second}
	h.firstAttempts(f)
	h.at(0, func() { h.put(job(now.Add(time.Minute), nil)) })
	h.run(time.Hour, jobs.JobInput{Key: key})

	require.Len(t, f.started, 1)
	require.Equal(t, []string{processQueue}, f.awaitQueues)
	require.Equal(t, []string{"AwaitAttempt"}, h.activities, "not sent again")
	rows := h.rows("")
	require.Len(t, rows, 1)
	require.Equal(t, jobs.ExecutionCompleted, rows[0].Status)
	require.Zero(t, rows[0].RetryCount)
	require.Equal(t, 40*time.Second, rows[0].EndTime.Sub(*rows[0].StartTime), "the run ends with the attempt")
}

// TestALostAwaitCountsAsAFailedAttempt: an await whose process is gone
// (nobody polls its queue, its heartbeat stopped, or the process no longer
// holds the attempt) fails the first attempt as a lost worker does: the
// retry policy's attempts follow as an activity after its interval, and
// an action without retries is given its attempt again.
func TestALostAwaitCountsAsAFailedAttempt(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		lost     error
		policy   *jobs.RetryPolicy
		attempts []time.Duration // of the activity, after the first attempt's start
		retries  int             // the row's RetryCount
	}{
		{"nobody polls its queue", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil),
			&jobs.RetryPolicy{RetryType: "Fixed", RetryInterval: "00:00:30", RetryCount: intp(2)}, []time.Duration{30 * time.Second}, 1},
		{"its heartbeat stopped", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil),
			&jobs.RetryPolicy{RetryType: "Fixed", RetryInterval: "00:00:30", RetryCount: intp(2)}, []time.Duration{30 * time.Second}, 1},
		{"the process does not hold it", temporal.NewNonRetryableApplicationError("gone", activities.ErrTypeAttemptLost, nil),
			&jobs.RetryPolicy{RetryType: "Fixed", RetryInterval: "00:00:30", RetryCount: intp(2)}, []time.Duration{30 * time.Second}, 1},
		{"without retries", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil),
			&jobs.RetryPolicy{RetryType: "None"}, []time.Duration{0}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, now)
			f := &firstAttempts{handOff: true, lost: tc.lost}
			h.firstAttempts(f)
			j := job(now.Add(time.Minute), nil)
			j.Properties.Action.RetryPolicy = tc.policy
			h.at(0, func() { h.put(j) })
			h.run(time.Hour, jobs.JobInput{Key: key})

			require.Len(t, f.started, 1)
			require.Equal(t, 1, f.awaits, "the await is not retried: only its process holds the attempt")
			var at []time.Duration
			for _, a := range h.attempts {
				at = append(at, a.at.Sub(f.started[0]))
			}
			require.Equal(t, tc.attempts, at)
			rows := h.rows("")
			require.Len(t, rows, 1)
			require.Equal(t, jobs.ExecutionCompleted, rows[0].Status)
			require.Equal(t, tc.retries, rows[0].RetryCount)
		})
	}
}

// TestAFailedFirstAttemptKeepsTheRetryPolicy: the attempts after a first
// attempt that failed come as the policy says, its intervals and backoff
// included; a failure that is not retryable ends the run at once.
func TestAFailedFirstAttemptKeepsTheRetryPolicy(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	t.Run("exponential", func(t *testing.T) {
		h := newHarness(t, now)
		h.firstAttempts(&firstAttempts{})
		h.answer = func(in jobs.HTTPRequestInput, n int) (jobs.HTTPResponse, error) {
			if h.env.Now().Before(now.Add(3 * time.Minute)) {
				return failing(in, n)
			}
			return jobs.HTTPResponse{StatusCode: 200, Status: "200 OK"}, nil
		}
		j := job(now.Add(time.Minute), nil)
		j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "Exponential", RetryInterval: "00:00:30", RetryCount: intp(4)}
		h.at(0, func() { h.put(j) })
		h.run(time.Hour, jobs.JobInput{Key: key})

		var at []time.Duration
		for _, a := range h.attempts {
			at = append(at, a.at.Sub(now.Add(time.Minute)))
		}
		// 30 s, then 60 s, then 120 s after each attempt.
		require.Equal(t, []time.Duration{30 * time.Second, 90 * time.Second, 210 * time.Second}, at)
		rows := h.rows("")
		require.Len(t, rows, 1)
		require.Equal(t, jobs.ExecutionCompleted, rows[0].Status)
		require.Equal(t, 3, rows[0].RetryCount)
	})
	t.Run("not retryable", func(t *testing.T) {
		h := newHarness(t, now)
		h.firstAttempts(&firstAttempts{})
		h.answer = func(jobs.HTTPRequestInput, int) (jobs.HTTPResponse, error) {
			return jobs.HTTPResponse{StatusCode: 404, Status: "404 Not Found"},
				temporal.NewNonRetryableApplicationError("404", activities.ErrTypeHTTPStatus, nil)
		}
		h.at(0, func() { h.put(job(now.Add(time.Minute), nil)) })
		h.run(time.Hour, jobs.JobInput{Key: key})
		require.Empty(t, h.attempts)
		rows := h.rows("")
		require.Len(t, rows, 1)
		require.Equal(t, jobs.ExecutionFailed, rows[0].Status)
		require.Zero(t, rows[0].RetryCount)
	})
}

// TestADeleteCancelsTheAwait: a job deleted while its attempt handed off
// runs ends at once, cancelling the await (whose process then cancels the
// attempt: activities' TestAnAwaitCancelledCancelsTheAttempt; the test
// environment ends the workflow before it reports the cancellation, which
// e2e's TestWritesDoNotWaitForARunningAction finds in history); a disable
// lets the run finish and counts it.
func TestADeleteCancelsTheAwait(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	every := &recurrence.Recurrence{Frequency: "Hour", Interval: intp(1)}
	t.Run("delete", func(t *testing.T) {
		h := newHarness(t, now)
		f := &firstAttempts{handOff: true, awaitFor: time.Hour}
		h.firstAttempts(f)
		h.at(0, func() { h.put(job(now.Add(time.Minute), every)) })
		h.run(10*time.Minute, jobs.JobInput{Key: key})
		require.Equal(t, now.Add(10*time.Minute), h.env.Now().UTC(), "the workflow ends at the DELETE, not at the action's end")
		require.Equal(t, []string{"AwaitAttempt"}, h.activities)
		require.Empty(t, h.rows(""), "a cancelled run records nothing")
	})
	t.Run("disable", func(t *testing.T) {
		h := newHarness(t, now)
		f := &firstAttempts{handOff: true, awaitFor: time.Hour}
		h.firstAttempts(f)
		h.at(0, func() { h.put(job(now.Add(time.Minute), every)) })
		var v jobs.Job
		h.at(10*time.Minute, func() {
			update(t, h.env, jobs.UpdatePatchJob, jobs.PatchJobRequest{Base: h.view().ETag, Patch: []byte(`{"properties":{"state":"Disabled"}}`)})
		})
		h.at(90*time.Minute, func() { v = h.view() })
		h.run(2*time.Hour, jobs.JobInput{Key: key})
		require.Equal(t, jobs.Disabled, v.Properties.State)
		require.Equal(t, 1, v.Properties.Status.ExecutionCount, "the run in flight finished and counts")
		require.Len(t, h.rows(""), 1)
	})
}
