package e2e

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
)

// failuresSigning and failuresPassword are the secrets of the jobs
// putFailingJob puts: no answer may show them.
var failuresSigning = "whsec_" + base64.StdEncoding.EncodeToString([]byte("failures signing key, 32 bytes!"))

const failuresPassword = "fail-pa55word-e1c9"

// call is a request a fixable target got.
type call struct {
	webhookID, idempotencyKey string
}

// fixableTarget answers 500, with a Retry-After header and a body, until
// fixed; then 200. It keeps each call's webhook-id.
type fixableTarget struct {
	url   string
	fixed atomic.Bool
	mu    sync.Mutex
	calls []call
}

func newFixableTarget(t *testing.T) *fixableTarget {
	f := &fixableTarget{}
	srv := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.calls = append(f.calls, call{webhookID: r.Header.Get(jobs.HeaderWebhookID), idempotencyKey: r.Header.Get(activities.HeaderIdempotencyKey)})
		f.mu.Unlock()
		if f.fixed.Load() {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("down for maintenance " + strings.Repeat("z", 2000)))
	})
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *fixableTarget) got() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

// failureEntries returns the entries of a failures answer.
func failureEntries(t *testing.T, body map[string]any) []map[string]any {
	t.Helper()
	value, ok := body["value"].([]any)
	require.True(t, ok, "value is an array: %v", body)
	out := make([]map[string]any, len(value))
	for i, v := range value {
		out[i] = v.(map[string]any)
	}
	return out
}

// putFailingJob puts a job that runs every hour from start, signs its
// calls and authenticates with Basic, without retries.
func putFailingJob(t *testing.T, s *stack, name, target string, start time.Time) {
	t.Helper()
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/"+name, map[string]any{"properties": map[string]any{
		"startTime":  start.Format(time.RFC3339),
		"recurrence": map[string]any{"frequency": "Hour"},
		"action": map[string]any{
			"type": "Http",
			"request": map[string]any{"uri": target + "/hook", "method": "POST", "body": "{}",
				"authentication": map[string]any{"type": "Basic", "username": "user1", "password": failuresPassword},
				"signing":        map[string]any{"secrets": []string{failuresSigning}}},
			"retryPolicy": map[string]any{"retryType": "None"},
		},
	}})
	require.Equal(t, http.StatusCreated, status, body)
}

// requireNoFailureSecret checks an answer shows neither secret of the job.
func requireNoFailureSecret(t *testing.T, body map[string]any) {
	t.Helper()
	data, err := json.Marshal(body)
	require.NoError(t, err)
	require.NotContains(t, string(data), failuresPassword)
	require.NotContains(t, string(data), failuresSigning)
	require.NotContains(t, string(data), strings.TrimPrefix(failuresSigning, "whsec_"))
	require.NotContains(t, string(data), `"password"`)
}

