package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/worker"
)

// exchangeAt sends a LeaseRequest to the collection after delay and keeps
// its answer in into.
func exchangeAt(t *testing.T, env *testsuite.TestWorkflowEnvironment, delay time.Duration, req jobs.LeaseRequest, into *jobs.LeaseAnswer) {
	t.Helper()
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(jobs.UpdateLease, "lease-"+delay.String(), &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnAccept: func() {},
			OnComplete: func(v any, err error) {
				require.NoError(t, err)
				*into = v.(jobs.LeaseAnswer)
			},
		}, req)
	}, delay)
}

// collectionOf returns the collection's view as its query answers it.
func collectionOf(t *testing.T, env *testsuite.TestWorkflowEnvironment) jobs.CollectionView {
	t.Helper()
	res, err := env.QueryWorkflow(jobs.QueryCollection)
	require.NoError(t, err)
	var v jobs.CollectionView
	require.NoError(t, res.Get(&v))
	return v
}

// runCollection runs the collection workflow of key's collection, with a
// quota of maxJobs (0: the sku's), holding the jobs named (sorted), until
// it ends without error.
func runCollection(t *testing.T, env *testsuite.TestWorkflowEnvironment, maxJobs int, held ...string) {
	t.Helper()
	coll := jobs.Collection{}
	if maxJobs > 0 {
		coll.Properties.Quota = &jobs.Quota{MaxJobCount: &maxJobs}
	}
	require.NoError(t, coll.Accept(key.CollectionKey()))
	env.ExecuteWorkflow(jobs.CollectionWorkflowName, jobs.CollectionInput{Key: key.CollectionKey(), Collection: &coll, Jobs: held})
	require.NoError(t, env.GetWorkflowError())
}

// giveBackAndDeleteAt gives lease back and deletes the collection at the
// test's time at, so that its workflow ends.
func giveBackAndDeleteAt(t *testing.T, env *testsuite.TestWorkflowEnvironment, lease int, at time.Duration) {
	env.RegisterDelayedCallback(func() {
		update(t, env, jobs.UpdateLease, jobs.LeaseRequest{Release: []int{lease}})
		update(t, env, jobs.UpdateDeleteCollection, jobs.DeleteCollectionRequest{})
	}, at)
}

func claims(lease int, names ...string) []jobs.MembershipRequest {
	out := make([]jobs.MembershipRequest, len(names))
	for i, n := range names {
		out[i] = jobs.MembershipRequest{Job: n, ShortestGap: time.Hour, Lease: lease}
	}
	return out
}

// TestALeaseHoldsItsSlotsUntilClaimedOrGivenBack: in a collection of at
// most 4 jobs, a lease of 3 slots counts as 3 jobs. Two claims on it take
// two of its slots, with no room asked of the quota; a name asked without
// a lease meanwhile finds room for one more job, and the next is refused,
// with the lease's last slot counted.
// A batch that gives the lease back frees its last slot before its own
// admissions: the one it asks fits, and a lease asked then finds no room.
func TestALeaseHoldsItsSlotsUntilClaimedOrGivenBack(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	env := newEnv(t)
	env.SetStartTime(now)
	worker.Register(env, &activities.Activities{})
	env.OnActivity(acts.JobPresence, mock.Anything, mock.Anything).Return(
		func(_ context.Context, ids []string) ([]jobs.JobPresence, error) {
			out := make([]jobs.JobPresence, len(ids))
			for i := range out {
				out[i] = jobs.JobPresence{Running: true, Defined: true}
			}
			return out, nil
		}).Maybe()
	env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).Return(nil).Maybe()
	env.OnActivity(acts.HoldReservedNames, mock.Anything, mock.Anything).Return(nil).Maybe()
	var granted, onLease, byName, released, regranted jobs.LeaseAnswer
	exchangeAt(t, env, time.Second, jobs.LeaseRequest{Want: 3}, &granted)
	exchangeAt(t, env, 2*time.Second, jobs.LeaseRequest{Claims: claims(1, "a", "b")}, &onLease)
	exchangeAt(t, env, 3*time.Second, jobs.LeaseRequest{Claims: claims(0, "c", "d")}, &byName)
	exchangeAt(t, env, 4*time.Second, jobs.LeaseRequest{Release: []int{1}, Claims: claims(0, "e")}, &released)
	exchangeAt(t, env, 5*time.Second, jobs.LeaseRequest{Want: 8}, &regranted)
	var view jobs.CollectionView
	env.RegisterDelayedCallback(func() { view = collectionOf(t, env) }, 6*time.Second)
	giveBackAndDeleteAt(t, env, 2, 7*time.Second)
	runCollection(t, env, 4)

	require.NotNil(t, granted.Grant)
	require.Equal(t, 1, granted.Grant.ID)
	require.Equal(t, 3, granted.Grant.Slots)
	require.Equal(t, now.Add(time.Second+30*time.Second), granted.Grant.Until.UTC())
	require.Equal(t, 3, granted.Leased)

	require.Len(t, onLease.Answers, 2)
	for _, a := range onLease.Answers {
		require.Nil(t, a.Error)
		require.Nil(t, a.Admission, "a name claimed on a lease is its job's, not reserved")
	}
	require.Equal(t, 1, onLease.Leased)

	require.Nil(t, byName.Answers[0].Error, "two jobs and one slot leased: room for c")
	require.NotNil(t, byName.Answers[1].Error, "the lease's last slot counts")
	require.Equal(t, jobs.CodeQuotaExceeded, byName.Answers[1].Error.Code)
	require.Equal(t, 1, byName.Leased)

	require.Nil(t, released.Answers[0].Error, "the lease given back first makes room for e")
	require.Equal(t, 0, released.Leased)

	require.Nil(t, regranted.Grant, "no room left: a, b, c and e")
	require.Equal(t, []string{"a", "b", "c", "e"}, view.Jobs)
}

