package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/store"
)

// TestACreatedJobWakesForNothing: once created, a job due in an hour has
// no timer but its next occurrence's, and may not have run a workflow task
// yet: its start delays the first task by up to a minute before the
// occurrence (api firstTaskDelay). Its history, read 12 s after the PUT
// (past the 10 s patience timer of an admission, had it run), is its
// start with that delay, or, when the delay was shorter, the first task's
// events with no timer that fired and one timer running. A write to it
// runs its first task at once: POST run answers, and the run is in its
// history.
func TestACreatedJobWakesForNothing(t *testing.T) {
	s := newStack(t)
	s.putCollection(t)
	put := time.Now()
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/quiet", httpJob("https://example.com/", map[string]any{"frequency": "Hour"}))
	require.Equal(t, http.StatusCreated, status, body)
	time.Sleep(time.Until(put.Add(admitPatience + 2*time.Second)))

	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "quiet"}
	history := func() (types []enumspb.EventType, backoff time.Duration) {
		iter := s.temporal.GetDefaultClient().GetWorkflowHistory(context.Background(), k.JobWorkflowID(), "", false,
			enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for iter.HasNext() {
			e, err := iter.Next()
			require.NoError(t, err)
			types = append(types, e.GetEventType())
			if a := e.GetWorkflowExecutionStartedEventAttributes(); a != nil {
				backoff = a.GetFirstWorkflowTaskBackoff().AsDuration()
			}
		}
		return types, backoff
	}
	types, backoff := history()
	t.Logf("first task delayed %s; %d events: %v", backoff.Round(time.Second), len(types), types)
	require.Less(t, backoff, time.Hour-time.Minute+time.Second, "the first task runs a minute before the occurrence at the latest")
	if time.Since(put) < backoff {
		require.Equal(t, []enumspb.EventType{enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED}, types, "no task before its time")
	} else {
		started, ended := 0, 0
		for _, e := range types {
			switch e {
			case enumspb.EVENT_TYPE_TIMER_STARTED:
				started++
			case enumspb.EVENT_TYPE_TIMER_FIRED:
				t.Errorf("a timer fired: %v", types)
			case enumspb.EVENT_TYPE_TIMER_CANCELED:
				ended++
			}
		}
		require.Equal(t, 1, started-ended, "the next occurrence's timer runs, no other: %v", types)
	}

	status, body = s.do(t, http.MethodPost, collectionPath+"/jobs/quiet/run", nil)
	require.Equal(t, http.StatusOK, status, body)
	types, _ = history()
	require.Contains(t, types, enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, "the write ran the first task: %v", types)
}

// admitPatience is workflows.admitPatience, how long a job waits for its
// collection's answer before it asks again.
const admitPatience = 10 * time.Second

// putFullCollection creates collectionPath with room for n jobs.
func (s *stack) putFullCollection(t *testing.T, n int) {
	t.Helper()
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{
		"sku": map[string]any{"name": "Standard"}, "quota": map[string]any{"maxJobCount": n}}})
	require.Equal(t, http.StatusCreated, status, body)
}

// TestAnAdmissionNoPutTookIsGivenUp: the API asked the collection to
// admit a job and died before it sent the PUT (here, the admission is
// asked of Temporal directly): the name holds the collection's one slot
// for a grace, then the collection finds no workflow of that job and
// gives the name up, and another job fits.
func TestAnAdmissionNoPutTookIsGivenUp(t *testing.T) {
	t.Parallel() // it waits for a look of the collection's, tens of seconds
	s := newStack(t)
	s.putFullCollection(t, 1)
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "ghost"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admitAhead(ctx, t, s.temporal.GetDefaultClient(), k)
	admitted := time.Now()

	job := httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"})
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/real", job)
	require.Equal(t, http.StatusConflict, status, "the reserved name holds the slot: %v", body)
	require.Eventually(t, func() bool {
		status, _ := s.do(t, http.MethodPut, collectionPath+"/jobs/real", job)
		return status == http.StatusCreated
	}, time.Minute, time.Second, "the slot is free again after the grace")
	t.Logf("the slot was free again %s after the admission", time.Since(admitted).Round(time.Second))
	status, _ = s.do(t, http.MethodGet, collectionPath+"/jobs/ghost", nil)
	require.Equal(t, http.StatusNotFound, status)
}

