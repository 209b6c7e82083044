package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/recurhq/recur/jobs"
)

// filtered is a job list's query with $filter f.
func filtered(f string) url.Values { return url.Values{"$filter": {f}} }

// acrossPath lists the jobs of every collection of sub1 (recur's
// extension).
const acrossPath = "/recur/v1/subscriptions/sub1/jobs"

// qualifiedNames returns the "collection/job" names of a job list answer.
func qualifiedNames(t testing.TB, body map[string]any) []string {
	t.Helper()
	value, ok := body["value"].([]any)
	require.True(t, ok, "value is an array: %v", body)
	out := []string{}
	for _, v := range value {
		out = append(out, v.(map[string]any)["name"].(string))
	}
	return out
}

// status returns a job's properties.status as GET answers it.
func (s *stack) status(t *testing.T, name string) map[string]any {
	t.Helper()
	code, body := s.do(t, http.MethodGet, collectionPath+"/jobs/"+name, nil)
	require.Equal(t, http.StatusOK, code, body)
	return path(body, "properties", "status").(map[string]any)
}

// ranTimes waits until the job's status counts n runs.
func (s *stack) ranTimes(t *testing.T, name string, n int) map[string]any {
	t.Helper()
	var st map[string]any
	require.Eventually(t, func() bool {
		st = s.status(t, name)
		return st["executionCount"] == float64(n)
	}, 30*time.Second, 100*time.Millisecond, "job %s ran %d times: %v", name, n, st)
	return st
}

// TestDisableAfterFailuresOnTheRealStack: a job whose target fails is
// disabled after disableAfterFailures failed runs in a row, with the last
// error as its stateReason, and the failing filters list it; once its
// target recovers, enabling it restarts the streak, it leaves those lists,
// and its next run is a success.
func TestDisableAfterFailuresOnTheRealStack(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	var failing atomic.Bool
	failing.Store(true)
	target := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("upstream down"))
		}
	})
	t.Cleanup(target.Close)
	s.putCollection(t)
	job := httpJob(target.URL+"/flaky", map[string]any{"frequency": "Hour"})
	props := job["properties"].(map[string]any)
	props["disableAfterFailures"] = 3
	props["action"].(map[string]any)["retryPolicy"] = map[string]any{"retryType": "None"}
	for _, name := range []string{"flaky", "fine"} {
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/"+name, job)
		require.Equal(t, http.StatusCreated, status, body)
		require.EqualValues(t, 3, path(body, "properties", "disableAfterFailures"))
	}
	for i := 1; i <= 3; i++ {
		status, body := s.do(t, http.MethodPost, collectionPath+"/jobs/flaky/run", nil)
		require.Equal(t, http.StatusOK, status, body)
		st := s.ranTimes(t, "flaky", i)
		require.EqualValues(t, i, st["consecutiveFailures"])
	}
	status, body := s.do(t, http.MethodGet, collectionPath+"/jobs/flaky", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "disabled", path(body, "properties", "state"))
	_, history := s.get(t, collectionPath+"/jobs/flaky/history", nil)
	rows := historyRows(t, history)
	require.Len(t, rows, 3)
	require.Contains(t, rows[0]["message"], "502 Bad Gateway")
	require.Equal(t, "disabled after 3 consecutive failures: "+rows[0]["message"].(string), path(body, "properties", "stateReason"),
		"the last error, as its history row says it")
	for _, r := range rows {
		require.NotContains(t, r, "lateness", "a run now has no lateness")
	}
	st := path(body, "properties", "status").(map[string]any)
	require.EqualValues(t, 3, st["faultedCount"])
	require.NotContains(t, st, "lastSuccessTime")

	s.listEventually(t, collectionPath+"/jobs", filtered("consecutiveFailures ge 3"), jobNames, []string{"flaky"})
	s.listEventually(t, collectionPath+"/jobs", filtered("state eq 'Disabled' and consecutiveFailures gt 2"), jobNames, []string{"flaky"})
	s.listEventually(t, acrossPath, filtered("unhealthy"), qualifiedNames, []string{"coll1/flaky"})
	_, body = s.get(t, collectionPath+"/jobs", filtered("consecutiveFailures ge 4"))
	require.Empty(t, jobNames(t, body))
	require.Equal(t, []string{"job:sub1/rg1/coll1/flaky"}, s.visible(t, "RecurFailingSince IS NOT NULL"))

	failing.Store(false)
	status, body = s.do(t, http.MethodPatch, collectionPath+"/jobs/flaky", map[string]any{"properties": map[string]any{"state": "Enabled"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "enabled", path(body, "properties", "state"))
	require.Nil(t, path(body, "properties", "stateReason"))
	require.EqualValues(t, 0, path(body, "properties", "status", "consecutiveFailures"), "enabling restarts the streak")
	require.EqualValues(t, 3, path(body, "properties", "status", "faultedCount"))
	s.listEventually(t, collectionPath+"/jobs", filtered("consecutiveFailures ge 1"), jobNames, []string{})
	require.Empty(t, s.visible(t, "RecurFailingSince IS NOT NULL"), "the enabling unset RecurFailingSince")

	status, body = s.do(t, http.MethodPost, collectionPath+"/jobs/flaky/run", nil)
	require.Equal(t, http.StatusOK, status, body)
	st = s.ranTimes(t, "flaky", 4)
	require.EqualValues(t, 0, st["consecutiveFailures"])
	require.NotEmpty(t, st["lastSuccessTime"])
}

// visible returns the running job workflows the visibility query finds.
func (s *stack) visible(t *testing.T, query string) []string {
	t.Helper()
	var ids []string
	require.Eventually(t, func() bool {
		resp, err := s.temporal.GetDefaultClient().ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: "RecurKind = 'job' AND ExecutionStatus = 'Running' AND " + query})
		if err != nil {
			return false
		}
		ids = nil
		for _, e := range resp.GetExecutions() {
			ids = append(ids, e.GetExecution().GetWorkflowId())
		}
		slices.Sort(ids)
		return true
	}, 10*time.Second, 100*time.Millisecond)
	return ids
}

