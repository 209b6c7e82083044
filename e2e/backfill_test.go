package e2e

import (
	"bytes"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/jobs"
)

// TestBackfillThroughTheAPI: POST .../backfill over three past hours of
// an hourly job answers 202 with 3 queued; the target gets the three
// occurrences under the idempotency keys they would have had on time, and
// the history rows say backfill. A range past 1000 occurrences, one in
// the future and a missing job are refused, as is a backfill of a
// disabled job or of a job in a disabled collection.
func TestBackfillThroughTheAPI(t *testing.T) {
	s := newStack(t)
	target, got := newTarget(t)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	start := time.Now().UTC().Add(-5 * time.Hour).Truncate(time.Hour)
	job := httpJob(target.URL+"/backfilled", map[string]any{"frequency": "Hour"})
	job["properties"].(map[string]any)["startTime"] = start.Format(time.RFC3339)
	jobPath := collectionPath + "/jobs/hourly"
	status, body = s.do(t, http.MethodPut, jobPath, job)
	require.Equal(t, http.StatusCreated, status, body)

	status, body = s.do(t, http.MethodPost, jobPath+"/backfill", map[string]any{
		"startTime": start.Format(time.RFC3339), "endTime": start.Add(2 * time.Hour).Format(time.RFC3339)})
	require.Equal(t, http.StatusAccepted, status, body)
	require.EqualValues(t, 3, body["queued"])

	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "hourly"}
	var want, keys []string
	for i := range 3 {
		want = append(want, jobs.OccurrenceID(k.JobWorkflowID(), start.Add(time.Duration(i)*time.Hour)))
	}
	for range 3 {
		select {
		case r := <-got:
			keys = append(keys, r.header.Get(activities.HeaderIdempotencyKey))
		case <-time.After(30 * time.Second):
			t.Fatalf("the target got %d of 3 backfilled requests", len(keys))
		}
	}
	slices.Sort(keys)
	require.Equal(t, want, keys, "the keys the occurrences would have had on time")
	require.Eventually(t, func() bool {
		_, h := s.do(t, http.MethodGet, jobPath+"/history", nil)
		rows, _ := h["value"].([]any)
		n := 0
		for _, r := range rows {
			if path(r.(map[string]any), "properties", "backfill") == true {
				n++
			}
		}
		return n == 3
	}, 20*time.Second, 200*time.Millisecond, "three history rows say backfill")

	// A day of every-minute occurrences is more than 1000; before the
	// job's startTime there are none to run.
	dayAgo := time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Minute)
	minutely := httpJob(target.URL, map[string]any{"frequency": "Minute"})
	minutely["properties"].(map[string]any)["startTime"] = dayAgo.Format(time.RFC3339)
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/minutely", minutely)
	require.Equal(t, http.StatusCreated, status, body)
	status, body = s.do(t, http.MethodPost, collectionPath+"/jobs/minutely/backfill", map[string]any{
		"startTime": dayAgo.Format(time.RFC3339), "endTime": dayAgo.Add(20 * time.Hour).Format(time.RFC3339)})
	require.Equal(t, http.StatusBadRequest, status, "more than 1000: %v", body)
	require.Contains(t, path(body, "error", "message"), "more than 1000 occurrences")
	status, body = s.do(t, http.MethodPost, jobPath+"/backfill", map[string]any{
		"startTime": start.Add(-48 * time.Hour).Format(time.RFC3339), "endTime": start.Add(-time.Hour).Format(time.RFC3339)})
	require.Equal(t, http.StatusAccepted, status, body)
	require.EqualValues(t, 0, body["queued"], "none before the job's startTime")
	status, body = s.do(t, http.MethodPost, jobPath+"/backfill", map[string]any{
		"startTime": start.Format(time.RFC3339), "endTime": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	require.Equal(t, http.StatusBadRequest, status, "in the future: %v", body)
	status, _ = s.do(t, http.MethodPost, collectionPath+"/jobs/none/backfill", map[string]any{
		"startTime": start.Format(time.RFC3339), "endTime": start.Format(time.RFC3339)})
	require.Equal(t, http.StatusNotFound, status)

	// A disabled job, and a job of a disabled collection, run nothing:
	// their backfills are refused with 409.
	past := map[string]any{"startTime": start.Format(time.RFC3339), "endTime": start.Add(time.Hour).Format(time.RFC3339)}
	status, body = s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"state": "Disabled"}})
	require.Equal(t, http.StatusOK, status, body)
	status, body = s.do(t, http.MethodPost, jobPath+"/backfill", past)
	require.Equal(t, http.StatusConflict, status, body)
	require.Contains(t, path(body, "error", "message"), "job hourly is disabled")
	status, body = s.do(t, http.MethodPost, collectionPath+"/disable", nil)
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, status, body)
	status, body = s.do(t, http.MethodPost, collectionPath+"/jobs/minutely/backfill", past)
	require.Equal(t, http.StatusConflict, status, body)
	require.Contains(t, path(body, "error", "message"), "is disabled")
}

