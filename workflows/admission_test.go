package workflows_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// updateAnswer sends the update name (a PUT, a PATCH) from within the
// test environment and records its outcome.
func updateAnswer(h *harness, name string, req any, into *error) {
	updates++
	h.env.UpdateWorkflow(name, fmt.Sprintf("%s-%d", name, updates), &testsuite.TestUpdateCallback{
		OnReject:   func(err error) { *into = err },
		OnAccept:   func() {},
		OnComplete: func(_ any, err error) { *into = err },
	}, req)
}

// TestARefusedAdmissionDefinesNothing: the collection refuses the job (its
// quota); the PUT fails with the collection's error, the job is never
// defined (a DELETE or run now meanwhile is not found) and its workflow
// ends on its own.
func TestARefusedAdmissionDefinesNothing(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.collection.refuse = func(jobs.MembershipRequest) *jobs.Error {
		return &jobs.Error{Code: jobs.CodeQuotaExceeded, Message: "full"}
	}
	var err error
	h.at(0, func() {
		updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job(now, &recurrence.Recurrence{Frequency: "Minute"})}, &err)
	})
	var deleteErr, runErr error
	h.at(time.Second, func() {
		updateAnswer(h, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{}, &deleteErr)
		updateAnswer(h, jobs.UpdateRunNow, jobs.RunNowRequest{}, &runErr)
	})
	h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key})
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError(), "a job never defined ends")
	e, ok := jobs.FromApplicationError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, jobs.CodeQuotaExceeded, e.Code)
	for _, err := range []error{deleteErr, runErr} {
		e, ok := jobs.FromApplicationError(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, jobs.CodeNotFound, e.Code)
	}
	require.Empty(t, h.attempts, "nothing ran")
	require.Len(t, h.collection.requests, 1, "one admission, and no leave: the collection never held the job")
	require.Equal(t, time.Minute, h.env.Now().Sub(now), "it waits a minute for a definition")
}

// TestADefinitionIsAdmittedUnlessItsCollectionsTermsAllowIt: the first
// PUT asks the collection with the job's shortest gap (a PATCH of a job
// never defined is refused before it asks); a redefinition the terms of
// the answer allow takes effect without asking, one they do not allow
// asks again, and newer terms the collection sends replace the answer's.
func TestADefinitionIsAdmittedUnlessItsCollectionsTermsAllowIt(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.collection.terms.MaxRecurrence = &jobs.MaxRecurrence{Frequency: "Minute", Interval: 10}
	every := func(minutes int) *recurrence.Recurrence {
		return &recurrence.Recurrence{Frequency: "Minute", Interval: intp(minutes)}
	}
	var patchErr error
	h.at(0, func() {
		updateAnswer(h, jobs.UpdatePatchJob, jobs.PatchJobRequest{Patch: []byte(`{}`)}, &patchErr)
	})
	h.at(time.Second, func() { h.put(job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Hour"})) })
	h.at(2*time.Second, func() { h.put(job(now.Add(time.Hour), every(10))) })
	h.at(3*time.Second, func() { h.put(job(now.Add(time.Hour), every(5))) })
	h.at(4*time.Second, func() {
		update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{Terms: &jobs.CollectionTerms{
			Revision: 2, MaxRecurrence: &jobs.MaxRecurrence{Frequency: "Minute", Interval: 1}}})
	})
	h.at(5*time.Second, func() { h.put(job(now.Add(time.Hour), every(2))) })
	h.run(time.Minute, jobs.JobInput{Key: key})
	e, ok := jobs.FromApplicationError(patchErr)
	require.True(t, ok, "%v", patchErr)
	require.Equal(t, jobs.CodeNotFound, e.Code)
	require.Len(t, h.collection.requests, 3, "the first PUT's admission, the 5-minute one's, and the leave at the DELETE: %v", h.collection.requests)
	require.Equal(t, time.Hour, h.collection.requests[0].ShortestGap)
	require.Equal(t, 5*time.Minute, h.collection.requests[1].ShortestGap)
	require.Equal(t, []int{1, 2}, []int{h.collection.requests[0].Seq, h.collection.requests[1].Seq})
	require.True(t, h.collection.requests[2].Leave)
	require.Equal(t, 2, *h.view().Properties.Recurrence.Interval, "the last PUT took effect")
}

// TestAnOlderMessageOfTheCollectionDoesNotUndoANewerAnswer: the job is
// admitted into a collection disabled at revision 3 and takes effect
// disabled; the enable of revision 2, delivered late, changes nothing.
func TestAnOlderMessageOfTheCollectionDoesNotUndoANewerAnswer(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.collection.terms = jobs.CollectionTerms{Revision: 3, Disabled: true}
	h.at(0, func() { h.put(job(now.Add(time.Minute), &recurrence.Recurrence{Frequency: "Hour"})) })
	h.at(time.Second, func() {
		update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{State: jobs.Enabled, Terms: &jobs.CollectionTerms{Revision: 2}})
	})
	var view jobs.Job
	h.at(time.Hour+30*time.Minute, func() { view = h.view() })
	h.run(2*time.Hour, jobs.JobInput{Key: key})
	require.Equal(t, jobs.Disabled, view.Properties.State)
	require.Empty(t, h.attempts, "a disabled job does not run")
}

// TestAJobItsCollectionDeletedDoesNotAskToBeForgotten: the collection
// forgot it already, and a collection of the same name created since
// may hold a new job of its name.
func TestAJobItsCollectionDeletedDoesNotAskToBeForgotten(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.at(0, func() { h.put(job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Hour"})) })
	h.at(time.Minute, func() { update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{Deleted: true}) })
	h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key})
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())
	require.Len(t, h.collection.requests, 1, "the admission only")
	require.Empty(t, h.collection.left)
}