// TestFailedRunsAreListed: a job whose target answers 503 keeps its
// failed occurrence, listed with its nominal time, its last answer
// (status, headers, the first KiB of the body), its attempts and its
// action without a secret; GET by ID answers it, an unknown ID 404.
func TestFailedRunsAreListed(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	target := newFixableTarget(t)
	s.putCollection(t)
	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	putFailingJob(t, s, "flaky", target.url, start)
	failuresPath := collectionPath + "/jobs/flaky/failures"

	var list []map[string]any
	require.Eventually(t, func() bool {
		status, body := s.get(t, failuresPath, nil)
		require.Equal(t, http.StatusOK, status, body)
		requireNoFailureSecret(t, body)
		list = failureEntries(t, body)
		return len(list) == 1
	}, 30*time.Second, 200*time.Millisecond, "the first occurrence's failure is listed")
	f := list[0]
	id := start.Format("20060102T150405") + "Z-scheduled"
	require.Equal(t, "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/coll1/jobs/flaky/failures/"+id, f["id"])
	require.Equal(t, "coll1/flaky/"+id, f["name"])
	require.Equal(t, start.Format(time.RFC3339), path(f, "properties", "expectedExecutionTime"))
	require.Equal(t, "scheduled", path(f, "properties", "kind"))
	require.Equal(t, float64(503), path(f, "properties", "response", "statusCode"))
	require.Contains(t, path(f, "properties", "response", "headers"), "Retry-After: 7")
	answered := path(f, "properties", "response", "body").(string)
	require.True(t, strings.HasPrefix(answered, "down for maintenance zzz"), answered)
	require.Len(t, answered, jobs.MaxFailureBody)
	require.Equal(t, float64(1), path(f, "properties", "attempts"))
	require.Equal(t, float64(1), path(f, "properties", "failedAttempts"))
	require.Equal(t, target.url+"/hook", path(f, "properties", "action", "request", "uri"))
	require.Equal(t, "user1", path(f, "properties", "action", "request", "authentication", "username"))
	require.Equal(t, float64(1), path(f, "properties", "action", "request", "signing", "secretCount"))

	status, one := s.get(t, failuresPath+"/"+id, nil)
	require.Equal(t, http.StatusOK, status, one)
	require.Equal(t, f, one)
	for _, unknown := range []string{"20200101T000000Z-scheduled", "no%20such"} {
		status, body := s.get(t, failuresPath+"/"+unknown, nil)
		require.Equal(t, http.StatusNotFound, status, body)
	}
	status, body := s.get(t, collectionPath+"/jobs/none/failures", nil)
	require.Equal(t, http.StatusNotFound, status, body)

	// A run now fails too: newest first, paged as history is.
	status, body = s.do(t, http.MethodPost, collectionPath+"/jobs/flaky/run", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Eventually(t, func() bool {
		_, body := s.get(t, failuresPath, nil)
		list = failureEntries(t, body)
		return len(list) == 2
	}, 30*time.Second, 200*time.Millisecond, "the run now's failure is listed")
	require.Equal(t, "runNow", path(list[0], "properties", "kind"))
	require.True(t, strings.HasSuffix(list[0]["name"].(string), "Z-run-now"), list[0]["name"])
	status, page := s.get(t, failuresPath, url.Values{"$top": {"1"}, "$skip": {"1"}})
	require.Equal(t, http.StatusOK, status, page)
	require.Equal(t, []map[string]any{list[1]}, failureEntries(t, page))

	// Across the collection, the resource group and the subscription: the
	// failures of the jobs that keep any (RecurFailures), job by job.
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/healthy", httpJob(target.url, nil))
	require.Equal(t, http.StatusCreated, status, body)
	for _, across := range []string{collectionPath + "/failures", "/recur/v1/subscriptions/sub1/failures",
		"/recur/v1/subscriptions/sub1/resourceGroups/rg1/failures"} {
		require.Eventually(t, func() bool {
			status, body := s.get(t, across, nil)
			require.Equal(t, http.StatusOK, status, body)
			requireNoFailureSecret(t, body)
			return len(failureEntries(t, body)) == 2
		}, 20*time.Second, 200*time.Millisecond, "%s lists the job's failures (visibility lags)", across)
		_, body := s.get(t, across, nil)
		require.Equal(t, list, failureEntries(t, body), across)
		status, page = s.get(t, across, url.Values{"$top": {"1"}})
		require.Equal(t, http.StatusOK, status, page)
		require.Equal(t, list[:1], failureEntries(t, page), across)
		require.Contains(t, page["nextLink"], "$skip=1", across)
	}
	status, body = s.get(t, "/recur/v1/subscriptions/sub2/failures", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Empty(t, failureEntries(t, body), "another subscription's")
	status, body = s.get(t, "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/none/failures", nil)
	require.Equal(t, http.StatusNotFound, status, body)
}

// TestFailedRunsAreKeptAndRunAgain: a job whose target fails keeps the
// failed occurrence; a re-run of a disabled job is refused (409), as a
// backfill is; once the job is enabled and its target fixed, the re-run
// reaches the target with the failed call's webhook-id (its signature's
// ID) under an idempotency key of its own, and its history row has the
// failure's nominal time and says what it re-ran.
func TestFailedRunsAreKeptAndRunAgain(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	target := newFixableTarget(t)
	s.putCollection(t)
	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	putFailingJob(t, s, "fixable", target.url, start)
	jobPath := collectionPath + "/jobs/fixable"

	var failure map[string]any
	require.Eventually(t, func() bool {
		_, body := s.get(t, jobPath+"/failures", nil)
		list := failureEntries(t, body)
		if len(list) == 1 {
			failure = list[0]
		}
		return failure != nil
	}, 30*time.Second, 200*time.Millisecond, "the failure is listed")
	id := failure["id"].(string)[strings.LastIndexByte(failure["id"].(string), '/')+1:]
	failed := target.got()
	require.Len(t, failed, 1)
	require.NotEmpty(t, failed[0].webhookID, "the job signs its calls")
	rerunPath := jobPath + "/failures/" + id + "/run"

	status, body := s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"state": "Disabled"}})
	require.Equal(t, http.StatusOK, status, body)
	status, body = s.do(t, http.MethodPost, rerunPath, nil)
	require.Equal(t, http.StatusConflict, status, body)
	requireNoFailureSecret(t, body)
	status, body = s.do(t, http.MethodPost, jobPath+"/failures/20200101T000000Z-scheduled/run", nil)
	require.Equal(t, http.StatusNotFound, status, body)

	status, body = s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"state": "Enabled"}})
	require.Equal(t, http.StatusOK, status, body)
	target.fixed.Store(true)
	status, body = s.do(t, http.MethodPost, rerunPath, nil)
	require.Equal(t, http.StatusAccepted, status, body)
	require.Eventually(t, func() bool { return len(target.got()) == 2 }, 30*time.Second, 100*time.Millisecond, "the re-run reaches the target")
	rerun := target.got()[1]
	require.Equal(t, failed[0].webhookID, rerun.webhookID, "the re-run is signed as the failed call")
	require.NotEqual(t, failed[0].idempotencyKey, rerun.idempotencyKey, "the re-run has an idempotency key of its own")

	var rows []map[string]any
	require.Eventually(t, func() bool {
		_, body := s.get(t, jobPath+"/history", nil)
		rows = historyRows(t, body)
		return len(rows) == 2
	}, 30*time.Second, 200*time.Millisecond, "the re-run's row")
	require.Equal(t, id, rows[0]["rerunOf"])
	require.Equal(t, "Completed", rows[0]["status"])
	require.Equal(t, start.Format(time.RFC3339), rows[0]["expectedExecutionTime"], "the failure's nominal time")
	require.Nil(t, rows[1]["rerunOf"])

	_, body = s.get(t, jobPath+"/failures", nil)
	require.Len(t, failureEntries(t, body), 1, "a re-run that succeeds leaves no failure")

	// The record is read from its upsert's event: the memo, which every
	// visibility row of the job carries, holds it no longer.
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "fixable"}
	d, err := s.temporal.GetDefaultClient().DescribeWorkflowExecution(t.Context(), k.JobWorkflowID(), "")
	require.NoError(t, err)
	require.Contains(t, d.GetWorkflowExecutionInfo().GetMemo().GetFields(), jobs.MemoRows)
	require.NotContains(t, d.GetWorkflowExecutionInfo().GetMemo().GetFields(), jobs.MemoFailures)
}