// TestABackfillIsNotABurst: a backfill of 8 occurrences of a job in a
// Free collection (at most hourly) reaches its target a pace apart, not
// at once: however busy the machine, the k-th call (from 0) arrives no
// sooner than k paces after the POST was sent, since each start waits out
// a durable timer from the one before. A second backfill past the
// subscription's budget is refused with 429 and Retry-After, and reaches
// nothing.
func TestABackfillIsNotABurst(t *testing.T) {
	const (
		pace  = 250 * time.Millisecond
		hours = 8
	)
	s := newStackWith(t, recurtest.Config{Backfill: api.BackfillLimits{Pace: pace,
		PerSubscription: api.RateLimit{PerSecond: 0.01, Burst: 10}}})
	var mu sync.Mutex
	arrived := map[string]time.Time{} // the first arrival of each occurrence
	target := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if key := r.Header.Get(activities.HeaderIdempotencyKey); arrived[key].IsZero() {
			arrived[key] = time.Now()
		}
		mu.Unlock()
	})
	t.Cleanup(target.Close)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{"sku": map[string]any{"name": "free"}}})
	require.Equal(t, http.StatusCreated, status, body)
	first := time.Now().UTC().Add(-60 * 24 * time.Hour).Truncate(time.Hour)
	job := httpJob(target.URL+"/burst", map[string]any{"frequency": "Hour"})
	job["properties"].(map[string]any)["startTime"] = first.Format(time.RFC3339)
	jobPath := collectionPath + "/jobs/hourly"
	status, body = s.do(t, http.MethodPut, jobPath, job)
	require.Equal(t, http.StatusCreated, status, body)

	from := first.Add(24 * time.Hour)
	rng := map[string]any{"startTime": from.Format(time.RFC3339), "endTime": from.Add((hours - 1) * time.Hour).Format(time.RFC3339)}
	// The workflow's clock and this one are the same machine's; the
	// slack is their rounding, far below a pace.
	const slack = 20 * time.Millisecond
	sent := time.Now()
	status, body = s.do(t, http.MethodPost, jobPath+"/backfill", rng)
	require.Equal(t, http.StatusAccepted, status, body)
	require.EqualValues(t, hours, body["queued"])
	last, err := time.Parse(time.RFC3339Nano, body["lastRunTime"].(string))
	require.NoError(t, err)
	require.False(t, last.Before(sent.Add((hours-1)*pace-slack)), "the last may start %d paces after the POST at the earliest: %v", hours-1, last.Sub(sent))

	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "hourly"}
	backfilled := func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		var out []time.Time
		for i := range hours {
			if at, ok := arrived[jobs.OccurrenceID(k.JobWorkflowID(), from.Add(time.Duration(i)*time.Hour))]; ok {
				out = append(out, at)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(backfilled()) == hours }, 2*time.Minute, 50*time.Millisecond,
		"the target got every backfilled occurrence")
	at := backfilled()
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	for i, a := range at {
		require.False(t, a.Before(sent.Add(time.Duration(i)*pace-slack)),
			"call %d of the backfill arrived %v after the POST, before %d paces: a burst", i, a.Sub(sent), i)
	}

	// 2 of the budget of 10 are left. A backfill the job's workflow
	// refuses gives back what it took.
	later := func(n, hours int) map[string]any {
		start := from.Add(time.Duration(n) * time.Hour)
		return map[string]any{"startTime": start.Format(time.RFC3339), "endTime": start.Add(time.Duration(hours-1) * time.Hour).Format(time.RFC3339)}
	}
	off := httpJob(target.URL+"/off", map[string]any{"frequency": "Hour"})
	off["properties"].(map[string]any)["startTime"] = first.Format(time.RFC3339)
	off["properties"].(map[string]any)["state"] = "Disabled"
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/off", off)
	require.Equal(t, http.StatusCreated, status, body)
	status, body = s.do(t, http.MethodPost, collectionPath+"/jobs/off/backfill", later(hours, 2))
	require.Equal(t, http.StatusConflict, status, body)
	status, body = s.do(t, http.MethodPost, jobPath+"/backfill", later(hours, 2))
	require.Equal(t, http.StatusAccepted, status, "the refused backfill took nothing: %v", body)
	req, err := http.NewRequest(http.MethodPost, s.api.URL+jobPath+"/backfill?api-version=2016-03-01", bytes.NewReader(mustJSON(t, later(hours+2, hours))))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "8 more of a budget used up")
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
}
