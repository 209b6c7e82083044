package e2e

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/activities"
)

// TestSuccessRulesDecideARun: an answer of 200 whose body says the work
// failed fails the run when the job's successBodyPattern wants another,
// and its history row names the rule; a 404 the job lists as a success
// completes it.
func TestSuccessRulesDecideARun(t *testing.T) {
	s := newStack(t)
	target := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gone" {
			w.WriteHeader(http.StatusNotFound)
		}
		_, _ = io.WriteString(w, `{"status":"failed"}`)
	})
	t.Cleanup(target.Close)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	job := func(path string, request map[string]any) map[string]any {
		request["uri"], request["method"] = target.URL+path, "GET"
		return map[string]any{"properties": map[string]any{
			"startTime": time.Now().UTC().Format(time.RFC3339),
			"action":    map[string]any{"type": "Http", "request": request, "retryPolicy": map[string]any{"retryType": "None"}},
		}}
	}
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/pattern", job("/work", map[string]any{"successBodyPattern": `"status":\s*"ok"`}))
	require.Equal(t, http.StatusCreated, status, body)
	require.Equal(t, `"status":\s*"ok"`, path(body, "properties", "action", "request", "successBodyPattern"))
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/gone", job("/gone", map[string]any{"successStatusCodes": []any{404, "2xx"}}))
	require.Equal(t, http.StatusCreated, status, body)

	row := func(name string) map[string]any {
		var props map[string]any
		require.Eventually(t, func() bool {
			_, h := s.do(t, http.MethodGet, collectionPath+"/jobs/"+name+"/history", nil)
			rows, _ := h["value"].([]any)
			if len(rows) == 0 {
				return false
			}
			props, _ = rows[0].(map[string]any)["properties"].(map[string]any)
			return true
		}, 20*time.Second, 200*time.Millisecond, "%s ran", name)
		return props
	}
	failed := row("pattern")
	require.Equal(t, "Failed", failed["status"])
	require.Contains(t, failed["message"], "the body does not match successBodyPattern")
	require.Equal(t, "Completed", row("gone")["status"])
}

// TestMaxConcurrentRunsThroughTheAPI: the limit is stored and shown, and
// one out of range is refused with its path.
func TestMaxConcurrentRunsThroughTheAPI(t *testing.T) {
	s := newStack(t)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	job := httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Minute"})
	job["properties"].(map[string]any)["overlapPolicy"] = "AllowAll"
	job["properties"].(map[string]any)["maxConcurrentRuns"] = 3
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/bounded", job)
	require.Equal(t, http.StatusCreated, status, body)
	require.EqualValues(t, 3, path(body, "properties", "maxConcurrentRuns"))
	job["properties"].(map[string]any)["maxConcurrentRuns"] = 101
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/bounded", job)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "properties.maxConcurrentRuns", path(body, "error", "target"))
}

