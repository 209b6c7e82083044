package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
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
	env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).Return(nil).Maybe()
	env.OnActivity(acts.HoldReservedNames, mock.Anything, mock.Anything).Return(nil).Maybe()
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
		updates++
		env.UpdateWorkflow(jobs.UpdateLease, "admit-"+names[0], &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnAccept: func() {},
			OnComplete: func(v any, err error) {
				require.NoError(t, err)
				*into = v.(jobs.LeaseAnswer).Answers
			},
		}, jobs.LeaseRequest{Claims: claims(0, names...)})
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

// TestAJobAdmittedAheadDoesNotOutliveItsDeletedCollection: the race of
// e2e TestConcurrentWritesStayConsistent, one step at a time. The
// collection admits "n" ahead of its PUT and is deleted before the job's
// workflow runs; then the PUT carrying that admission reaches the job.
// What the collection sent the job reaches it as the server would deliver
// it (a hold starts the workflow with its update; a TellJobs update finds
// no workflow that does not run) before the PUT, which the job must refuse; its workflow runs
// deleted until the admission has lapsed, so that no later run takes it.
// In the other order, the PUT defines the job and the hold deletes it; a
// job another PUT defined first (admitted by signal) is held, and refuses
// the PUT with the admission.
func TestAJobAdmittedAheadDoesNotOutliveItsDeletedCollection(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	env := newEnv(t)
	env.SetStartTime(now)
	worker.Register(env, &activities.Activities{})
	n := key
	n.Job = "n"
	var delivered []jobs.CollectionChange // what reaches n's workflow, which does not run yet
	env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req jobs.TellJobsRequest) error {
			require.NotContains(t, req.Jobs, "n", "n's workflow does not run: only its hold reaches it")
			return nil
		}).Maybe()
	env.OnActivity(acts.JobPresence, mock.Anything, mock.Anything).Return([]jobs.JobPresence{{}}, nil).Maybe()
	env.OnActivity(acts.HoldReservedNames, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req jobs.HoldRequest) error {
			for _, r := range req.Jobs {
				require.Equal(t, key.CollectionKey(), req.Collection)
				if r.Job == "n" {
					delivered = append(delivered, jobs.CollectionChange{Deleted: true, HoldUntil: r.Until, Gen: r.Gen})
				}
			}
			return nil
		}).Maybe()
	var answers []jobs.AdmitAnswer
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(jobs.UpdateLease, "admit", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnAccept: func() {},
			OnComplete: func(v any, err error) { require.NoError(t, err); answers = v.(jobs.LeaseAnswer).Answers },
		}, jobs.LeaseRequest{Claims: claims(0, "n")})
	}, time.Second)
	deleted := false
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(jobs.UpdateDeleteCollection, "delete", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnAccept: func() {},
			OnComplete: func(_ any, err error) { require.NoError(t, err); deleted = true },
		}, jobs.DeleteCollectionRequest{})
	}, 2*time.Second)
	coll := jobs.Collection{}
	require.NoError(t, coll.Accept(key.CollectionKey()))
	env.ExecuteWorkflow(jobs.CollectionWorkflowName, jobs.CollectionInput{Key: key.CollectionKey(), Collection: &coll})
	require.NoError(t, env.GetWorkflowError())
	require.True(t, deleted)
	require.Len(t, answers, 1)
	adm := answers[0].Admission
	require.NotNil(t, adm, "n is new: the collection admits it ahead")

	put := func(h *harness, into *error) {
		updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Hour"}), Admission: adm}, into)
	}
	signal := func(h *harness) {
		for _, change := range delivered {
			update(h.t, h.env, jobs.UpdateCollectionChanged, change)
		}
	}

	// The hold first, as the collection's DELETE answers before the PUT
	// reaches the job: the PUT is refused, and the workflow holds until
	// no PUT may take the admission.
	t.Run("held, then the PUT", func(t *testing.T) {
		h := newHarness(t, now.Add(3*time.Second))
		var err error
		h.at(0, func() { signal(h) })
		h.at(time.Second, func() { put(h, &err) })
		h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: n})
		require.True(t, h.env.IsWorkflowCompleted())
		require.NoError(t, h.env.GetWorkflowError())
		e, ok := jobs.FromApplicationError(err)
		require.True(t, ok, "the PUT is refused: %v", err)
		require.Equal(t, jobs.CodeNotFound, e.Code, "the API sends it again, with an admission its collection refuses")
		require.False(t, h.env.Now().Before(adm.Until.Add(-5*time.Second)),
			"the workflow ends at %s, before the admission lapses (%s)", h.env.Now(), adm.Until)
		require.Empty(t, h.collection.requests, "the job asks its deleted collection nothing: %v", h.collection.requests)
	})

	// The PUT first: it defines the job, which the hold deletes; the job
	// had the one PUT that carries the admission, and ends at once.
	t.Run("the PUT, then held", func(t *testing.T) {
		h := newHarness(t, now.Add(3*time.Second))
		var err error
		var before jobs.JobView
		h.at(0, func() { put(h, &err) })
		h.at(time.Second, func() { before = h.query() })
		h.at(2*time.Second, func() { signal(h) })
		h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: n})
		require.True(t, h.env.IsWorkflowCompleted())
		require.NoError(t, h.env.GetWorkflowError())
		require.NoError(t, err)
		require.False(t, before.Deleted)
		last := h.upserts[len(h.upserts)-1][jobs.MemoJob].(jobs.JobView)
		require.True(t, last.Deleted, "the job is deleted with its collection")
		require.Equal(t, now.Add(5*time.Second), h.env.Now().UTC(), "its workflow ends with the hold")
		require.Empty(t, h.collection.requests, "the job asks its deleted collection nothing: %v", h.collection.requests)
	})

	// Another PUT of the name, without the admission (the collection held
	// the name for the first), defined the job by asking the collection;
	// the hold deletes it and keeps its workflow, so that the PUT with the
	// admission, still on its way, is refused.
	t.Run("another PUT, held, then the PUT", func(t *testing.T) {
		h := newHarness(t, now.Add(3*time.Second))
		var other, err error
		h.at(0, func() {
			updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Hour"})}, &other)
		})
		h.at(2*time.Second, func() { signal(h) })
		h.at(3*time.Second, func() { put(h, &err) })
		h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: n})
		require.True(t, h.env.IsWorkflowCompleted())
		require.NoError(t, h.env.GetWorkflowError())
		require.NoError(t, other)
		e, ok := jobs.FromApplicationError(err)
		require.True(t, ok, "the PUT is refused: %v", err)
		require.Equal(t, jobs.CodeNotFound, e.Code)
		require.False(t, h.env.Now().Before(adm.Until.Add(-5*time.Second)),
			"the workflow ends at %s, before the admission lapses (%s)", h.env.Now(), adm.Until)
	})
}

