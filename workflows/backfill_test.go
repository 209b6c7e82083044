package workflows_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// backfill sends a backfill of [from, to] and records its outcome.
func (h *harness) backfill(from, to time.Time, queued *int, into *error) {
	var res jobs.BackfillResult
	h.backfillAt(jobs.BackfillRequest{StartTime: from, EndTime: to}, &res, into, func() { *queued += res.Queued })
}

// backfillAt sends req and records its answer in res, its error in into;
// then, if it succeeded, calls done (nil for none).
func (h *harness) backfillAt(req jobs.BackfillRequest, res *jobs.BackfillResult, into *error, done func()) {
	updates++
	h.env.UpdateWorkflow(jobs.UpdateBackfill, fmt.Sprintf("backfill-%d", updates), &testsuite.TestUpdateCallback{
		OnReject: func(err error) { *into = err }, OnAccept: func() {},
		OnComplete: func(r any, err error) {
			*into = err
			if err == nil {
				*res = r.(jobs.BackfillResult)
				if done != nil {
					done()
				}
			}
		},
	}, req)
}

// requireConflict fails unless err is a Conflict whose message says want.
func requireConflict(t *testing.T, err error, want string) {
	t.Helper()
	e, ok := jobs.FromApplicationError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, jobs.CodeConflict, e.Code, e.Message)
	require.Contains(t, e.Message, want)
}

// TestABackfillOfADisabledJobIsRefused: a disabled job, and an enabled
// job whose collection is disabled, refuse a backfill, saying why; nothing
// runs.
func TestABackfillOfADisabledJobIsRefused(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	t.Run("job", func(t *testing.T) {
		h := newHarness(t, now)
		j := job(now.Add(-24*time.Hour), &recurrence.Recurrence{Frequency: "Hour"})
		j.Properties.State = jobs.Disabled
		h.at(0, func() { h.put(j) })
		var n int
		var err error
		h.at(time.Second, func() { h.backfill(now.Add(-3*time.Hour), now.Add(-time.Hour), &n, &err) })
		h.run(time.Hour, jobs.JobInput{Key: key})
		requireConflict(t, err, "job j is disabled")
		require.Empty(t, h.attempts)
	})
	t.Run("collection", func(t *testing.T) {
		h := newHarness(t, now)
		h.at(0, func() { h.put(job(now.Add(24*time.Hour), &recurrence.Recurrence{Frequency: "Hour"})) })
		// The job hears the disable's terms before the state change the
		// collection sends with them takes effect on it.
		h.at(time.Second, func() {
			update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{Terms: &jobs.CollectionTerms{Revision: 2, Disabled: true}})
		})
		var n int
		var err error
		h.at(2*time.Second, func() { h.backfill(now.Add(-3*time.Hour), now.Add(-time.Hour), &n, &err) })
		h.run(time.Hour, jobs.JobInput{Key: key})
		requireConflict(t, err, "job collection c is disabled")
		require.Empty(t, h.attempts)
	})
}

// TestQueuedBackfillWaitsWhileTheJobIsDisabled: a job disabled while its
// backfill runs finishes the run in flight, starts no other until it is
// enabled again, then runs the rest.
func TestQueuedBackfillWaitsWhileTheJobIsDisabled(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 30, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.slow = func(jobs.HTTPRequestInput) time.Duration { return 10 * time.Minute }
	// Its start in the past, it runs at once, then at half past each hour.
	j := job(now.Add(-24*time.Hour), &recurrence.Recurrence{Frequency: "Hour"})
	h.at(0, func() { h.put(j) })
	var n int
	var err error
	h.at(time.Second, func() { h.backfill(now.Add(-3*time.Hour), now.Add(-time.Hour), &n, &err) })
	disabled := j
	disabled.Properties.State = jobs.Disabled
	h.at(15*time.Minute, func() { h.put(disabled) })
	var whileDisabled []attempt
	h.at(3*time.Hour, func() { whileDisabled = h.backfilled(now); h.put(j) })
	h.run(4*time.Hour, jobs.JobInput{Key: key})
	require.NoError(t, err)
	require.Equal(t, 3, n, "09:30, 10:30 and 11:30")
	require.Len(t, whileDisabled, 1, "only the one in flight at the disable ran")
	require.WithinDuration(t, now.Add(10*time.Minute), whileDisabled[0].at, time.Second, "after the run at once")
	after := h.backfilled(now)
	require.Len(t, after, 3)
	for i, a := range after {
		require.Equal(t, jobs.OccurrenceID(key.JobWorkflowID(), now.Add(time.Duration(i-3)*time.Hour)), a.id)
	}
	require.False(t, after[1].at.Before(now.Add(3*time.Hour)), "the second waits for the enable: %v", after[1].at)
}

// backfilled returns the attempts of occurrences due before the job was
// created at c, which only a backfill runs.
func (h *harness) backfilled(c time.Time) []attempt {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []attempt
	for _, a := range h.attempts {
		_, at, _ := strings.Cut(a.id, "@")
		if nominal, err := time.Parse(time.RFC3339, at); err == nil && nominal.Before(c) {
			out = append(out, a)
		}
	}
	return out
}

// TestABackfillPastTheQueuesCapIsRefused: a job holds at most
// MaxQueuedBackfill occurrences queued; a backfill that would pass it is
// refused, naming the cap.
func TestABackfillPastTheQueuesCapIsRefused(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	// Its run at once holds the job's one slot all day: the backfills wait.
	h.slow = func(jobs.HTTPRequestInput) time.Duration { return 24 * time.Hour }
	h.at(0, func() { h.put(job(now.Add(-10*24*time.Hour), &recurrence.Recurrence{Frequency: "Minute"})) })
	fills := jobs.MaxQueuedBackfill / jobs.MaxBackfill
	var n int
	errs := make([]error, fills+2)
	from := now.Add(-time.Duration(fills+1) * jobs.MaxBackfill * time.Minute)
	for i := range fills + 1 {
		start := from.Add(time.Duration(i) * jobs.MaxBackfill * time.Minute)
		h.at(time.Duration(i+1)*time.Second, func() {
			h.backfill(start, start.Add((jobs.MaxBackfill-1)*time.Minute), &n, &errs[i])
		})
	}
	h.at(time.Minute, func() { h.backfill(from, from, &n, &errs[fills+1]) })
	h.run(time.Hour, jobs.JobInput{Key: key})
	for i := range fills {
		require.NoError(t, errs[i], "backfill %d", i)
	}
	require.Equal(t, jobs.MaxQueuedBackfill, n)
	requireConflict(t, errs[fills], fmt.Sprintf("at most %d may wait", jobs.MaxQueuedBackfill))
	requireConflict(t, errs[fills+1], "holds 10000 backfill occurrences queued")
}
