package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// putApplying sends a PUT with the Recur-Apply header apply ("" for none)
// and returns the status, the Recur-Outcome and ETag headers, and the body.
func (s *stack) putApplying(t *testing.T, path string, body any, apply string) (status int, outcome, etag string, out map[string]any) {
	t.Helper()
	status, header, out := s.putWithHeaders(t, path, body, apply)
	return status, header.Get("Recur-Outcome"), header.Get("ETag"), out
}

// putWithHeaders is putApplying with every header of the answer.
func (s *stack) putWithHeaders(t *testing.T, path string, body any, apply string) (status int, header http.Header, out map[string]any) {
	t.Helper()
	data, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPut, s.api.URL+path+"?api-version=2016-03-01", bytes.NewReader(data))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if apply != "" {
		req.Header.Set("Recur-Apply", apply)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, resp.Header, out
}

// TestRecurApplyWritesOnlyWhatChanged: a PUT with Recur-Apply: if-changed
// writes nothing when the definition is the stored one, secrets included
// (the job's workflow compares them: the API never sees a stored secret),
// and one with what-if never writes and says what a PUT would do. Writing
// nothing means no event in the workflow's history, and the ETag stays.
func TestRecurApplyWritesOnlyWhatChanged(t *testing.T) {
	s := newStack(t)
	c := s.temporal.GetDefaultClient()
	// length is the history's length once the workflow has no task to
	// run: what its first task writes is not a PUT's doing.
	length := func(id string) int64 {
		var n int64
		require.Eventually(t, func() bool {
			d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
			require.NoError(t, err)
			n = d.GetWorkflowExecutionInfo().GetHistoryLength()
			return d.GetPendingWorkflowTask() == nil
		}, 10*time.Second, 20*time.Millisecond)
		return n
	}
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "guarded"}
	jobPath := collectionPath + "/jobs/" + k.Job
	coll := map[string]any{"location": "westeurope", "properties": map[string]any{"sku": map[string]any{"name": "Standard"}}}

	status, outcome, _, body := s.putApplying(t, jobPath, httpJob("https://example.com/", nil), "what-if")
	require.Equal(t, http.StatusNotFound, status, "a job's what-if in a collection that does not exist: %v", body)
	require.Equal(t, jobs.CodeCollectionMissing, path(body, "error", "code"))

	status, outcome, _, body = s.putApplying(t, collectionPath, coll, "what-if")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, jobs.OutcomeCreated, outcome)
	status, _ = s.do(t, http.MethodGet, collectionPath, nil)
	require.Equal(t, http.StatusNotFound, status, "a what-if PUT creates nothing")

	status, outcome, collTag, body := s.putApplying(t, collectionPath, coll, "if-changed")
	require.Equal(t, http.StatusCreated, status, body)
	require.Equal(t, jobs.OutcomeCreated, outcome)
	collLength := length(k.CollectionWorkflowID())
	status, outcome, tag, body := s.putApplying(t, collectionPath, coll, "if-changed")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, jobs.OutcomeUnchanged, outcome)
	require.Equal(t, collTag, tag, "an unchanged collection keeps its ETag")
	require.Equal(t, "westeurope", body["location"], "the answer is the collection")
	changed := map[string]any{"location": "westeurope", "properties": map[string]any{"sku": map[string]any{"name": "Standard"},
		"quota": map[string]any{"maxJobCount": 7}}}
	_, outcome, _, _ = s.putApplying(t, collectionPath, changed, "what-if")
	require.Equal(t, jobs.OutcomeUpdated, outcome)
	require.Equal(t, collLength, length(k.CollectionWorkflowID()), "neither PUT wrote to the collection's history")

	target, _ := newTarget(t)
	// One start time for every PUT of the job: httpJob's is an hour from
	// the second it is called in, and a PUT a second later would be
	// another definition.
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second).Format(time.RFC3339)
	withPassword := func(password string) map[string]any {
		job := httpJob(target.URL, map[string]any{"frequency": "Hour"})
		job["properties"].(map[string]any)["startTime"] = start
		job["properties"].(map[string]any)["action"].(map[string]any)["request"].(map[string]any)["authentication"] =
			map[string]any{"type": "Basic", "username": "user1", "password": password}
		return job
	}
	status, outcome, _, body = s.putApplying(t, jobPath, withPassword("first secret"), "what-if")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, jobs.OutcomeCreated, outcome)
	require.Nil(t, path(body, "properties", "action", "request", "authentication", "password"), "a what-if answer shows no secret")
	status, _ = s.do(t, http.MethodGet, jobPath, nil)
	require.Equal(t, http.StatusNotFound, status, "a what-if PUT creates no job")

	status, outcome, jobTag, body := s.putApplying(t, jobPath, withPassword("first secret"), "if-changed")
	require.Equal(t, http.StatusCreated, status, body)
	require.Equal(t, jobs.OutcomeCreated, outcome)
	var jobLength int64
	for i, apply := range []string{"if-changed", "what-if"} {
		status, outcome, tag, body = s.putApplying(t, jobPath, withPassword("first secret"), apply)
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, jobs.OutcomeUnchanged, outcome, apply)
		require.Equal(t, jobTag, tag, "%s: an unchanged job keeps its ETag", apply)
		if i == 0 {
			// The new job's start delays its first workflow task until a
			// write or shortly before it is due (api firstTaskDelay): the
			// unchanged PUT runs that task, whose events are the job's own.
			jobLength = length(k.JobWorkflowID())
		}
	}
	status, outcome, _, body = s.putApplying(t, jobPath, withPassword("second secret"), "what-if")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, jobs.OutcomeUpdated, outcome, "a new password alone is a change")
	require.Equal(t, jobLength, length(k.JobWorkflowID()), "no PUT so far wrote to the job's history")

	status, outcome, tag, body = s.putApplying(t, jobPath, withPassword("second secret"), "if-changed")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, jobs.OutcomeUpdated, outcome)
	require.NotEqual(t, jobTag, tag, "a change gets a new ETag")
	require.Greater(t, length(k.JobWorkflowID()), jobLength)
	_, outcome, _, _ = s.putApplying(t, jobPath, withPassword("second secret"), "")
	require.Equal(t, jobs.OutcomeUpdated, outcome, "a PUT without Recur-Apply writes, changed or not")

	status, _, _, body = s.putApplying(t, jobPath, withPassword("second secret"), "sometimes")
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "Recur-Apply", path(body, "error", "target"))
}