// TestPutsWithTheSameIfMatchLetOneThrough: two PUTs carry the ETag they
// read; the first to be admitted redefines the job and the other finds it
// stale, whether its validator or its handler (after its own admission)
// sees the change first.
func TestPutsWithTheSameIfMatchLetOneThrough(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.at(0, func() { h.put(job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Hour"})) })
	var first jobs.Job
	var errs [2]error
	h.at(time.Second, func() {
		first = h.view()
		req := jobs.PutJobRequest{Job: job(now.Add(2*time.Hour), &recurrence.Recurrence{Frequency: "Hour"}),
			Preconditions: jobs.Preconditions{IfMatch: first.ETag}}
		updateAnswer(h, jobs.UpdatePutJob, req, &errs[0])
		updateAnswer(h, jobs.UpdatePutJob, req, &errs[1])
	})
	var last jobs.Job
	h.at(time.Minute-time.Second, func() { last = h.view() })
	h.run(time.Minute, jobs.JobInput{Key: key})
	require.NotEmpty(t, first.ETag)
	require.True(t, (errs[0] == nil) != (errs[1] == nil), "exactly one goes through: %v", errs)
	failed := errs[0]
	if failed == nil {
		failed = errs[1]
	}
	e, ok := jobs.FromApplicationError(failed)
	require.True(t, ok, "%v", failed)
	require.Equal(t, jobs.CodePreconditionFailed, e.Code)
	require.NotEqual(t, first.ETag, last.ETag, "the redefinition has a new ETag")
	require.Equal(t, now.Add(2*time.Hour).Format(time.RFC3339), last.Properties.StartTime.String())
}

// TestADefinitionIntoADisabledCollectionTakesEffectDisabled: the
// collection admits the job but says it is disabled; the job is defined
// disabled, with the collection's reason, and does not run until the
// collection enables it.
func TestADefinitionIntoADisabledCollectionTakesEffectDisabled(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.collection.terms.Disabled = true
	h.at(0, func() { h.put(job(now.Add(time.Minute), &recurrence.Recurrence{Frequency: "Hour"})) })
	var defined jobs.Job
	h.at(time.Hour+30*time.Minute, func() {
		defined = h.view()
		update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{State: jobs.Enabled, Terms: &jobs.CollectionTerms{Revision: 2}})
	})
	h.run(3*time.Hour+30*time.Minute, jobs.JobInput{Key: key})
	require.Equal(t, jobs.Disabled, defined.Properties.State)
	require.Equal(t, "job collection c was disabled", defined.Properties.StateReason)
	require.Len(t, h.attempts, 2, "none while disabled (12:01, 13:01); 14:01 and 15:01 once enabled")
	require.Equal(t, now.Add(2*time.Hour+time.Minute), h.attempts[0].at)
}

// putAnsweredAfter sends, at once, the first PUT of an hourly job whose
// collection answers after d, and records its outcome.
func (h *harness) putAnsweredAfter(d time.Duration, into *error) {
	h.collection.answerAfter = d
	start := h.env.Now().Add(time.Hour)
	h.at(0, func() {
		updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job(start, &recurrence.Recurrence{Frequency: "Hour"})}, into)
	})
}