// TestADeletedJobsSlotIsFreeAtOnce: a job created and deleted at once
// (its name still reserved) frees its slot by the time the DELETE has
// answered: the PUT of another job right after it fits.
func TestADeletedJobsSlotIsFreeAtOnce(t *testing.T) {
	s := newStack(t)
	s.putFullCollection(t, 1)
	job := httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"})
	for i := range 5 {
		name := collectionPath + "/jobs/" + string(rune('a'+i))
		status, body := s.do(t, http.MethodPut, name, job)
		require.Equal(t, http.StatusCreated, status, body)
		status, body = s.do(t, http.MethodDelete, name, nil)
		require.Equal(t, http.StatusOK, status, body)
	}
}

// TestAJobAdmittedAheadDoesNotOutliveItsDeletedCollection: the collection
// admits a job ahead of its PUT (asked of Temporal directly, as the API
// asks it), is deleted before the PUT reaches the job, and then the PUT
// carrying that admission arrives (sent as the API sends it, an
// update-with-start of the job's workflow). The collection held the name:
// the job's workflow runs, deleted, and refuses the PUT, whose job never
// exists; the held workflow ends once no PUT may take the admission.
func TestAJobAdmittedAheadDoesNotOutliveItsDeletedCollection(t *testing.T) {
	t.Parallel() // it waits for a look of the collection's, tens of seconds
	s := newStack(t)
	s.putCollection(t)
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "late"}
	c := s.temporal.GetDefaultClient()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := admitAhead(ctx, t, c, k)

	status, body := s.do(t, http.MethodDelete, collectionPath, nil)
	require.Equal(t, http.StatusOK, status, body)

	err := putWithAdmission(ctx, c, k, acceptedJob(t, k, 1), adm)
	e, ok := jobs.FromApplicationError(err)
	require.True(t, ok, "the PUT is refused: %v", err)
	require.Equal(t, jobs.CodeNotFound, e.Code, "%v", err)

	status, body = s.do(t, http.MethodGet, collectionPath+"/jobs/late", nil)
	require.Equal(t, http.StatusNotFound, status, "the job outlives its deleted collection: %v", body)
	require.Eventually(t, func() bool {
		d, err := c.DescribeWorkflowExecution(ctx, k.JobWorkflowID(), "")
		return err == nil && d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	}, 40*time.Second, 500*time.Millisecond, "the held workflow ends once the admission has lapsed")
	require.False(t, time.Now().Before(adm.Until.Add(-5*time.Second)), "it ended before the admission lapsed (%s)", adm.Until)
}

// TestAJobStartedOnALeaseWithNoClaimIsFound: an API process took a lease
// of its collection's quota (2 slots, the whole room), started a job's
// workflow on it as a PUT does, and died before its claim of the name
// reached the collection (here, the lease is asked of Temporal directly
// and the workflow started as the API starts it; no claim follows). The
// collection does not know the job, but counts the lease's slots: a PUT
// meanwhile finds no room. Once the lease has run out the collection asks
// the visibility store for the jobs started while it was held, and holds
// the job: its list shows it, and one more job fits, not two.
func TestAJobStartedOnALeaseWithNoClaimIsFound(t *testing.T) {
	t.Parallel() // it waits for a look of the collection's, tens of seconds
	s := newStack(t)
	s.putFullCollection(t, 2)
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "orphan"}
	c := s.temporal.GetDefaultClient()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	answer := exchange(ctx, t, c, k, jobs.LeaseRequest{Want: 5})
	require.NotNil(t, answer.Grant)
	require.Equal(t, 2, answer.Grant.Slots, "the room")

	startJob(ctx, t, c, k, acceptedJob(t, k, 1), answer.Grant.Admission())

	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/meanwhile", httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"}))
	require.Contains(t, []int{http.StatusServiceUnavailable, http.StatusConflict}, status, "the lease holds the room: %v", body)
	require.Eventually(t, func() bool {
		_, list := s.do(t, http.MethodGet, collectionPath+"/jobs", nil)
		items, _ := list["value"].([]any)
		return len(items) == 1
	}, 90*time.Second, time.Second, "the collection holds the job started on the lease")
	t.Logf("held %s after the lease's end", time.Since(answer.Grant.Until).Round(time.Second))
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/second", httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"}))
	require.Equal(t, http.StatusCreated, status, body)
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/third", httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"}))
	require.Equal(t, http.StatusConflict, status, body)
}