// query reads the job as its query answers, deleted or not.
func (h *harness) query() jobs.JobView { return queryJob(h.t, h.env) }

// TestADeletedCollectionHoldsTheReservationsItCarried: a collection that
// continued as new with reservations is deleted while it looks at the one
// that fell due: the name whose admission a PUT may still carry is held
// (its job's workflow started if need be), the others are told as its
// listed jobs are, the look's answer changes nothing, and the workflow
// ends once the hold is in place.
func TestADeletedCollectionHoldsTheReservationsItCarried(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	env := newEnv(t)
	env.SetStartTime(now)
	worker.Register(env, &activities.Activities{})
	id := func(name string) string { k := key; k.Job = name; return k.JobWorkflowID() }
	var told []string
	env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req jobs.TellJobsRequest) error {
			require.True(t, req.Change.Deleted)
			for _, name := range req.Jobs {
				told = append(told, id(name))
			}
			return nil
		})
	env.OnActivity(acts.JobPresence, mock.Anything, mock.Anything).Return([]jobs.JobPresence{{}}, nil).After(3 * time.Second)
	var held []jobs.HoldRequest
	var heldAt time.Time
	env.OnActivity(acts.HoldReservedNames, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req jobs.HoldRequest) error {
			held = append(held, req)
			return nil
		})
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == "HoldReservedNames" {
			heldAt = env.Now()
		}
	})
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(jobs.UpdateDeleteCollection, "delete", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(_ any, err error) { require.NoError(t, err) },
		}, jobs.DeleteCollectionRequest{})
	}, time.Second)
	coll := jobs.Collection{}
	require.NoError(t, coll.Accept(key.CollectionKey()))
	until := now.Add(15 * time.Second)
	env.ExecuteWorkflow(jobs.CollectionWorkflowName, jobs.CollectionInput{Key: key.CollectionKey(), Collection: &coll,
		Jobs:     []string{"a", "n", "old"},
		Reserved: []jobs.Reservation{{Job: "old", Gen: 1, Until: now.Add(-6 * time.Second)}, {Job: "n", Gen: 2, Until: until}},
	})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, held, 1)
	require.NotEmpty(t, held[0].UpdateID, "a retried attempt sends the same updates")
	held[0].UpdateID = ""
	require.Equal(t, []jobs.HoldRequest{{Collection: key.CollectionKey(), Jobs: []jobs.Reservation{{Job: "n", Gen: 2, Until: until}}}}, held)
	require.ElementsMatch(t, []string{id("a"), id("old")}, told)
	require.Equal(t, now.Add(time.Second), heldAt.UTC(), "held at the DELETE")
}

