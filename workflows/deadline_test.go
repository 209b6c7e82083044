package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// TestAWriteTakenPastItsDeadlineChangesNothing: a run now, a PUT and a
// DELETE the job takes after their deadline (their clients were answered
// 503 by then) are refused with NotTaken and change nothing; a run now
// taken in time runs.
func TestAWriteTakenPastItsDeadlineChangesNothing(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.at(0, func() { h.put(job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Hour"})) })
	var lateRun, latePut, lateDelete, inTime error
	h.at(time.Minute, func() {
		late := jobs.Deadline{NotAfter: now.Add(59 * time.Second)}
		updateAnswer(h, jobs.UpdateRunNow, jobs.RunNowRequest{Deadline: late}, &lateRun)
		updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Day"}), Deadline: late}, &latePut)
		updateAnswer(h, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{Deadline: late}, &lateDelete)
	})
	var viewed jobs.Job
	h.at(2*time.Minute, func() {
		viewed = h.view()
		updateAnswer(h, jobs.UpdateRunNow, jobs.RunNowRequest{Deadline: jobs.Deadline{NotAfter: now.Add(2 * time.Minute)}}, &inTime)
	})
	h.run(3*time.Minute, jobs.JobInput{Key: key})

	for name, err := range map[string]error{"run now": lateRun, "PUT": latePut, "DELETE": lateDelete} {
		e, ok := jobs.FromApplicationError(err)
		require.True(t, ok, "%s: %v", name, err)
		require.Equal(t, jobs.CodeNotTaken, e.Code, name)
	}
	require.EqualValues(t, "hour", viewed.Properties.Recurrence.Frequency, "the late PUT changed nothing")
	require.NoError(t, inTime, "a write taken at its deadline goes on")
	require.Len(t, h.ids(), 1, "the run now taken in time ran, the late one did not")
}