// TestMissedAndLateOccurrencesWhileTheWorkerIsStopped: with every worker
// stopped over their occurrence, a job whose catch-up window the outage
// outlasts misses it (a Postponed row, missedCount, lastMissedTime), and
// one whose window covers it runs it late (lastLateness, its row's
// lateness); the health filters find each.
func TestMissedAndLateOccurrencesWhileTheWorkerIsStopped(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	target, got := newTarget(t)
	s.putCollection(t)
	const outage = 5 * time.Second
	start := time.Now().UTC().Add(8 * time.Second).Truncate(time.Second)
	for name, window := range map[string]string{"missed": "PT1S", "late": "PT1M"} {
		job := httpJob(target.URL+"/"+name, map[string]any{"frequency": "Minute"})
		job["properties"].(map[string]any)["startTime"] = start.Format(time.RFC3339)
		job["properties"].(map[string]any)["catchUpWindow"] = window
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/"+name, job)
		require.Equal(t, http.StatusCreated, status, body)
	}
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/idle", httpJob(target.URL+"/idle", map[string]any{"frequency": "Hour"}))
	require.Equal(t, http.StatusCreated, status, body)
	require.True(t, time.Now().Before(start), "the jobs were created before their occurrence")

	s.recur.StopWorkers()
	time.Sleep(time.Until(start.Add(outage))) // recur is down over the occurrence
	w, err := s.recur.StartWorker(s.temporal.GetDefaultClient())
	require.NoError(t, err)
	t.Cleanup(w.Stop)

	select {
	case r := <-got:
		require.Equal(t, "job:sub1/rg1/coll1/late@"+start.Format(time.RFC3339), r.header.Get("Idempotency-Key"))
	case <-time.After(40 * time.Second):
		t.Fatal("the late job did not run its occurrence")
	}
	late := s.ranTimes(t, "late", 1)
	lateness, err := jobs.ParseInterval(late["lastLateness"].(string))
	require.NoError(t, err, late)
	require.GreaterOrEqual(t, lateness, outage-time.Second, "it started after the outage: %v", late)
	require.EqualValues(t, 0, late["missedCount"])
	require.NotContains(t, late, "lastMissedTime")
	_, history := s.get(t, collectionPath+"/jobs/late/history", nil)
	rows := historyRows(t, history)
	require.Len(t, rows, 1)
	require.Equal(t, late["lastLateness"], rows[0]["lateness"], "its row's lateness is the status's")
	started, err := time.Parse(time.RFC3339Nano, rows[0]["startTime"].(string))
	require.NoError(t, err)
	require.InDelta(t, started.Sub(start).Seconds(), lateness.Seconds(), 1, "start against nominal time: %v", rows[0])

	var missed map[string]any
	require.Eventually(t, func() bool {
		missed = s.status(t, "missed")
		return missed["missedCount"] == float64(1)
	}, 30*time.Second, 100*time.Millisecond, "the occurrence was missed: %v", missed)
	require.Equal(t, start.Format(time.RFC3339), missed["lastMissedTime"])
	require.EqualValues(t, 0, missed["postponedCount"])
	require.EqualValues(t, 0, missed["executionCount"])
	require.NotContains(t, missed, "lastLateness")
	_, history = s.get(t, collectionPath+"/jobs/missed/history", nil)
	rows = historyRows(t, history)
	require.Len(t, rows, 1)
	require.Equal(t, "Postponed", rows[0]["status"])
	require.Contains(t, rows[0]["message"], "more than the catch-up window of 1s")
	require.NotContains(t, rows[0], "lateness")

	since := start.Format(time.RFC3339)
	s.listEventually(t, collectionPath+"/jobs", filtered("lastMissedTime ge "+since), jobNames, []string{"missed"})
	s.listEventually(t, collectionPath+"/jobs", filtered("lastLateness gt duration'PT3S'"), jobNames, []string{"late"})
	s.listEventually(t, collectionPath+"/jobs", filtered("unhealthy"), jobNames, []string{"missed"})
	s.listEventually(t, acrossPath, filtered("lastMissedTime ge "+since), qualifiedNames, []string{"coll1/missed"})
	s.listEventually(t, collectionPath+"/jobs", filtered("lastSuccessTime lt "+since), jobNames, []string{"idle", "missed"})
	for _, f := range []string{"lastLateness gt duration'PT1M'", "lastMissedTime gt " + since, "consecutiveFailures ge 1"} {
		status, body := s.get(t, collectionPath+"/jobs", filtered(f))
		require.Equal(t, http.StatusOK, status, "%s: %v", f, body)
		require.Empty(t, jobNames(t, body), f)
	}
	require.Equal(t, []string{"job:sub1/rg1/coll1/missed"}, s.visible(t, fmt.Sprintf("RecurLastMissed >= '%s'", since)))
}

