package e2e

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/recurhq/recur/jobs"
)

// TestAnOccurrenceDueBeforeARedefinitionIsTakenRuns: no worker runs
// across an occurrence, and a PUT that moves the job's schedule off that
// time comes after it fell due; once a worker is back, its first task of
// the job has the timer fired and the PUT, as a task that waited behind a
// burst has. The occurrence, due before the PUT was accepted, runs under
// the definition it fell due in, once; the new schedule plans from the PUT
// on. The SDK may run the PUT's handler before the loop sees the timer: a
// redefinition taken first plans past the occurrence, neither run nor
// counted.
func TestAnOccurrenceDueBeforeARedefinitionIsTakenRuns(t *testing.T) {
	s := newStack(t)
	target, got := newTarget(t)
	s.putCollection(t)
	start := time.Now().UTC().Add(8 * time.Second).Truncate(time.Second)
	define := func(schedule map[string]any) map[string]any {
		recurrence := map[string]any{"frequency": "Hour"}
		if schedule != nil {
			recurrence["schedule"] = schedule
		}
		job := httpJob(target.URL+"/due", recurrence)
		job["properties"].(map[string]any)["startTime"] = start.Format(time.RFC3339)
		return job
	}
	const name = collectionPath + "/jobs/due"
	status, body := s.do(t, http.MethodPut, name, define(nil))
	require.Equal(t, http.StatusCreated, status, body)
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "due"}
	// No timer has fired yet: the window is the whole history.
	require.Eventually(t, func() bool {
		return slices.Contains(s.lastOccurrence(t, k.JobWorkflowID()), enumspb.EVENT_TYPE_TIMER_STARTED)
	},
		5*time.Second, 50*time.Millisecond, "the job's first task set its timer")

	s.recur.StopWorkers()
	time.Sleep(time.Until(start.Add(2 * time.Second))) // the timer fires with no worker
	type answer struct {
		status int
		body   map[string]any
	}
	answered := make(chan answer, 1)
	go func() {
		var a answer
		defer func() { answered <- a }() // also when s.do fails the test
		a.status, a.body = s.do(t, http.MethodPut, name, define(map[string]any{"minutes": []int{(start.Minute() + 30) % 60}}))
	}()
	time.Sleep(2 * time.Second) // the PUT waits for a worker
	w, err := s.recur.StartWorker(s.temporal.GetDefaultClient())
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	a := <-answered
	require.Equal(t, http.StatusOK, a.status, a.body)

	select {
	case r := <-got:
		require.Equal(t, "job:sub1/rg1/coll1/due@"+start.Format(time.RFC3339), r.header.Get("Idempotency-Key"))
	case <-time.After(30 * time.Second):
		t.Fatal("the occurrence due before the PUT was taken never ran")
	}
	st := s.ranTimes(t, "due", 1)
	require.EqualValues(t, 0, st["missedCount"], st)
	select {
	case r := <-got:
		t.Fatalf("a second request: %s", r.header.Get("Idempotency-Key"))
	case <-time.After(time.Second):
	}
}
