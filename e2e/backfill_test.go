package e2e

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/activities"
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
