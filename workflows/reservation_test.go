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
	"github.com/recurhq/recur/worker"
)

// TestACollectionReservesTheNamesItAdmitsAhead: admissions asked ahead of
// the PUTs, in one update, are answered in order within the quota of 3: a
// name asked twice counts once (its second answer carries no admission:
// that PUT's job asks itself), the fourth new name is refused. Once due,
// the reservations are looked at together: the name whose job is defined
// stays, the one whose job's workflow does not run is given up, and the one
// whose job runs undefined is looked at again a grace later, when its
// workflow has ended: the collection holds the defined job alone, and has
// room for two more.
func TestACollectionReservesTheNamesItAdmitsAhead(t *testing.T) {
	env := newEnv(t)
	worker.Register(env, &activities.Activities{})
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", mock.Anything, mock.Anything).Return(nil).Maybe()
	id := func(name string) string { k := key; k.Job = name; return k.JobWorkflowID() }
	var looked [][]string
	env.OnActivity(acts.JobPresence, mock.Anything, mock.Anything).Return(
		func(_ context.Context, ids []string) ([]jobs.JobPresence, error) {
			looked = append(looked, ids)
			out := make([]jobs.JobPresence, len(ids))
			for i, wid := range ids {
				switch wid {
				case id("a"):
					out[i] = jobs.JobPresence{Running: true, Defined: true}
				case id("c"):
					out[i] = jobs.JobPresence{Running: len(looked) == 1}
				}
			}
			return out, nil
		})
	admit := func(names []string, into *[]jobs.AdmitAnswer) {
		req := jobs.AdmitRequest{}
		for _, n := range names {
			req.Jobs = append(req.Jobs, jobs.MembershipRequest{Job: n, ShortestGap: time.Hour})
		}
		updates++
		env.UpdateWorkflow(jobs.UpdateAdmit, "admit-"+names[0], &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnAccept: func() {},
			OnComplete: func(v any, err error) {
				require.NoError(t, err)
				*into = v.([]jobs.AdmitAnswer)
			},
		}, req)
	}
	var first, later []jobs.AdmitAnswer
	env.RegisterDelayedCallback(func() { admit([]string{"a", "b", "a", "c", "d"}, &first) }, time.Second)
	var held []string
	env.RegisterDelayedCallback(func() {
		res, err := env.QueryWorkflow(jobs.QueryCollection)
		require.NoError(t, err)
		var v jobs.CollectionView
		require.NoError(t, res.Get(&v))
		held = v.Jobs
		admit([]string{"e", "f", "g"}, &later)
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(jobs.UpdateDeleteCollection, "delete", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, jobs.DeleteCollectionRequest{})
	}, 3*time.Minute)
	three := 3
	coll := jobs.Collection{Properties: jobs.CollectionProperties{Quota: &jobs.Quota{MaxJobCount: &three}}}
	require.NoError(t, coll.Accept(key.CollectionKey()))
	env.ExecuteWorkflow(jobs.CollectionWorkflowName, jobs.CollectionInput{Key: key.CollectionKey(), Collection: &coll})
	require.NoError(t, env.GetWorkflowError())

	require.Len(t, first, 5)
	for i, admitted := range []bool{true, true, false, true} {
		require.Nil(t, first[i].Error, "answer %d", i)
		require.Equal(t, admitted, first[i].Admission != nil, "answer %d", i)
	}
	require.NotNil(t, first[4].Error)
	require.Equal(t, jobs.CodeQuotaExceeded, first[4].Error.Code)
	require.Equal(t, [][]string{{id("a"), id("b"), id("c")}, {id("c")}}, looked[:2])
	require.Equal(t, []string{"a"}, held)
	require.Len(t, later, 3)
	require.Nil(t, later[0].Error)
	require.Nil(t, later[1].Error)
	require.NotNil(t, later[2].Error, "room for two more")
}