// TestALeaseNotGivenBackIsLookedAtOnceItRunsOut: the API process holding
// a lease of 4 slots died after one claim ("a") and three more starts on
// it whose claims never came ("x", "y", and "z", whose workflow has ended
// since). A grace after the lease's end, the collection asks the
// visibility store for its jobs started while the lease was held; the
// names it does not hold become reservations, looked at at once: "x"
// runs and stays, "y" has ended by then and is given up. The lease's slots
// are free again: the collection holds a and x, with room for 3 more.
func TestALeaseNotGivenBackIsLookedAtOnceItRunsOut(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	env := newEnv(t)
	env.SetStartTime(now)
	worker.Register(env, &activities.Activities{})
	id := func(name string) string { k := key; k.Job = name; return k.JobWorkflowID() }
	var asked []jobs.LeasedJobsRequest
	var askedAt time.Time
	env.OnActivity(acts.LeasedJobs, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req jobs.LeasedJobsRequest) ([]string, error) {
			asked = append(asked, req)
			askedAt = env.Now().UTC()
			return []string{"a", "x", "y"}, nil
		})
	var looked [][]string
	env.OnActivity(acts.JobPresence, mock.Anything, mock.Anything).Return(
		func(_ context.Context, ids []string) ([]jobs.JobPresence, error) {
			looked = append(looked, ids)
			out := make([]jobs.JobPresence, len(ids))
			for i, wid := range ids {
				out[i] = jobs.JobPresence{Running: wid != id("y"), Defined: wid != id("y")}
			}
			return out, nil
		})
	var granted, claimed, after jobs.LeaseAnswer
	exchangeAt(t, env, time.Second, jobs.LeaseRequest{Want: 4}, &granted)
	exchangeAt(t, env, 2*time.Second, jobs.LeaseRequest{Claims: claims(1, "a")}, &claimed)
	exchangeAt(t, env, 2*time.Minute, jobs.LeaseRequest{Want: 10}, &after)
	var view jobs.CollectionView
	env.RegisterDelayedCallback(func() { view = collectionOf(t, env) }, 2*time.Minute+time.Second)
	giveBackAndDeleteAt(t, env, 2, 2*time.Minute+2*time.Second)
	env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).Return(nil).Maybe()
	runCollection(t, env, 5)

	until := granted.Grant.Until.UTC()
	require.Equal(t, []jobs.LeasedJobsRequest{{Collection: key.CollectionKey(), Since: now.Add(time.Second - time.Minute), Until: until.Add(time.Minute)}}, asked)
	require.Equal(t, until.Add(20*time.Second), askedAt, "looked at a grace after the lease's end")
	require.Contains(t, looked, []string{id("x"), id("y")}, "the names found are looked at at once")
	require.Equal(t, []string{"a", "x"}, view.Jobs)
	require.NotNil(t, after.Grant)
	require.Equal(t, 3, after.Grant.Slots)
}