// TestAnOccurrenceDueWhileARunRunsIsPostponed: an occurrence that falls
// due while a run now still runs is postponed (overlapPolicy Skip), not
// missed: postponedCount, and lastMissedTime is its nominal time.
func TestAnOccurrenceDueWhileARunRunsIsPostponed(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	release := make(chan struct{})
	var held atomic.Int32
	target := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		held.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(target.Close)
	t.Cleanup(func() { close(release) })
	s.putCollection(t)
	start := time.Now().UTC().Add(8 * time.Second).Truncate(time.Second)
	job := httpJob(target.URL, map[string]any{"frequency": "Hour"})
	job["properties"].(map[string]any)["startTime"] = start.Format(time.RFC3339)
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/busy", job)
	require.Equal(t, http.StatusCreated, status, body)
	status, body = s.do(t, http.MethodPost, collectionPath+"/jobs/busy/run", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Eventually(t, func() bool { return held.Load() == 1 }, 10*time.Second, 50*time.Millisecond, "the run now runs")
	require.True(t, time.Now().Before(start), "the run now runs when the occurrence falls due")

	var st map[string]any
	require.Eventually(t, func() bool {
		st = s.status(t, "busy")
		return st["postponedCount"] == float64(1)
	}, time.Until(start)+30*time.Second, 200*time.Millisecond, "the occurrence was postponed: %v", st)
	require.EqualValues(t, 0, st["missedCount"])
	require.Equal(t, start.Format(time.RFC3339), st["lastMissedTime"])
	_, history := s.get(t, collectionPath+"/jobs/busy/history", nil)
	rows := historyRows(t, history)
	require.Len(t, rows, 1)
	require.Equal(t, "the previous run was still running (overlapPolicy Skip)", rows[0]["message"])
	s.listEventually(t, collectionPath+"/jobs", filtered("lastMissedTime ge "+start.Format(time.RFC3339)), jobNames, []string{"busy"})
	require.EqualValues(t, 1, held.Load(), "the occurrence sent nothing")
}

// TestHealthFiltersPageAcrossCollections: on the real store, where the
// search attributes narrow the query, a filtered list of the
// subscription's jobs and one of a collection's page one job at a time
// through every job the filter selects, each once, in order.
func TestHealthFiltersPageAcrossCollections(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	target := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "fail") {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	t.Cleanup(target.Close)
	var want []string
	for _, coll := range []struct{ rg, name string }{{"rg1", "coll1"}, {"rg2", "coll2"}} {
		collPath := "/subscriptions/sub1/resourceGroups/" + coll.rg + "/providers/Microsoft.Scheduler/jobCollections/" + coll.name
		status, body := s.do(t, http.MethodPut, collPath, map[string]any{"location": "westus",
			"properties": map[string]any{"sku": map[string]any{"name": "standard"}}})
		require.Equal(t, http.StatusCreated, status, body)
		for i := range 6 {
			name := fmt.Sprintf("ok-%d", i)
			if i%3 != 0 {
				name = fmt.Sprintf("fail-%d", i)
				want = append(want, coll.name+"/"+name)
			}
			job := httpJob(target.URL+"/"+name, map[string]any{"frequency": "Hour"})
			job["properties"].(map[string]any)["action"].(map[string]any)["retryPolicy"] = map[string]any{"retryType": "None"}
			status, body := s.do(t, http.MethodPut, collPath+"/jobs/"+name, job)
			require.Equal(t, http.StatusCreated, status, body)
			status, body = s.do(t, http.MethodPost, collPath+"/jobs/"+name+"/run", nil)
			require.Equal(t, http.StatusOK, status, body)
		}
	}
	s.listEventually(t, acrossPath, filtered("consecutiveFailures ge 1"), qualifiedNames, want)

	follow := func(path string, query url.Values) [][]string {
		var pages [][]string
		status, body := s.get(t, path, query)
		for {
			require.Equal(t, http.StatusOK, status, body)
			pages = append(pages, qualifiedNames(t, body))
			next, ok := body["nextLink"].(string)
			if !ok {
				return pages
			}
			require.Less(t, len(pages), 20, "a nextLink that does not end")
			status, body = getURL(t, next)
		}
	}
	query := filtered("consecutiveFailures ge 1")
	query.Set("$top", "1")
	pages := follow(acrossPath, query)
	assert.Equal(t, want, slices.Concat(pages...), "every failing job once, in order: %v", pages)
	assert.Len(t, pages, len(want), "one a page")
	query.Set("$top", "3")
	pages = follow("/recur/v1/subscriptions/sub1/resourceGroups/rg2/jobs", query)
	assert.Equal(t, [][]string{want[4:7], want[7:]}, pages)
	query.Set("$top", "2")
	pages = follow(collectionPath+"/jobs", query)
	assert.Equal(t, [][]string{want[0:2], want[2:4]}, pages)
}