// TestAFirstPutItsCollectionAnswersTooLateGivesUpTheName: the collection
// answers the first PUT after 70 s, as it does when recur was stopped
// meanwhile. The PUT gives up at the job's grace (its caller left long
// before) with an error the API sends again, the workflow ends without
// spinning, and the job asks its collection to forget it: the collection
// may have admitted it, and no quota slot may outlive the name.
func TestAFirstPutItsCollectionAnswersTooLateGivesUpTheName(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	var err error
	h.putAnsweredAfter(70*time.Second, &err)
	h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key})
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError(), "a job never defined ends")
	e, ok := jobs.FromApplicationError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, jobs.CodeNotFound, e.Code, "the API sends the PUT again: %v", err)
	require.Contains(t, e.Message, "did not answer in time")
	asks, leave := h.collection.requests[:len(h.collection.requests)-1], h.collection.requests[len(h.collection.requests)-1]
	require.Len(t, asks, 6, "the admission, asked every 10 s until the grace ends: %v", h.collection.requests)
	for _, r := range asks {
		require.Equal(t, jobs.MembershipRequest{Job: key.Job, Seq: 1, ShortestGap: time.Hour}, r)
	}
	require.True(t, leave.Leave)
	require.Equal(t, []time.Time{now.Add(time.Minute)}, h.collection.left, "it leaves as its grace ends")
	require.Empty(t, h.attempts, "nothing ran")
}

// TestASlowAdmissionWithinTheGraceDefinesTheJob: a collection that answers
// after 50 s, asked again every admitPatience, still admits the job.
func TestASlowAdmissionWithinTheGraceDefinesTheJob(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	var err error
	h.putAnsweredAfter(50*time.Second, &err)
	var view jobs.Job
	h.at(2*time.Minute, func() { view = h.view() })
	h.run(3*time.Minute, jobs.JobInput{Key: key})
	require.NoError(t, h.env.GetWorkflowError())
	require.NoError(t, err)
	require.Equal(t, jobs.Enabled, view.Properties.State)
}

// TestAFirstPutPastTheGraceIsSentOnward: a PUT that reaches a job never
// defined whose grace has passed, while an earlier PUT still waits for
// the collection, is refused as not found (the API sends it to the
// workflow that starts next); both end and the workflow with them.
func TestAFirstPutPastTheGraceIsSentOnward(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.collection.answerAfter = 2 * time.Minute
	var first, late error
	h.at(0, func() {
		updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Hour"})}, &first)
	})
	h.at(time.Minute, func() {
		updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Hour"})}, &late)
	})
	h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key})
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())
	for _, err := range []error{first, late} {
		e, ok := jobs.FromApplicationError(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, jobs.CodeNotFound, e.Code)
	}
	require.Len(t, h.collection.left, 1)
}

// putAdmitted sends, at d, a first PUT of an hourly job carrying its
// collection's admission, which the collection holds until until, and
// records its outcome.
func (h *harness) putAdmitted(d time.Duration, until time.Time, into *error) {
	start := h.env.Now().Add(time.Hour)
	h.at(d, func() {
		updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job(start, &recurrence.Recurrence{Frequency: "Hour"}),
			Admission: &jobs.Admission{Terms: jobs.CollectionTerms{Revision: 1}, Until: until, Gen: 1}}, into)
	})
}

// TestAPutWithItsCollectionsAdmissionAsksNothing: a first PUT that
// carries its collection's admission (the API asked it) defines the job
// without asking the collection; the job asks to be forgotten at its
// DELETE, as one its collection admitted by signal does.
func TestAPutWithItsCollectionsAdmissionAsksNothing(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	var err error
	h.putAdmitted(0, now.Add(20*time.Second), &err)
	var view jobs.Job
	var asked int
	h.at(time.Second, func() { view, asked = h.view(), len(h.collection.requests) })
	h.run(2*time.Minute, jobs.JobInput{Key: key})
	require.NoError(t, err)
	require.Equal(t, jobs.Enabled, view.Properties.State)
	require.Zero(t, asked, "the PUT asked the collection nothing: %v", h.collection.requests)
	require.Len(t, h.collection.requests, 1, "the leave at the DELETE only: %v", h.collection.requests)
	require.True(t, h.collection.requests[0].Leave)
}

