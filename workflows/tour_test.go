package workflows_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
	"github.com/recurhq/recur/worker"
)

// The tours drive each workflow through every state it has, with the
// test environment skipping time past each of its deadlines while work is
// in flight; newEnv fails them on any loop that turns without blocking.

// TestAJobsTourBlocksAtEveryTurn: a job whose runs outlast its interval
// (runs buffered), run now, backfilled, disabled and enabled by PATCH and
// by its collection mid-run, completed by its count, kept for its
// retention and deleted by it: every run it owes runs, and it ends.
func TestAJobsTourBlocksAtEveryTurn(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	gone := keepFor(h, time.Hour)
	h.slow = func(jobs.HTTPRequestInput) time.Duration { return 45 * time.Minute }
	j := job(now.Add(-time.Hour), &recurrence.Recurrence{Frequency: "Minute", Interval: intp(30), Count: intp(6)})
	j.Properties.OverlapPolicy, j.Properties.Jitter = jobs.OverlapBufferOne, "PT1M"
	h.at(0, func() { h.put(j) })
	h.at(time.Minute, func() { update(t, h.env, jobs.UpdateRunNow, jobs.RunNowRequest{}) })
	var queued int
	var backfillErr error
	h.at(2*time.Minute, func() { h.backfill(now.Add(-time.Hour), now.Add(-20*time.Minute), &queued, &backfillErr) })
	patch := func(state jobs.State) func() {
		return func() {
			update(t, h.env, jobs.UpdatePatchJob, jobs.PatchJobRequest{Base: h.view().ETag,
				Patch: fmt.Appendf(nil, `{"properties":{"state":%q}}`, state)})
		}
	}
	h.at(50*time.Minute, patch(jobs.Disabled))
	h.at(2*time.Hour, patch(jobs.Enabled))
	collection := func(rev int, state jobs.State) func() {
		return func() {
			update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{State: state,
				Terms: &jobs.CollectionTerms{Revision: rev, Disabled: state == jobs.Disabled}})
		}
	}
	h.at(2*time.Hour+10*time.Minute, collection(2, jobs.Disabled))
	h.at(3*time.Hour, collection(3, jobs.Enabled))
	var done jobs.Job
	h.at(9*time.Hour, func() { done = h.view() })
	h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key})
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())
	require.NoError(t, backfillErr)
	require.Equal(t, 2, queued, "11:00 and 11:30")
	require.Equal(t, jobs.Completed, done.Properties.State)
	require.Equal(t, len(h.attempts), done.Properties.Status.ExecutionCount, "every run counted once")
	ran := map[string]bool{}
	for _, a := range h.attempts {
		ran[a.id] = true
	}
	for _, id := range []string{"2026-06-01T12:01:00Z/run-now", "2026-06-01T11:00:00Z", "2026-06-01T11:30:00Z"} {
		require.True(t, ran[jobs.OccurrenceID(key.JobWorkflowID(), time.Time{})[:len("job:s/rg/c/j@")]+id], "%s ran: %v", id, ran)
	}
	require.Len(t, *gone, 1, "deleted by its retention")
}

// TestACollectionsTourBlocksAtEveryTurn: a collection admits and refuses
// jobs, forgets one, is disabled and enabled while its jobs are told
// slowly, continues as new past its updates, and a new run is deleted.
func TestACollectionsTourBlocksAtEveryTurn(t *testing.T) {
	coll := jobs.Collection{}
	coll.Properties.Quota = &jobs.Quota{MaxJobCount: intp(3)}
	require.NoError(t, coll.Accept(key.CollectionKey()))
	member := func(name string) jobs.MembershipRequest { return jobs.MembershipRequest{Job: name, Seq: 1} }
	answers := 0
	start := func(t *testing.T) *testsuite.TestWorkflowEnvironment {
		env := newEnv(t)
		worker.Register(env, &activities.Activities{})
		env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", jobs.SignalAdmitted, mock.Anything).
			After(100 * time.Millisecond).Return(func(string, string, string, string, any) error { answers++; return nil })
		env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).After(time.Second).Return(nil)
		env.OnUpsertMemo(mock.Anything).Return(nil)
		return env
	}
	updated := func(t *testing.T, env *testsuite.TestWorkflowEnvironment, name string, arg any) {
		updates++
		env.UpdateWorkflow(name, fmt.Sprintf("%s-%d", name, updates), &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("%s rejected: %v", name, err) }, OnAccept: func() {},
			OnComplete: func(_ any, err error) { require.NoError(t, err, name) },
		}, arg)
	}

	t.Run("continues as new", func(t *testing.T) {
		env := start(t)
		env.RegisterDelayedCallback(func() {
			for i := range 4 { // the fourth is refused: quota 3
				env.SignalWorkflow(jobs.SignalMembership, member(fmt.Sprintf("j%d", i)))
			}
		}, time.Second)
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(jobs.SignalMembership, jobs.MembershipRequest{Job: "j0", Leave: true})
			updated(t, env, jobs.UpdateCollectionState, jobs.CollectionStateRequest{State: jobs.CollectionDisabled})
			updated(t, env, jobs.UpdateCollectionState, jobs.CollectionStateRequest{State: jobs.CollectionEnabled})
		}, time.Minute)
		// Past maxCollectionUpdates, with answers still on their way.
		env.RegisterDelayedCallback(func() {
			for range 500 {
				env.SignalWorkflow(jobs.SignalMembership, member("j1"))
			}
		}, 10*time.Minute)
		env.ExecuteWorkflow(jobs.CollectionWorkflowName, jobs.CollectionInput{Key: key.CollectionKey(), Collection: &coll})
		require.True(t, env.IsWorkflowCompleted())
		err := env.GetWorkflowError()
		var can *workflow.ContinueAsNewError
		require.ErrorAs(t, err, &can)
		require.Equal(t, 4+500, answers, "every request answered before it continued")
	})
	t.Run("deleted", func(t *testing.T) {
		env := start(t)
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(jobs.SignalMembership, member("j1")) }, time.Second)
		env.RegisterDelayedCallback(func() {
			updated(t, env, jobs.UpdateDeleteCollection, jobs.DeleteCollectionRequest{})
			env.SignalWorkflow(jobs.SignalMembership, member("j2"))
		}, time.Minute)
		env.ExecuteWorkflow(jobs.CollectionWorkflowName, jobs.CollectionInput{Key: key.CollectionKey(), Collection: &coll})
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
	})
}
