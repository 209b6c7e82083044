package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/lifecycle"
	"github.com/recurhq/recur/worker"
)

// TestAJobStartedDefinedRunsWithoutAskingItsCollection: a job whose
// workflow the API started with its definition and its collection's
// admission (lifecycle.NewState) runs its occurrences from its first task, names
// its ETags by the API's origin, knows its collection's terms from the
// admission (a redefinition asks the collection nothing), and asks to be
// forgotten when it is deleted. Started while its collection is disabled,
// it stays disabled, redefined as enabled too, and runs nothing.
func TestAJobStartedDefinedRunsWithoutAskingItsCollection(t *testing.T) {
	start := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	c := start.Add(-30 * time.Minute)
	for _, disabled := range []bool{false, true} {
		env := newEnv(t)
		env.SetStartTime(c)
		worker.Register(env, &activities.Activities{})
		coll := newCollectionStandIn(env)
		var ran []string
		env.OnActivity(acts.HTTP, mock.Anything, mock.Anything).Return(
			func(_ context.Context, in jobs.HTTPRequestInput) (jobs.HTTPResponse, error) {
				ran = append(ran, in.OccurrenceID)
				return jobs.HTTPResponse{StatusCode: 200, Attempt: 1}, nil
			}).Maybe()
		def := hourly(start, 2)
		require.NoError(t, def.AcceptNew(key, c))
		st, ok := lifecycle.NewState(key, def, c, "origin", disabled)
		require.True(t, ok)
		env.RegisterDelayedCallback(func() { update(t, env, jobs.UpdatePutJob, jobs.PutJobRequest{Job: hourly(start, 2)}) }, 10*time.Minute)
		var view jobs.JobView
		env.RegisterDelayedCallback(func() {
			view = queryJob(t, env)
			update(t, env, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{})
		}, 3*time.Hour)
		env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key, State: st, Origin: "origin",
			Admission: &jobs.Admission{Terms: jobs.CollectionTerms{Revision: 1, Disabled: disabled}, Until: c.Add(20 * time.Second), Gen: 1}})

		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
		require.Len(t, coll.requests, 1, "the only request to the collection is the job's leave")
		require.True(t, coll.requests[0].Leave)
		if disabled {
			require.Empty(t, ran)
			require.Equal(t, jobs.Disabled, view.Job.Properties.State)
			require.Equal(t, jobs.NewETag("origin", 2), view.Job.ETag, "the redefinition is its second revision")
			continue
		}
		require.Equal(t, []string{"job:s/rg/c/j@2026-06-01T12:00:00Z", "job:s/rg/c/j@2026-06-01T13:00:00Z"}, ran)
		require.Equal(t, jobs.Completed, view.Job.Properties.State)
		require.Equal(t, jobs.NewETag("origin", 3), view.Job.ETag, "completing it is its third revision")
	}
}

// TestALateAnswerToTheRunBeforeIsDropped: a job continued as new may get
// the answer its collection sent to the run before (whose requests are
// numbered from 1 too) before it asks anything: the answer, here a
// refusal, is dropped, and the redefinition that asks next takes its own
// answer.
func TestALateAnswerToTheRunBeforeIsDropped(t *testing.T) {
	env := newEnv(t)
	start := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	env.SetStartTime(start.Add(-30 * time.Minute))
	worker.Register(env, &activities.Activities{})
	coll := newCollectionStandIn(env)
	def := hourly(start, 3)
	require.NoError(t, def.Accept(key, start.Add(-time.Hour)))
	next := start
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(jobs.SignalAdmitted, jobs.AdmitAnswer{Seq: 1,
			Error: &jobs.Error{Code: jobs.CodeQuotaExceeded, Message: "the run before's refusal"}})
	}, time.Minute)
	var put error
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(jobs.UpdatePutJob, "redefine", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("redefinition rejected: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(_ any, err error) { put = err },
		}, jobs.PutJobRequest{Job: hourly(start, 3)})
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() { update(t, env, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{}) }, 3*time.Minute)
	env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key, State: &jobs.JobState{Job: def, Created: start.Add(-time.Hour), Next: &next}})

	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, put, "the redefinition took its own answer, not the run before's refusal")
	require.NotEmpty(t, coll.requests, "the redefinition asked the collection")
	require.Equal(t, 1, coll.requests[0].Seq)
}