// TestAFaultedOneTimeJobRunsItsFailureAgain: a one-time job whose one run
// fails for good is faulted, which is final; its failure still runs
// again when asked (a failed one-time call is what a re-run is most often
// for), signed as the failed call, while its collection is enabled, and
// the job stays faulted.
func TestAFaultedOneTimeJobRunsItsFailureAgain(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	target := newFixableTarget(t)
	s.putCollection(t)
	jobPath := collectionPath + "/jobs/once"
	status, body := s.do(t, http.MethodPut, jobPath, map[string]any{"properties": map[string]any{
		"startTime": time.Now().UTC().Add(time.Second).Format(time.RFC3339),
		"action": map[string]any{
			"type": "Http",
			"request": map[string]any{"uri": target.url + "/hook", "method": "POST", "body": "{}",
				"signing": map[string]any{"secrets": []string{failuresSigning}}},
			"retryPolicy": map[string]any{"retryType": "None"},
		},
	}})
	require.Equal(t, http.StatusCreated, status, body)

	var failure map[string]any
	require.Eventually(t, func() bool {
		_, job := s.get(t, jobPath, nil)
		_, body := s.get(t, jobPath+"/failures", nil)
		if list := failureEntries(t, body); len(list) == 1 && path(job, "properties", "state") == "faulted" {
			failure = list[0]
		}
		return failure != nil
	}, 30*time.Second, 200*time.Millisecond, "the job is faulted and its failure listed")
	id := failure["id"].(string)[strings.LastIndexByte(failure["id"].(string), '/')+1:]
	rerunPath := jobPath + "/failures/" + id + "/run"

	status, body = s.do(t, http.MethodPost, collectionPath+"/disable", nil)
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, status, body)
	require.Eventually(t, func() bool {
		status, _ := s.do(t, http.MethodPost, rerunPath, nil)
		return status == http.StatusConflict
	}, 30*time.Second, 200*time.Millisecond, "refused while the collection is disabled")
	status, body = s.do(t, http.MethodPost, collectionPath+"/enable", nil)
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, status, body)
	require.Len(t, target.got(), 1, "nothing ran while the collection was disabled")

	target.fixed.Store(true)
	require.Eventually(t, func() bool {
		status, body = s.do(t, http.MethodPost, rerunPath, nil)
		require.Contains(t, []int{http.StatusAccepted, http.StatusConflict}, status, body)
		return status == http.StatusAccepted
	}, 30*time.Second, 200*time.Millisecond, "taken once the job hears of the enable")
	require.Eventually(t, func() bool { return len(target.got()) == 2 }, 30*time.Second, 100*time.Millisecond, "the re-run reaches the target")
	require.Equal(t, target.got()[0].webhookID, target.got()[1].webhookID, "signed as the failed call")

	require.Eventually(t, func() bool {
		_, body := s.get(t, jobPath+"/history", nil)
		rows := historyRows(t, body)
		return len(rows) == 2 && rows[0]["rerunOf"] == id && rows[0]["status"] == "Completed"
	}, 30*time.Second, 200*time.Millisecond, "the re-run's row")
	_, job := s.get(t, jobPath, nil)
	require.True(t, path(job, "properties", "state") == "faulted", "faulted is final: %v", job)
}