// TestALeaveDoesNotFreeANameReservedForAPutOnItsWay: the leave of a job
// never defined reaches the collection after it admitted the same name
// ahead of a new PUT, whose job's workflow does not run yet. The name
// stays reserved until no PUT may take the admission, and only then does
// the collection look: a look at once would find no workflow and give the
// name up, and the PUT would define a job its collection does not count.
func TestALeaveDoesNotFreeANameReservedForAPutOnItsWay(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	env := newEnv(t)
	env.SetStartTime(now)
	worker.Register(env, &activities.Activities{})
	var lookedAt []time.Time
	env.OnActivity(acts.JobPresence, mock.Anything, mock.Anything).Return(
		func(_ context.Context, ids []string) ([]jobs.JobPresence, error) {
			return make([]jobs.JobPresence, len(ids)), nil
		})
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == "JobPresence" {
			lookedAt = append(lookedAt, env.Now().UTC())
		}
	})
	admit := func(name string, into *[]jobs.AdmitAnswer) {
		env.UpdateWorkflow(jobs.UpdateLease, "admit-"+name, &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnAccept: func() {},
			OnComplete: func(v any, err error) { require.NoError(t, err); *into = v.(jobs.LeaseAnswer).Answers },
		}, jobs.LeaseRequest{Claims: claims(0, name)})
	}
	var first, second, third []jobs.AdmitAnswer
	env.RegisterDelayedCallback(func() { admit("n", &first) }, time.Second)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(jobs.SignalMembership, jobs.MembershipRequest{Job: "n", Leave: true})
	}, 2*time.Second)
	env.RegisterDelayedCallback(func() { admit("m", &second) }, 3*time.Second)
	env.RegisterDelayedCallback(func() { admit("m2", &third) }, time.Minute)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(jobs.UpdateDeleteCollection, "delete", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, jobs.DeleteCollectionRequest{})
	}, 2*time.Minute)
	one := 1
	coll := jobs.Collection{Properties: jobs.CollectionProperties{Quota: &jobs.Quota{MaxJobCount: &one}}}
	require.NoError(t, coll.Accept(key.CollectionKey()))
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", mock.Anything, mock.Anything).Return(nil).Maybe()
	env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).Return(nil).Maybe()
	env.OnActivity(acts.HoldReservedNames, mock.Anything, mock.Anything).Return(nil).Maybe()
	env.ExecuteWorkflow(jobs.CollectionWorkflowName, jobs.CollectionInput{Key: key.CollectionKey(), Collection: &coll})
	require.NoError(t, env.GetWorkflowError())
	require.NotNil(t, first[0].Admission)
	require.NotNil(t, second[0].Error, "n's slot is held while its admission may be taken")
	require.Equal(t, jobs.CodeQuotaExceeded, second[0].Error.Code)
	require.NotEmpty(t, lookedAt)
	require.False(t, lookedAt[0].Before(first[0].Admission.Until), "looked at %s, before the admission lapsed (%s)", lookedAt[0], first[0].Admission.Until)
	require.Nil(t, third[0].Error, "the slot is free once the collection found no job took it")
}