// TestANewJobIsClaimedOnALease: the PUTs of new jobs start their
// workflows on a lease of the collection's quota and claim their names
// beside the starts: the collection's history has lease updates and no
// other kind, and a list right after the PUTs shows every job.
func TestANewJobIsClaimedOnALease(t *testing.T) {
	s := newStack(t)
	s.putCollection(t)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			status, body := s.do(t, http.MethodPut, fmt.Sprintf("%s/jobs/n%d", collectionPath, i), httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"}))
			require.Equal(t, http.StatusCreated, status, body)
		})
	}
	wg.Wait()
	_, list := s.do(t, http.MethodGet, collectionPath+"/jobs", nil)
	items, _ := list["value"].([]any)
	require.Len(t, items, 6, "the names are claimed before the PUTs answer")

	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1"}
	iter := s.temporal.GetDefaultClient().GetWorkflowHistory(context.Background(), k.CollectionWorkflowID(), "", false,
		enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	updates := map[string]int{}
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		if a := e.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil {
			updates[a.GetAcceptedRequest().GetInput().GetName()]++
		}
	}
	require.Positive(t, updates[jobs.UpdateLease])
	for name := range updates {
		require.Contains(t, []string{jobs.UpdatePutCollection, jobs.UpdateLease}, name, "one kind of update per creation: %v", updates)
	}
}

// TestAPutMeetingAJobWorkflowAlreadyStartedDefinesIt: a new job's PUT
// whose start finds the job's workflow running already (another write
// started it and has not defined it yet) is not a creation of its own: the
// PUT's definition goes to that workflow, which a GET right after shows,
// and the collection counts the job once.
func TestAPutMeetingAJobWorkflowAlreadyStartedDefinesIt(t *testing.T) {
	s := newStack(t)
	s.putFullCollection(t, 2)
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "taken"}
	c := s.temporal.GetDefaultClient()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A job workflow with no definition yet, as an update-with-start
	// leaves it while its job asks its collection.
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: k.JobWorkflowID(), TaskQueue: jobs.TaskQueue},
		jobs.JobWorkflowName, jobs.JobInput{Key: k})
	require.NoError(t, err)

	job := httpJob("http://127.0.0.1:9/marked", map[string]any{"frequency": "Hour"})
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/taken", job)
	require.Contains(t, []int{http.StatusCreated, http.StatusOK}, status, body)
	status, body = s.do(t, http.MethodGet, collectionPath+"/jobs/taken", nil)
	require.Equal(t, http.StatusOK, status, "the PUT's definition reached the job's workflow: %v", body)
	require.Equal(t, "http://127.0.0.1:9/marked", path(body, "properties", "action", "request", "uri"))

	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/second", httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"}))
	require.Equal(t, http.StatusCreated, status, "the collection counts the job once: %v", body)
}