// TestWhatIfChecksTheCollectionAsTheAdmissionWould: a what-if PUT of a job
// answers what the PUT itself would, the collection's quotas included: a
// job that runs more often than the collection's maxRecurrence is refused,
// so is a new job in a full collection, and the answer counts the
// collection's jobs (Recur-Collection-Jobs), so that a client adding many
// jobs (recur import) checks the quota for them all.
func TestWhatIfChecksTheCollectionAsTheAdmissionWould(t *testing.T) {
	s := newStack(t)
	coll := map[string]any{"properties": map[string]any{"sku": map[string]any{"name": "Standard"},
		"quota": map[string]any{"maxJobCount": 1, "maxRecurrence": map[string]any{"frequency": "Hour", "interval": 1}}}}
	status, _, _, body := s.putApplying(t, collectionPath, coll, "")
	require.Equal(t, http.StatusCreated, status, body)
	hourly := httpJob("https://example.com/", map[string]any{"frequency": "Hour"})
	everyMinute := httpJob("https://example.com/", map[string]any{"frequency": "Minute"})

	whatIf := func(job string, body any) (int, string, string, map[string]any) {
		t.Helper()
		status, header, out := s.putWithHeaders(t, collectionPath+"/jobs/"+job, body, "what-if")
		return status, header.Get("Recur-Outcome"), header.Get("Recur-Collection-Jobs"), out
	}

	status, _, _, body = whatIf("often", everyMinute)
	require.Equal(t, http.StatusConflict, status, body)
	require.Equal(t, jobs.CodeQuotaExceeded, path(body, "error", "code"))
	require.Equal(t, "properties.recurrence", path(body, "error", "target"))
	status, real := s.do(t, http.MethodPut, collectionPath+"/jobs/often", everyMinute)
	require.Equal(t, http.StatusConflict, status, "the PUT itself is refused the same way: %v", real)
	require.Equal(t, path(body, "error"), path(real, "error"))

	status, outcome, held, body := whatIf("first", hourly)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, jobs.OutcomeCreated, outcome)
	require.Equal(t, "0", held)
	status, _ = s.do(t, http.MethodPut, collectionPath+"/jobs/first", hourly)
	require.Equal(t, http.StatusCreated, status)

	status, _, _, body = whatIf("second", hourly)
	require.Equal(t, http.StatusConflict, status, body)
	require.Equal(t, "properties.quota.maxJobCount", path(body, "error", "target"))
	status, real = s.do(t, http.MethodPut, collectionPath+"/jobs/second", hourly)
	require.Equal(t, http.StatusConflict, status, "the PUT itself is refused the same way: %v", real)
	require.Equal(t, path(body, "error"), path(real, "error"))

	changed := httpJob("https://example.com/changed", map[string]any{"frequency": "Hour"})
	status, outcome, held, body = whatIf("first", changed)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, jobs.OutcomeUpdated, outcome, "a job the full collection holds is updated")
	require.Equal(t, "1", held)
	status, _, _, body = whatIf("first", everyMinute)
	require.Equal(t, http.StatusConflict, status, "a redefinition is held to maxRecurrence too: %v", body)
}
