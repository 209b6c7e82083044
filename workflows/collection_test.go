package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/worker"
)

// TestACollectionAdmitsUpToItsQuota: a collection of at most one job
// admits one, admits it again without counting it twice, refuses a
// second, and admits another once the first asked to be forgotten, even
// when that request and the admission reach it at the same moment.
func TestACollectionAdmitsUpToItsQuota(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	worker.Register(env, &activities.Activities{})
	env.OnUpsertMemo(mock.Anything).Return(nil).Maybe()
	one := 1
	col := jobs.Collection{Properties: jobs.CollectionProperties{
		Sku: &jobs.Sku{Name: "Standard"}, State: jobs.CollectionEnabled, Quota: &jobs.Quota{MaxJobCount: &one}}}
	answers := map[string]jobs.AdmitAnswer{}
	admit := func(id, job string) {
		env.UpdateWorkflow(jobs.UpdateAdmitJob, id, &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("%s rejected: %v", id, err) },
			OnAccept: func() {},
			OnComplete: func(a any, err error) {
				require.NoError(t, err)
				answers[id] = a.(jobs.AdmitAnswer)
			},
		}, jobs.MembershipRequest{Job: job, Seq: 1})
	}
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(jobs.UpdatePutCollection, "put", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("put rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, jobs.PutCollectionRequest{Collection: col})
	}, 0)
	env.RegisterDelayedCallback(func() { admit("a", "a") }, time.Second)
	env.RegisterDelayedCallback(func() { admit("a again", "a") }, 2*time.Second)
	env.RegisterDelayedCallback(func() { admit("b", "b") }, 3*time.Second)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(jobs.SignalMembership, jobs.MembershipRequest{Job: "a", Leave: true})
		admit("b after a left", "b")
	}, 4*time.Second)
	var view jobs.CollectionView
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(jobs.QueryCollection)
		require.NoError(t, err)
		require.NoError(t, v.Get(&view))
		env.CancelWorkflow()
	}, 5*time.Second)
	env.ExecuteWorkflow(jobs.CollectionWorkflowName, jobs.CollectionInput{Key: key})

	require.Nil(t, answers["a"].Error)
	require.Nil(t, answers["a again"].Error, "a job it holds is admitted again")
	require.NotNil(t, answers["b"].Error)
	require.Equal(t, jobs.CodeQuotaExceeded, answers["b"].Error.Code)
	require.Nil(t, answers["b after a left"].Error, "a left first")
	require.Equal(t, []string{"b"}, view.Jobs)
}