// TestAnAdmissionAboutToLapseIsAskedAgain: a PUT whose admission the
// collection gives up within admissionMargin (the PUT took long on its
// way) asks the collection itself, which may have given the name up.
func TestAnAdmissionAboutToLapseIsAskedAgain(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	var err error
	h.putAdmitted(0, now.Add(3*time.Second), &err)
	var view jobs.Job
	h.at(time.Second, func() { view = h.view() })
	h.run(2*time.Minute, jobs.JobInput{Key: key})
	require.NoError(t, err)
	require.Equal(t, jobs.Enabled, view.Properties.State)
	require.Len(t, h.collection.requests, 2, "the admission asked, and the leave: %v", h.collection.requests)
	require.False(t, h.collection.requests[0].Leave)
}

// TestAnAdmissionWhoseTermsRefuseTheDefinitionIsAskedAgain: the API's
// admission was for the job's shortest gap as the API planned it; a
// definition the admission's terms refuse asks the collection, whose
// refusal the PUT answers, and the job, never defined, asks to be
// forgotten as it ends: its name was reserved for it.
func TestAnAdmissionWhoseTermsRefuseTheDefinitionIsAskedAgain(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.collection.refuse = func(jobs.MembershipRequest) *jobs.Error {
		return &jobs.Error{Code: jobs.CodeQuotaExceeded, Message: "too often"}
	}
	var err error
	h.at(0, func() {
		updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Minute"}),
			Admission: &jobs.Admission{Until: now.Add(20 * time.Second), Terms: jobs.CollectionTerms{Revision: 1,
				MaxRecurrence: &jobs.MaxRecurrence{Frequency: "Hour", Interval: 1}}}}, &err)
	})
	h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key})
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError(), "a job never defined ends")
	e, ok := jobs.FromApplicationError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, jobs.CodeQuotaExceeded, e.Code)
	require.Len(t, h.collection.requests, 2, "the admission asked, and the leave: %v", h.collection.requests)
	require.Equal(t, time.Minute, h.collection.requests[0].ShortestGap)
	require.True(t, h.collection.requests[1].Leave)
	require.Empty(t, h.attempts, "nothing ran")
}

// TestADeletedJobAsksItsCollectionNothingMore: a redefinition of a job
// whose run has heard none of its collection's terms (it continued as new)
// asks the collection, which answers after 30 s, as a swamped one does;
// the job is deleted meanwhile and leaves. The redefinition asks no more,
// and is refused as the job is gone: asked again after the leave, the
// collection would admit the name anew, for a job that has left, and hold
// it for good.
func TestADeletedJobAsksItsCollectionNothingMore(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.collection.answerAfter = 30 * time.Second
	j := job(now, &recurrence.Recurrence{Frequency: "Hour"})
	j.Properties.State = jobs.Enabled
	next := now.Add(time.Hour)
	var put error
	h.at(0, func() {
		updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job(now.Add(2*time.Hour), &recurrence.Recurrence{Frequency: "Hour"})}, &put)
	})
	h.at(time.Second, func() { update(t, h.env, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{}) })
	h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key, State: &jobs.JobState{Job: j, PlannedFrom: now, Next: &next}})
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())

	reqs := h.collection.requests
	left := slices.IndexFunc(reqs, func(r jobs.MembershipRequest) bool { return r.Leave })
	require.Positive(t, left, "asked, then left: %v", reqs)
	require.Len(t, reqs, left+1, "nothing asked after the leave: %v", reqs)
	e, ok := jobs.FromApplicationError(put)
	require.True(t, ok, "%v", put)
	require.Equal(t, jobs.CodeNotFound, e.Code, "%v", put)
}

// TestOnlyAJobThatTookItsAdmissionAheadLeavesDefined: a job defined by
// the admission ahead its PUT carried leaves Defined (its collection drops
// the reservation at once: that admission was the name's last); one
// defined by asking its collection leaves without it, since another PUT's
// admission of the name may still be on its way (the collection keeps the
// reservation until it lapses, and looks).
func TestOnlyAJobThatTookItsAdmissionAheadLeavesDefined(t *testing.T) {
	for _, took := range []bool{true, false} {
		now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		h := newHarness(t, now)
		var err error
		if took {
			h.putAdmitted(0, now.Add(20*time.Second), &err)
		} else {
			h.at(0, func() {
				updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Hour"})}, &err)
			})
		}
		h.at(time.Minute, func() { update(t, h.env, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{}) })
		h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key})
		require.NoError(t, h.env.GetWorkflowError())
		require.NoError(t, err)
		reqs := h.collection.requests
		require.NotEmpty(t, reqs)
		leave := reqs[len(reqs)-1]
		require.True(t, leave.Leave, "%v", reqs)
		require.Equal(t, took, leave.Defined, "took the admission ahead: %v; %v", took, reqs)
	}
}