// TestALookFindingADeletedJobGivesItsNameUp: the collection admits a name
// ahead of its PUT (asked of Temporal directly, as the API asks it), the
// PUT's job starts with that admission and is deleted, and its word to
// the collection is held (as a heavy burst holds it): its workflow runs
// on, deleted, when the reservation lapses and the collection looks at
// it. The look gives the name up, as it gives up one whose workflow does
// not run: a deleted job has left, or its leave is on its way. Kept, the
// name outlives a job whose leave came before the look, as in
// FuzzAdmissionModel's seed "a name admitted ahead while its deleted job
// runs on" (here the leave comes after, and would drop it).
func TestALookFindingADeletedJobGivesItsNameUp(t *testing.T) {
	t.Parallel() // it waits for a look of the collection's, tens of seconds
	s, holds := newHeldStack(t)
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "leaving"}
	c := s.temporal.GetDefaultClient()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm := admitAhead(ctx, t, c, k)
	require.NoError(t, putWithAdmission(ctx, c, k, acceptedJob(t, k, 1), adm))
	held, err := heldNames(c, k)
	require.NoError(t, err)
	require.Contains(t, held, k.Job, "reserved until %s", adm.Until)

	release := holds.holdSignals(jobs.SignalMembership)
	defer release()
	del, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: k.JobWorkflowID(), UpdateName: jobs.UpdateDeleteJob, WaitForStage: client.WorkflowUpdateStageAccepted,
		Args: []any{jobs.DeleteJobRequest{}},
	})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		held, err := heldNames(c, k)
		return err == nil && !slices.Contains(held, k.Job)
	}, time.Minute, 250*time.Millisecond, "the look at the lapsed reservation gives the name up")
	t.Logf("given up %s after the reservation lapsed", time.Since(adm.Until).Round(time.Second))
	d, err := c.DescribeWorkflowExecution(ctx, k.JobWorkflowID(), "")
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, d.GetWorkflowExecutionInfo().GetStatus(), "the look found the deleted job's workflow running")

	release()
	require.NoError(t, del.Get(ctx, nil), "the DELETE ends once its word is delivered")
	held, err = heldNames(c, k)
	require.NoError(t, err)
	require.Empty(t, held, "the leave of a name not held changes nothing")
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/leaving", httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"}))
	require.Equal(t, http.StatusCreated, status, body)
}

// exchange sends req to k's collection as the API sends its batches of
// admissions, and returns the answer.
func exchange(ctx context.Context, t *testing.T, c client.Client, k jobs.Key, req jobs.LeaseRequest) jobs.LeaseAnswer {
	t.Helper()
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: k.CollectionWorkflowID(), UpdateName: jobs.UpdateLease, WaitForStage: client.WorkflowUpdateStageCompleted,
		Args: []any{req},
	})
	require.NoError(t, err)
	var answer jobs.LeaseAnswer
	require.NoError(t, h.Get(ctx, &answer))
	return answer
}

// admitAhead has k's collection admit k's name ahead of its PUT, as the
// API asks it, and returns the admission.
func admitAhead(ctx context.Context, t *testing.T, c client.Client, k jobs.Key) *jobs.Admission {
	t.Helper()
	answer := exchange(ctx, t, c, k, jobs.LeaseRequest{Claims: []jobs.MembershipRequest{{Job: k.Job, ShortestGap: time.Hour}}})
	require.Len(t, answer.Answers, 1)
	require.Nil(t, answer.Answers[0].Error)
	require.NotNil(t, answer.Answers[0].Admission)
	return answer.Answers[0].Admission
}

// acceptedJob is k's definition of a job every interval hours, as the
// API accepts it now.
func acceptedJob(t *testing.T, k jobs.Key, interval int) jobs.Job {
	t.Helper()
	raw, err := json.Marshal(httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour", "interval": interval}))
	require.NoError(t, err)
	var def jobs.Job
	require.NoError(t, json.Unmarshal(raw, &def))
	require.NoError(t, def.Accept(k, time.Now().UTC().Truncate(time.Second)))
	return def
}

// startJob starts k's workflow on adm as the API starts a new job's.
func startJob(ctx context.Context, t *testing.T, c client.Client, k jobs.Key, def jobs.Job, adm jobs.Admission) {
	t.Helper()
	opts, in, ok := store.NewJobStart(k, def, time.Now().UTC().Truncate(time.Second), adm)
	require.True(t, ok)
	opts.EnableEagerStart = false // no worker of this client's
	_, err := c.ExecuteWorkflow(ctx, opts, jobs.JobWorkflowName, in)
	require.NoError(t, err)
}

// putWithAdmission sends k's PUT of def carrying adm as the API sends a
// PUT of a name it was admitted ahead, an update-with-start of the job's
// workflow, and returns its outcome.
func putWithAdmission(ctx context.Context, c client.Client, k jobs.Key, def jobs.Job, adm *jobs.Admission) error {
	put, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
			ID: k.JobWorkflowID(), TaskQueue: jobs.TaskQueue, WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		}, jobs.JobWorkflowName, jobs.JobInput{Key: k}),
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: jobs.UpdatePutJob, WaitForStage: client.WorkflowUpdateStageCompleted,
			Args: []any{jobs.PutJobRequest{Job: def, Admission: adm}}},
	})
	if err != nil {
		return err
	}
	return put.Get(ctx, nil)
}