// TestALookAtALeaseTakesInTheJobsOfEverySlotLeased: in a collection of
// at most 2 jobs, two API processes hold a lease of one slot each. The
// first dies after starting d on its lease; the second starts e on its
// own, and its claim is on its way when the first lease is looked at. The
// visibility store lists e first (the newest): the look takes in both
// names, e counted twice until its claim comes and its lease is given
// back, and the collection is full. A look recorded before
// versionAdoptOrphans (GetVersion's default) takes no more names than the
// dead lease's one slot: e alone, and d runs uncounted beside a lease
// granted into the slot it holds.
func TestALookAtALeaseTakesInTheJobsOfEverySlotLeased(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before bool
		held   []string
	}{
		{"now", false, []string{"d", "e"}},
		{"a look recorded before the change", true, []string{"e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			worker.Register(env, &activities.Activities{})
			if tc.before {
				// The collection has no other change: every version at its default.
				env.OnGetVersion(mock.Anything, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			}
			env.OnActivity(acts.LeasedJobs, mock.Anything, mock.Anything).Return([]string{"e", "d"}, nil)
			env.OnActivity(acts.JobPresence, mock.Anything, mock.Anything).Return(
				func(_ context.Context, ids []string) ([]jobs.JobPresence, error) {
					out := make([]jobs.JobPresence, len(ids))
					for i := range out {
						out[i] = jobs.JobPresence{Running: true, Defined: true}
					}
					return out, nil
				})
			env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).Return(nil).Maybe()
			var dead, living, claimed, after jobs.LeaseAnswer
			exchangeAt(t, env, time.Second, jobs.LeaseRequest{Want: 1}, &dead)
			exchangeAt(t, env, 2*time.Second, jobs.LeaseRequest{Want: 1}, &living)
			// The dead lease is looked at at 51 s (its end, 31 s, and the
			// grace); the living one would be at 52 s.
			exchangeAt(t, env, 51*time.Second+500*time.Millisecond, jobs.LeaseRequest{Claims: claims(2, "e"), Release: []int{2}}, &claimed)
			exchangeAt(t, env, 52*time.Second, jobs.LeaseRequest{Want: 1}, &after)
			var view jobs.CollectionView
			env.RegisterDelayedCallback(func() { view = collectionOf(t, env) }, 53*time.Second)
			giveBackAndDeleteAt(t, env, 3, 54*time.Second)
			runCollection(t, env, 2)

			require.Equal(t, 1, dead.Grant.Slots)
			require.Equal(t, 1, living.Grant.Slots)
			require.Nil(t, claimed.Answers[0].Error)
			require.Equal(t, 0, claimed.Leased)
			require.Equal(t, tc.held, view.Jobs)
			if tc.before {
				require.NotNil(t, after.Grant, "d runs uncounted")
				return
			}
			require.Nil(t, after.Grant, "d and e fill the quota")
		})
	}
}

// TestADeletedCollectionTellsTheJobsOfALeaseNotGivenBack: a collection
// deleted while two leases are out keeps running until both are given
// back or looked at, and tells the jobs started on them, which it never
// held, that they are deleted: "w", whose claim comes with its lease given
// back after the DELETE, and "z", found once the other lease has run out.
func TestADeletedCollectionTellsTheJobsOfALeaseNotGivenBack(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	env := newEnv(t)
	env.SetStartTime(now)
	worker.Register(env, &activities.Activities{})
	env.OnActivity(acts.LeasedJobs, mock.Anything, mock.Anything).Return([]string{"z"}, nil).Once()
	var told []jobs.TellJobsRequest
	env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req jobs.TellJobsRequest) error {
			told = append(told, req)
			return nil
		})
	var first, second jobs.LeaseAnswer
	exchangeAt(t, env, time.Second, jobs.LeaseRequest{Want: 2}, &first)
	exchangeAt(t, env, 2*time.Second, jobs.LeaseRequest{Want: 2}, &second)
	var deletedAt time.Time
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(jobs.UpdateDeleteCollection, "delete", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) { deletedAt = env.Now() },
		}, jobs.DeleteCollectionRequest{})
	}, 3*time.Second)
	env.RegisterDelayedCallback(func() {
		update(t, env, jobs.UpdateLease, jobs.LeaseRequest{Claims: claims(2, "w"), Release: []int{2}})
	}, 4*time.Second)
	runCollection(t, env, 0)

	require.Equal(t, now.Add(3*time.Second), deletedAt.UTC(), "the DELETE answers at once")
	require.Len(t, told, 2)
	require.Equal(t, []string{"w"}, told[0].Jobs)
	require.Equal(t, []string{"z"}, told[1].Jobs)
	require.True(t, told[0].Change.Deleted && told[1].Change.Deleted)
	require.Equal(t, first.Grant.Until.Add(20*time.Second), env.Now().UTC(), "the workflow ends once the lease is looked at")
}

