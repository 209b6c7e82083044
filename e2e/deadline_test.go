package e2e

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/jobs"
)

// TestAWriteAnswered503NeverHappens: with no worker, a PUT, a run now and
// a DELETE of a job, and a disable of its collection, wait out the
// request's time and answer 503. A worker back after that has the job and
// the collection take them past their deadline: they refuse them, so the
// job is as before, defined as it was, never run, not deleted, and the
// collection enabled, as their clients were told. A job that took writes
// past their deadline would take all three when the worker comes: the
// DELETE would delete a job its client was told is still there.
func TestAWriteAnswered503NeverHappens(t *testing.T) {
	s := newStack(t)
	target, got := newTarget(t)
	s.putCollection(t)
	const name = collectionPath + "/jobs/late"
	define := func(frequency string) map[string]any {
		return httpJob(target.URL+"/late", map[string]any{"frequency": frequency})
	}
	s.defineHeld(t, "late", define("Hour"))

	s.recur.StopWorkers()
	writes := []struct {
		method, path string
		body         any
	}{
		{http.MethodPut, name, define("Day")},
		{http.MethodPost, name + "/run", nil},
		{http.MethodDelete, name, nil},
		{http.MethodPost, collectionPath + "/disable", nil},
	}
	statuses := make([]int, len(writes))
	var wg sync.WaitGroup
	for i, w := range writes {
		wg.Go(func() {
			var body map[string]any
			statuses[i], body = s.do(t, w.method, w.path, w.body)
			t.Logf("%s %s: %d %v", w.method, w.path, statuses[i], body)
		})
	}
	wg.Wait()
	for i, w := range writes {
		require.Equal(t, http.StatusServiceUnavailable, statuses[i], "%s %s with no worker", w.method, w.path)
	}

	worker, err := s.recur.StartWorker(s.temporal.GetDefaultClient())
	require.NoError(t, err)
	t.Cleanup(worker.Stop)
	// The next PUT is taken after the three before it; the API answers 503
	// at once until it sees Temporal answer again.
	var (
		status int
		body   map[string]any
	)
	require.Eventually(t, func() bool {
		status, body = s.do(t, http.MethodPut, name, define("Hour"))
		return status != http.StatusServiceUnavailable
	}, 30*time.Second, time.Second)
	require.Equal(t, http.StatusOK, status, "the job is still there, not created again: %v", body)
	status, body = s.get(t, name, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "hour", path(body, "properties", "recurrence", "frequency"))
	require.Equal(t, "enabled", path(body, "properties", "state"), "the disable answered 503 never reached the job")
	runs, _ := path(body, "properties", "status", "executionCount").(float64)
	require.Zero(t, runs, "the run now answered 503 never ran")
	status, body = s.get(t, collectionPath, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "enabled", path(body, "properties", "state"), "the disable answered 503 never happened")
	select {
	case r := <-got:
		t.Fatalf("the target was called: %s", r.header.Get("Idempotency-Key"))
	case <-time.After(time.Second):
	}
}

// TestADeleteTakenInTimeAnswersItsOutcome: a DELETE the job takes at once,
// whose word to its collection is delivered only after the request's time
// (the server's delivery of the signal held, as a heavy burst holds it),
// is answered 200 once it is, not 503: the job is gone, as its client is
// told. Answered 503, its client would send it again and be told 404.
func TestADeleteTakenInTimeAnswersItsOutcome(t *testing.T) {
	s, holds := newHeldStack(t)
	const name = collectionPath + "/jobs/slow-delete"
	s.defineHeld(t, "slow-delete", httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"}))

	status, body := s.doPastTheRequest(t, holds.holdSignals(jobs.SignalMembership), http.MethodDelete, name,
		"the answer waited for the word held past the request's time")
	require.Equal(t, http.StatusOK, status, body)
	status, body = s.get(t, name, nil)
	require.Equal(t, http.StatusNotFound, status, body)
}

// TestAnOperationAcceptedInTimeAnswersItsOutcome: a collection's disable
// the workflow accepts at once, whose answer reaches the API only after
// the request's time (the server's answer held, as a heavy burst holds
// it), is answered as the operation it is, running (202; the test's
// client follows the Location to its 200), not 503: the collection and its
// job are disabled, as its client is told. Answered 503, its client would
// believe them enabled.
func TestAnOperationAcceptedInTimeAnswersItsOutcome(t *testing.T) {
	s, holds := newHeldStack(t)
	const name = collectionPath + "/jobs/told"
	s.defineHeld(t, "told", httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"}))

	status, body := s.doPastTheRequest(t, holds.holdAnswers(jobs.UpdateCollectionState), http.MethodPost, collectionPath+"/disable",
		"the answer waited for the acceptance held past the request's time")
	require.Equal(t, http.StatusOK, status, body)
	status, body = s.get(t, collectionPath, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "disabled", path(body, "properties", "state"))
	require.Eventually(t, func() bool {
		_, body := s.get(t, name, nil)
		return path(body, "properties", "state") == "disabled"
	}, 10*time.Second, 100*time.Millisecond, "the job is told")
}

// doPastTheRequest sends method path with a hold that release lifts a
// second past the request's time, requires the answer to come after that
// time (why says what it waited for), and returns it.
func (s *stack) doPastTheRequest(t *testing.T, release func(), method, path, why string) (int, map[string]any) {
	t.Helper()
	defer release()
	time.AfterFunc(api.RequestTimeout+time.Second, release)
	began := time.Now()
	status, body := s.do(t, method, path, nil)
	took := time.Since(began)
	t.Logf("%s %s: %d after %s", method, path, status, took.Round(time.Millisecond))
	require.Greater(t, took, api.RequestTimeout, why)
	return status, body
}