// TestMaxConcurrentRunsBoundsRuns: two runs now of each job hold its
// target; the scheduled occurrence due meanwhile finds its job's two runs
// running. Under AllowAll with maxConcurrentRuns 2 it is Postponed with
// the reason; under BufferOne it waits and runs, under its own occurrence
// ID, once a run ends. The target never sees more than two at once.
func TestMaxConcurrentRunsBoundsRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it waits about a minute for an occurrence to fall due")
	}
	t.Parallel() // it waits on timers: beside the others (TestMain)
	s := newStack(t)
	var mu sync.Mutex
	inFlight, most, keys := map[string]int{}, map[string]int{}, map[string][]string{}
	release := map[string]chan struct{}{"/allowall": make(chan struct{}), "/bufferone": make(chan struct{})}
	target := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		gate, ok := release[r.URL.Path]
		if !ok {
			return // not a job's request
		}
		mu.Lock()
		inFlight[r.URL.Path]++
		most[r.URL.Path] = max(most[r.URL.Path], inFlight[r.URL.Path])
		keys[r.URL.Path] = append(keys[r.URL.Path], r.Header.Get(activities.HeaderIdempotencyKey))
		mu.Unlock()
		select {
		case <-gate:
		case <-r.Context().Done():
		}
		mu.Lock()
		inFlight[r.URL.Path]--
		mu.Unlock()
	})
	t.Cleanup(target.Close)
	t.Cleanup(func() {
		for _, gate := range release {
			select {
			case <-gate:
			default:
				close(gate)
			}
		}
	})
	s.putCollection(t)
	// A run now sent while the job's first one runs waits for the
	// workflow task's heartbeat (its action is a local activity of that
	// task): 8 s at the default 10 s task timeout, so the scheduled
	// occurrence is far enough out for all four runs now to start first.
	// Their actions' timeout outlasts the test: while they run, what the
	// workflow decides (the occurrence's timer, its Postponed row) reaches
	// Temporal only at those heartbeats, so the occurrence can fire and
	// show some 20 s after its time, past the default timeout's minute.
	start := time.Now().UTC().Add(45 * time.Second).Truncate(time.Second)
	var runs sync.WaitGroup
	for _, policy := range []string{"AllowAll", "BufferOne"} {
		name := strings.ToLower(policy)
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/"+name, map[string]any{"properties": map[string]any{
			"startTime":         start.Format(time.RFC3339),
			"recurrence":        map[string]any{"frequency": "Hour"},
			"overlapPolicy":     policy,
			"maxConcurrentRuns": 2,
			"action": map[string]any{"type": "Http", "retryPolicy": map[string]any{"retryType": "None"}, "timeout": "PT5M",
				"request": map[string]any{"uri": target.URL + "/" + name, "method": "POST"}},
		}})
		require.Equal(t, http.StatusCreated, status, body)
		for range 2 {
			runs.Go(func() {
				status, body := s.do(t, http.MethodPost, collectionPath+"/jobs/"+name+"/run", nil)
				assert.Equal(t, http.StatusOK, status, body)
			})
		}
	}
	runs.Wait()
	held := func(p string, n int) func() bool {
		return func() bool { mu.Lock(); defer mu.Unlock(); return inFlight[p] == n }
	}
	require.Eventually(t, held("/allowall", 2), 20*time.Second, 50*time.Millisecond, "two runs now of allowall")
	require.Eventually(t, held("/bufferone", 2), 20*time.Second, 50*time.Millisecond, "two runs now of bufferone")
	require.True(t, time.Now().Before(start), "the runs now must run when the occurrence falls due")

	scheduled := "job:sub1/rg1/coll1/%s@" + start.Format(time.RFC3339)
	var row map[string]any
	require.Eventually(t, func() bool {
		_, h := s.do(t, http.MethodGet, collectionPath+"/jobs/allowall/history", nil)
		for _, r := range historyRows(t, h) {
			if r["status"] == "Postponed" {
				row = r
				return true
			}
		}
		return false
	}, time.Until(start)+30*time.Second, 200*time.Millisecond, "allowall's occurrence is postponed")
	require.Equal(t, "2 runs were still running (maxConcurrentRuns)", row["message"])
	require.Equal(t, start.Format(time.RFC3339), row["expectedExecutionTime"])

	// BufferOne's occurrence waits: no third request until a run ends.
	require.Never(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(keys["/bufferone"]) > 2 },
		2*time.Second, 100*time.Millisecond, "the buffered occurrence waits for a run to end")
	close(release["/bufferone"])
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(keys["/bufferone"], fmt.Sprintf(scheduled, "bufferone"))
	}, 20*time.Second, 50*time.Millisecond, "the buffered occurrence runs once a run ended")
	_, h := s.do(t, http.MethodGet, collectionPath+"/jobs/bufferone/history", nil)
	for _, r := range historyRows(t, h) {
		require.NotEqual(t, "Postponed", r["status"], "bufferone postpones nothing")
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, map[string]int{"/allowall": 2, "/bufferone": 2}, most)
	require.NotContains(t, keys["/allowall"], fmt.Sprintf(scheduled, "allowall"))
}