// heldNames returns the names k's collection holds, as its query says.
func heldNames(c client.Client, k jobs.Key) ([]string, error) {
	v, err := c.QueryWorkflow(context.Background(), k.CollectionWorkflowID(), "", jobs.QueryCollection)
	if err != nil {
		return nil, err
	}
	var view jobs.CollectionView
	err = v.Get(&view)
	return view.Jobs, err
}

// TestADeletedJobsLeaveFollowsItsRequestOnItsWay: a job whose run has
// heard none of its collection's terms (started as a continued run is,
// with its state and no admission) asks its collection before a
// redefinition; the request's delivery is held (as a heavy burst holds
// it), and the job is deleted meanwhile. Its leave is sent once the
// request has arrived, never before: sent together, the leave could
// arrive first, and the request would have the collection admit the name
// anew, for a job that is gone. The redefinition is refused as the job is
// gone, and the collection holds no name once the leave has come.
func TestADeletedJobsLeaveFollowsItsRequestOnItsWay(t *testing.T) {
	t.Parallel() // the server takes the DELETE once the held delivery's first try times out, 30 s
	s, holds := newHeldStack(t)
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "asking"}
	c := s.temporal.GetDefaultClient()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts, in, ok := store.NewJobStart(k, acceptedJob(t, k, 1), time.Now().UTC().Truncate(time.Second), jobs.Admission{})
	require.True(t, ok)
	opts.EnableEagerStart = false // no worker of this client's
	in.Admission = nil            // a continued run: it has heard no terms
	run, err := c.ExecuteWorkflow(ctx, opts, jobs.JobWorkflowName, in)
	require.NoError(t, err)

	release := holds.holdSignals(jobs.SignalMembership)
	defer release()
	put, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: k.JobWorkflowID(), UpdateName: jobs.UpdatePutJob, WaitForStage: client.WorkflowUpdateStageAccepted,
		Args: []any{jobs.PutJobRequest{Job: acceptedJob(t, k, 2)}},
	})
	require.NoError(t, err)
	del, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: k.JobWorkflowID(), UpdateName: jobs.UpdateDeleteJob, WaitForStage: client.WorkflowUpdateStageAccepted,
		Args: []any{jobs.DeleteJobRequest{}},
	})
	require.NoError(t, err)
	time.Sleep(2 * time.Second) // the job's tasks of both, the request held
	release()
	require.NoError(t, del.Get(ctx, nil))
	err = put.Get(ctx, nil)
	e, ok := jobs.FromApplicationError(err)
	require.True(t, ok, "the redefinition is refused: %v", err)
	require.Equal(t, jobs.CodeNotFound, e.Code, "%v", err)
	require.NoError(t, run.Get(ctx, nil), "the deleted job's workflow ends")

	// In the job's history, the request's delivery comes before the
	// leave's sending.
	var ask, askArrived, leave int64
	iter := c.GetWorkflowHistory(ctx, k.JobWorkflowID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		if a := e.GetSignalExternalWorkflowExecutionInitiatedEventAttributes(); a != nil {
			var req jobs.MembershipRequest
			require.NoError(t, codec.DataConverter(s.recur.Keys).FromPayloads(a.GetInput(), &req))
			if req.Leave {
				leave = e.GetEventId()
			} else if ask == 0 {
				ask = e.GetEventId()
			}
		}
		if a := e.GetExternalWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetInitiatedEventId() == ask {
			askArrived = e.GetEventId()
		}
	}
	require.Positive(t, ask, "the job asked its collection")
	require.Positive(t, askArrived)
	require.Greater(t, leave, askArrived, "the leave is sent once the request has arrived")
	held, err := heldNames(c, k)
	require.NoError(t, err)
	require.NotContains(t, held, k.Job, "the request came first, the leave after")
}
