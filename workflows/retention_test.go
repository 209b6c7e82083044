package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

const sixtyDays = 60 * 24 * time.Hour

// keepFor makes the worker's finished-job retention d, and returns when
// the job tells its collection it is gone.
func keepFor(h *harness, d time.Duration) *[]time.Time {
	h.env.OnActivity(acts.FinishedJobRetention, mock.Anything).Return(d, nil)
	return &h.collection.left
}

// TestFinishedJobsAreDeletedAfterTheirRetention: a completed job and a
// faulted one stay readable for the retention (60 days, as Azure kept
// them), then tell their collection they are gone and end.
func TestFinishedJobsAreDeletedAfterTheirRetention(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for want, answer := range map[jobs.State]func(jobs.HTTPRequestInput, int) (jobs.HTTPResponse, error){
		jobs.Completed: nil,
		jobs.Faulted:   failing,
	} {
		t.Run(string(want), func(t *testing.T) {
			h := newHarness(t, now)
			if answer != nil {
				h.answer = answer
			}
			gone := keepFor(h, sixtyDays)
			j := job(now.Add(time.Hour), nil)
			j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "None"}
			h.at(0, func() { h.put(j) })
			var before jobs.Job
			h.at(sixtyDays, func() { before = h.view() })
			h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key})
			require.True(t, h.env.IsWorkflowCompleted())
			require.NoError(t, h.env.GetWorkflowError())
			require.Equal(t, want, before.Properties.State, "still there 59 days and 23 hours after it finished")
			require.Len(t, *gone, 1, "the collection was told once")
			finished := now.Add(time.Hour)
			require.WithinDuration(t, finished.Add(sixtyDays), (*gone)[0], time.Minute)
		})
	}
}

// TestFinishedRetentionSurvivesContinueAsNew: a finished job carried into
// a new run keeps the time it finished: the new run deletes it when the
// retention counted from then has passed, not a full period later.
func TestFinishedRetentionSurvivesContinueAsNew(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	gone := keepFor(h, sixtyDays)
	j := job(now.Add(-40*24*time.Hour), nil)
	j.Properties.State = jobs.Completed
	finished := now.Add(-20 * 24 * time.Hour)
	state := &jobs.JobState{Job: j, PlannedFrom: finished, Runs: 1, Finished: &finished}
	h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key, State: state})
	require.True(t, h.env.IsWorkflowCompleted())
	require.Len(t, *gone, 1)
	require.WithinDuration(t, now.Add(40*24*time.Hour), (*gone)[0], time.Minute)
}

// TestDisabledJobsAndRetentionZeroAreKept: a job its collection disabled
// has not finished, and after 90 days the collection's enable finds it and
// it runs; with a retention of 0 a completed job stays until DELETE.
func TestDisabledJobsAndRetentionZeroAreKept(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	t.Run("disabled, then enabled by the collection", func(t *testing.T) {
		h := newHarness(t, now)
		gone := keepFor(h, sixtyDays)
		h.at(0, func() { h.put(job(now.Add(24*time.Hour), &recurrence.Recurrence{Frequency: "Day"})) })
		h.at(time.Hour, func() {
			update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{State: jobs.Disabled})
		})
		h.at(90*24*time.Hour, func() {
			update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{State: jobs.Enabled})
		})
		var v jobs.Job
		h.at(92*24*time.Hour, func() { v = h.view() })
		h.run(93*24*time.Hour, jobs.JobInput{Key: key})
		require.Equal(t, []time.Time{now.Add(93 * 24 * time.Hour)}, *gone, "its collection forgets it at the DELETE only")
		require.Equal(t, jobs.Enabled, v.Properties.State)
		// The DELETE at day 93, 12:00 comes with that day's occurrence and
		// cancels it.
		require.Equal(t, occurrences("2026-08-30T12:00:00Z", "2026-08-31T12:00:00Z", "2026-09-01T12:00:00Z"),
			h.ids(), "nothing ran while disabled; it runs again from the enable (day 90, 12:00) on")
	})
	t.Run("retention 0", func(t *testing.T) {
		h := newHarness(t, now)
		gone := keepFor(h, 0)
		h.at(0, func() { h.put(job(now.Add(time.Hour), nil)) })
		var v jobs.Job
		h.at(400*24*time.Hour, func() { v = h.view() })
		h.run(401*24*time.Hour, jobs.JobInput{Key: key})
		require.Equal(t, []time.Time{now.Add(401 * 24 * time.Hour)}, *gone, "its collection forgets it at the DELETE only")
		require.Equal(t, jobs.Completed, v.Properties.State)
	})
}