// TestAJobThatLeavesBeforeItsClaimIsNotAdmitted: jobs started on a lease
// are deleted at once, and their leaves reach the collection before the
// claims of their names: "a", whose name the collection did not hold, and
// "d", whose name another PUT's admission by name held meanwhile (both
// started the same job; the leave frees the name). Each claim then takes
// its slot and admits nothing, so that the collection neither holds a name
// no job has nor counts it; a new job of the name "a" (another workflow)
// claimed on the same lease is admitted.
func TestAJobThatLeavesBeforeItsClaimIsNotAdmitted(t *testing.T) {
	env := newEnv(t)
	worker.Register(env, &activities.Activities{})
	env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).Return(nil).Maybe()
	env.OnActivity(acts.HoldReservedNames, mock.Anything, mock.Anything).Return(nil).Maybe()
	env.OnActivity(acts.JobPresence, mock.Anything, mock.Anything).Return([]jobs.JobPresence{{Running: true, Defined: true}}, nil).Maybe()
	leased := func(name, run string) jobs.MembershipRequest {
		return jobs.MembershipRequest{Job: name, ShortestGap: time.Hour, Lease: 1, Run: run}
	}
	var granted, held, claimed, again, byName jobs.LeaseAnswer
	exchangeAt(t, env, time.Second, jobs.LeaseRequest{Want: 3}, &granted)
	exchangeAt(t, env, 2*time.Second, jobs.LeaseRequest{Claims: claims(0, "d")}, &held)
	env.RegisterDelayedCallback(func() {
		for _, name := range []string{"a", "d"} {
			env.SignalWorkflow(jobs.SignalMembership, jobs.MembershipRequest{Job: name, Leave: true, Defined: true, Lease: 1, Run: "run-" + name})
		}
	}, 3*time.Second)
	exchangeAt(t, env, 4*time.Second, jobs.LeaseRequest{Claims: []jobs.MembershipRequest{leased("a", "run-a"), leased("d", "run-d")}}, &claimed)
	exchangeAt(t, env, 5*time.Second, jobs.LeaseRequest{Claims: []jobs.MembershipRequest{leased("a", "run-a2")}}, &again)
	exchangeAt(t, env, 6*time.Second, jobs.LeaseRequest{Claims: claims(0, "b", "c", "e", "f")}, &byName)
	var view jobs.CollectionView
	env.RegisterDelayedCallback(func() { view = collectionOf(t, env) }, 7*time.Second)
	giveBackAndDeleteAt(t, env, 1, 8*time.Second)
	runCollection(t, env, 4)

	require.Equal(t, 3, granted.Grant.Slots)
	require.NotNil(t, held.Answers[0].Admission, "d reserved by name")
	for _, a := range claimed.Answers {
		require.Nil(t, a.Error)
		require.Nil(t, a.Admission, "nothing admitted")
	}
	require.Equal(t, 1, claimed.Leased, "the claims took their slots")
	require.Nil(t, again.Answers[0].Error)
	require.Equal(t, 0, again.Leased, "the new job a took the last slot")
	for i := range 3 {
		require.Nil(t, byName.Answers[i].Error, "room for three beside a: the slots of the jobs that left are free")
	}
	require.NotNil(t, byName.Answers[3].Error)
	require.Equal(t, jobs.CodeQuotaExceeded, byName.Answers[3].Error.Code)
	require.Equal(t, []string{"a", "b", "c", "e"}, view.Jobs)
}

// TestAClaimInANewRunsFirstTaskWaitsForALeave: the first task of a run
// (the collection has just continued as new) can carry a claim into the
// full collection beside a job's leave, both sent while the last run
// ended. The SDK runs the claim's handler as soon as it is registered,
// before the workflow has set up the rest: the claim waits for the leave
// and takes the slot it frees.
func TestAClaimInANewRunsFirstTaskWaitsForALeave(t *testing.T) {
	env := newEnv(t)
	worker.Register(env, &activities.Activities{})
	env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).Return(nil).Maybe()
	env.OnActivity(acts.HoldReservedNames, mock.Anything, mock.Anything).Return(nil).Maybe()
	var answer jobs.LeaseAnswer
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(jobs.SignalMembership, jobs.MembershipRequest{Job: "a", Leave: true, Defined: true})
	}, 0)
	exchangeAt(t, env, 0, jobs.LeaseRequest{Claims: claims(0, "b")}, &answer)
	env.RegisterDelayedCallback(func() { update(t, env, jobs.UpdateDeleteCollection, jobs.DeleteCollectionRequest{}) }, time.Second)
	runCollection(t, env, 1, "a")
	require.Len(t, answer.Answers, 1)
	require.Nil(t, answer.Answers[0].Error, "a's leave frees the slot b claims")
}
