package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/jobs"
)

// everySeconds is a Second recurrence of n seconds.
func everySeconds(n int) map[string]any {
	return map[string]any{"frequency": "Second", "interval": n}
}

// secondsQuota is a Standard collection that allows jobs down to a
// second (recur's Second unit of maxRecurrence).
var secondsQuota = map[string]any{"properties": map[string]any{"sku": map[string]any{"name": "Standard"},
	"quota": map[string]any{"maxRecurrence": map[string]any{"frequency": "Second", "interval": 1}}}}

// TestSecondsJobsMeetTheFloorAndTheQuota: a Second job or a six-field
// cron runs when its collection's maxRecurrence allows it and it comes no
// closer than the operator's floor (10 s by default): a 409 QuotaExceeded
// for the quota, as for any job, and a 400 naming --min-interval for the
// floor, on PUT, on a what-if PUT and on PATCH. A floor raised later
// leaves a job admitted before running, and takes a PUT or PATCH that
// leaves its schedule alone.
func TestSecondsJobsMeetTheFloorAndTheQuota(t *testing.T) {
	s := newStack(t)
	s.putCollection(t)
	_, coll := s.do(t, http.MethodGet, collectionPath, nil)
	require.Equal(t, map[string]any{"frequency": "Minute", "interval": float64(1)}, path(coll, "properties", "quota", "maxRecurrence"),
		"a Standard collection's default is Azure's")
	target, got := newTarget(t)
	jobPath := collectionPath + "/jobs/ten"

	status, body := s.do(t, http.MethodPut, jobPath, httpJob(target.URL, everySeconds(10)))
	require.Equal(t, http.StatusConflict, status, body)
	require.Equal(t, "QuotaExceeded", path(body, "error", "code"))

	status, body = s.do(t, http.MethodPut, collectionPath, secondsQuota)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "Second", path(body, "properties", "quota", "maxRecurrence", "frequency"))

	for _, rec := range []map[string]any{everySeconds(5), {"cron": "*/5 * * * * *"}} {
		status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/five", httpJob(target.URL, rec))
		require.Equal(t, http.StatusBadRequest, status, "%v: %v", rec, body)
		require.Equal(t, "properties.recurrence", path(body, "error", "target"))
		require.Equal(t, "the job runs as often as every 5 seconds, but this server runs a job at most once every 10 seconds (its operator's --min-interval)",
			path(body, "error", "message"))
	}
	status, _, _, body = s.putApplying(t, collectionPath+"/jobs/five", httpJob(target.URL, everySeconds(5)), string(jobs.ApplyWhatIf))
	require.Equal(t, http.StatusBadRequest, status, "a what-if PUT meets the floor too: %v", body)

	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/cron", httpJob(target.URL, map[string]any{"cron": "*/10 * * * * *"}))
	require.Equal(t, http.StatusCreated, status, body)
	require.Equal(t, "*/10 * * * * *", path(body, "properties", "recurrence", "cron"))
	job := httpJob(target.URL, everySeconds(10))
	job["properties"].(map[string]any)["startTime"] = time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
	status, body = s.do(t, http.MethodPut, jobPath, job)
	require.Equal(t, http.StatusCreated, status, body)
	require.Equal(t, "second", path(body, "properties", "recurrence", "frequency"), "written back lower-case, as Azure's frequencies are")

	// Another API on the same Temporal, its floor raised to 30 s.
	raised := httptest.NewServer(api.New(s.temporal.GetDefaultClient(), api.Options{Namespace: s.temporal.GetDefaultNamespace(),
		DataConverter: codec.DataConverter(s.recur.Keys), MinInterval: 30 * time.Second}))
	t.Cleanup(raised.Close)
	r := &stack{api: raised, temporal: s.temporal, recur: s.recur}
	raisedAt := time.Now().UTC()
	status, body = r.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"action": map[string]any{
		"request": map[string]any{"uri": target.URL + "/patched"}}}})
	require.Equal(t, http.StatusOK, status, "a PATCH that leaves the schedule alone: %v", body)
	status, body = r.do(t, http.MethodPut, jobPath, job)
	require.Equal(t, http.StatusOK, status, "a PUT of the same schedule: %v", body)
	status, body = r.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"recurrence": map[string]any{"interval": 20}}})
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, path(body, "error", "message"), "at most once every 30 seconds")
	status, body = r.do(t, http.MethodPut, collectionPath+"/jobs/new", job)
	require.Equal(t, http.StatusBadRequest, status, "a new job meets the raised floor: %v", body)

	// The job admitted before the floor was raised runs on: two of its
	// occurrences due since arrive (the cron job calls the target too).
	deadline := time.After(40 * time.Second)
	for seen := 0; seen < 2; {
		select {
		case r := <-got:
			due, err := time.Parse(time.RFC3339, r.header.Get("x-ms-scheduler-expected-execution-time"))
			require.NoError(t, err)
			if strings.Contains(r.header.Get("Idempotency-Key"), "/ten@") && due.After(raisedAt) {
				seen++
			}
		case <-deadline:
			t.Fatal("the job admitted before the floor was raised stopped running")
		}
	}
	_, body = s.do(t, http.MethodGet, jobPath, nil)
	require.Equal(t, "enabled", path(body, "properties", "state"))

	t.Run("a Free collection allows no Second quota", func(t *testing.T) {
		status, body := s.do(t, http.MethodPut, rg1Path+"/free", map[string]any{"properties": map[string]any{"sku": map[string]any{"name": "Free"},
			"quota": map[string]any{"maxRecurrence": map[string]any{"frequency": "second", "interval": 30}}}})
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Equal(t, "properties.quota.maxRecurrence", path(body, "error", "target"))
	})
}
