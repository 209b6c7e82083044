package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/temporalserver"
)

const crashCollection = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"

// occurrenceKey is the idempotency key of job name's occurrence at nominal.
func occurrenceKey(name string, nominal time.Time) string {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: name}
	return jobs.OccurrenceID(k.JobWorkflowID(), nominal)
}

// sinkJob is a job definition that POSTs to the sink at /name, with more
// properties.
func sinkJob(s *sink, name string, start time.Time, props map[string]any) map[string]any {
	p := map[string]any{
		"startTime": start.UTC().Format(time.RFC3339),
		"action": map[string]any{
			"type":    "Http",
			"request": map[string]any{"uri": s.URL + "/" + name, "method": "POST", "body": name},
		},
	}
	for k, v := range props {
		p[k] = v
	}
	return map[string]any{"properties": p}
}

// firing is a one-time job a test PUT: its name, its start time and when
// its PUT was sent and answered.
type firing struct {
	name                  string
	start, sent, answered time.Time
}

// putFiring PUTs def, the one-time job name due at start, through api.
func putFiring(t *testing.T, api *devProcess, name string, start time.Time, def map[string]any) firing {
	t.Helper()
	f := firing{name: name, start: start, sent: time.Now()}
	status, body := api.do(t, http.MethodPut, crashCollection+"/jobs/"+name, def)
	require.Equal(t, http.StatusCreated, status, body)
	f.answered = time.Now()
	return f
}

// putSinkJob PUTs a one-time sink job due at start through api.
func putSinkJob(t *testing.T, api *devProcess, s *sink, name string, start time.Time) firing {
	t.Helper()
	return putFiring(t, api, name, start, sinkJob(s, name, start, nil))
}

// requireRuns fails unless key is the occurrence f's job runs (check).
func (f firing) requireRuns(t *testing.T, key string) {
	t.Helper()
	require.NoError(t, f.check(key))
}

// check says why key is not the occurrence f's job runs: the one of its
// start time, or, when its PUT answered after that, one at its creation,
// which falls between the PUT's sending and its answer, a start time in
// the past meaning at once (docs/recurrence.md, "Which occurrences run",
// rule 1). A slow machine answers a PUT after the start time a test
// chose.
func (f firing) check(key string) error {
	if f.answered.Before(f.start) {
		if want := occurrenceKey(f.name, f.start); key != want {
			return fmt.Errorf("occurrence %s, not %s: the PUT answered before the start time", key, want)
		}
		return nil
	}
	_, at, _ := strings.Cut(key, "@")
	nominal, err := time.Parse(time.RFC3339Nano, at)
	if err != nil || key != occurrenceKey(f.name, nominal) {
		return fmt.Errorf("occurrence %s is not one of job %s", key, f.name)
	}
	if nominal.Before(f.start) || nominal.Before(f.sent.Truncate(time.Second)) || nominal.After(f.answered) {
		return fmt.Errorf("occurrence %s: the PUT was sent at %s and answered at %s, after the start time %s",
			key, f.sent.Format(time.RFC3339Nano), f.answered.Format(time.RFC3339Nano), f.start.Format(time.RFC3339))
	}
	return nil
}

// TestFiringCheck: a job whose PUT answered before its start time runs
// at that time; one whose PUT answered after it runs at its creation, and
// at no other time.
func TestFiringCheck(t *testing.T) {
	start := time.Date(2026, 11, 25, 15, 34, 8, 0, time.UTC)
	early := firing{name: "a", start: start, sent: start.Add(-2 * time.Second), answered: start.Add(-time.Second)}
	require.NoError(t, early.check(occurrenceKey("a", start)))
	require.Error(t, early.check(occurrenceKey("a", start.Add(time.Second))))
	require.Error(t, early.check(occurrenceKey("b", start)))

	late := firing{name: "a", start: start, sent: start.Add(1500 * time.Millisecond), answered: start.Add(3 * time.Second)}
	require.NoError(t, late.check(occurrenceKey("a", start.Add(time.Second))), "created in the second the PUT was sent")
	require.NoError(t, late.check(occurrenceKey("a", start.Add(3*time.Second))))
	require.Error(t, late.check(occurrenceKey("a", start)), "before the PUT was sent")
	require.Error(t, late.check(occurrenceKey("a", start.Add(4*time.Second))), "after it answered")
	require.Error(t, late.check(occurrenceKey("b", start.Add(2*time.Second))))
	require.Error(t, late.check("job:s/rg/c/a"))

	straddling := firing{name: "a", start: start, sent: start.Add(-time.Second), answered: start.Add(time.Second)}
	require.NoError(t, straddling.check(occurrenceKey("a", start)), "created before its start time")
	require.NoError(t, straddling.check(occurrenceKey("a", start.Add(time.Second))), "created after it")
	require.Error(t, straddling.check(occurrenceKey("a", start.Add(-time.Second))))
}

// withFixedRetry gives a job's action a retry policy of n retries 15
// seconds apart (Azure's shortest interval) and a 5-second attempt
// timeout.
func withFixedRetry(job map[string]any, n int) map[string]any {
	action := job["properties"].(map[string]any)["action"].(map[string]any)
	action["timeout"] = "PT5S"
	action["retryPolicy"] = map[string]any{"retryType": "Fixed", "retryCount": n, "retryInterval": "PT15S"}
	return job
}

// lostWorkerJob is a one-time sink job due at start whose attempts may
// last a minute, two of them 15 s apart: a test that kills the worker of
// its attempt in flight sees the retry within a minute only if the
// heartbeat, not the attempt's timeout, tells the server the worker is
// lost.
func lostWorkerJob(s *sink, name string, start time.Time) map[string]any {
	return lostWorkerJobWith(s, name, start, nil)
}

// lostWorkerJobWith is lostWorkerJob with more properties (a recurrence).
func lostWorkerJobWith(s *sink, name string, start time.Time, props map[string]any) map[string]any {
	job := withFixedRetry(sinkJob(s, name, start, props), 2)
	job["properties"].(map[string]any)["action"].(map[string]any)["timeout"] = "PT1M"
	return job
}

// kill sends SIGKILL: no shutdown, no flush, as a crash or the OOM killer
// would.
func (p *devProcess) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Kill())
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("recur did not die of SIGKILL within 30s")
	}
}

// get GETs an ARM path; safe to call from the condition of Eventually.
func (p *devProcess) get(path string) (int, map[string]any, error) {
	resp, err := http.Get(p.api + path + "?api-version=2016-03-01")
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	err = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, err
}

// status returns a job's properties.status with its state added.
func (p *devProcess) status(name string) (map[string]any, error) {
	code, body, err := p.get(crashCollection + "/jobs/" + name)
	if err != nil || code != http.StatusOK {
		return nil, fmt.Errorf("GET job %s: %d %v %v", name, code, body, err)
	}
	props, _ := body["properties"].(map[string]any)
	st, _ := props["status"].(map[string]any)
	if st == nil {
		st = map[string]any{}
	}
	st["state"] = props["state"]
	return st, nil
}

// requireCounters waits until a job has the state and counters given.
func requireCounters(t *testing.T, p *devProcess, name, state string, executions, failures, faults int) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		st, err := p.status(name)
		if !assert.NoError(c, err) {
			return
		}
		assert.Equal(c, state, st["state"], name)
		assert.Equal(c, float64(executions), num(st["executionCount"]), "%s executionCount: %v", name, st)
		assert.Equal(c, float64(failures), num(st["failureCount"]), "%s failureCount: %v", name, st)
		assert.Equal(c, float64(faults), num(st["faultedCount"]), "%s faultedCount: %v", name, st)
	}, 30*time.Second, 250*time.Millisecond)
}

// nextExecution returns a job's status.nextExecutionTime.
func nextExecution(t *testing.T, p *devProcess, name string) any {
	t.Helper()
	st, err := p.status(name)
	require.NoError(t, err)
	return st["nextExecutionTime"]
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// waitUntil returns at when: a wall-clock instant the scenario needs
// behind it (a nominal time), not a guess at how long something takes.
func waitUntil(when time.Time) { time.Sleep(time.Until(when)) }

// TestKill9KeepsEveryOccurrence kills `recur dev` with SIGKILL twice, on
// the same data dir: once while its jobs sleep, once while an action is in
// flight. Every occurrence that fell due while recur was up has exactly one
// completed delivery; those that fell due while it was down follow the
// catch-up rule; no job is lost and the counters are right.
func TestKill9KeepsEveryOccurrence(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it kills recur mid-run and waits for the occurrences after (about 40 s)")
	}
	t.Parallel() // it waits on the processes it kills: beside the others (TestMain)
	bin := buildRecur(t)
	dataDir := t.TempDir()
	s := newSink(t)
	p := startDev(t, bin, dataDir)
	code, body := p.do(t, http.MethodPut, crashCollection, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, code, body)

	base := time.Now().Add(2 * time.Second).Truncate(time.Second)
	before := base.Add(4 * time.Second)    // falls due while recur is up
	during := base.Add(12 * time.Second)   // falls due while it is down
	minutely := base.Add(14 * time.Second) // a recurring job whose first occurrence is missed
	restart := base.Add(20 * time.Second)
	later := base.Add(time.Hour)
	for name, def := range map[string]map[string]any{
		"before": sinkJob(s, "before", before, nil),
		"during": sinkJob(s, "during", during, nil),
		// Missed by 8 s or more, more than its 5-second window: Postponed.
		"during-late": sinkJob(s, "during-late", during, map[string]any{"catchUpWindow": "PT5S"}),
		"minutely": sinkJob(s, "minutely", minutely, map[string]any{
			"recurrence": map[string]any{"frequency": "Minute", "interval": 1}}),
		"sleeper": sinkJob(s, "sleeper", later, map[string]any{
			"recurrence": map[string]any{"frequency": "Hour", "interval": 1}}),
	} {
		code, body := p.do(t, http.MethodPut, crashCollection+"/jobs/"+name, def)
		require.Equal(t, http.StatusCreated, code, "%s: %v", name, body)
	}
	require.Eventually(t, func() bool { _, done := s.counts(occurrenceKey("before", before)); return done == 1 },
		20*time.Second, 100*time.Millisecond, "the occurrence due while recur is up runs")
	require.Less(t, time.Now(), during, "the scenario fell behind its schedule")
	requireCounters(t, p, "before", "completed", 1, 0, 0)

	// Crash while every job sleeps on a timer.
	p.kill(t)
	waitUntil(restart)
	p = startDev(t, bin, dataDir)
	require.Eventually(t, func() bool {
		_, d := s.counts(occurrenceKey("during", during))
		_, m := s.counts(occurrenceKey("minutely", minutely))
		return d == 1 && m == 1
	}, 30*time.Second, 100*time.Millisecond, "the occurrences missed while down run once, being within their windows")
	requireCounters(t, p, "during", "completed", 1, 0, 0)
	requireCounters(t, p, "during-late", "completed", 0, 0, 0)
	requireCounters(t, p, "minutely", "enabled", 1, 0, 0)
	requireCounters(t, p, "sleeper", "enabled", 0, 0, 0)
	require.Equal(t, minutely.Add(time.Minute).UTC().Format(time.RFC3339), nextExecution(t, p, "minutely"))
	require.Equal(t, later.UTC().Format(time.RFC3339), nextExecution(t, p, "sleeper"))
	raw, _ := s.counts(occurrenceKey("during-late", during))
	require.Zero(t, raw, "an occurrence missed by more than its window does not run")
	requireHistoryRow(t, p, "during-late", "Postponed", "catch-up window")

	// Crash while an action is in flight: the sink holds the first
	// delivery until the connection dies with the process. Past its local
	// activity's budget the attempt is awaited by an activity on the
	// process's own queue, whose heartbeat stops with the process: the
	// restarted server takes its worker for lost after
	// jobs.ActionHeartbeatTimeout (the restarted process polls a queue of
	// its own, so no worker picks the await up again), well
	// before the attempt's own timeout of a minute, and the action runs
	// again under the same Idempotency-Key, after the retry interval. The
	// occurrence completes, its lost attempt counted as a failed one, as
	// an attempt that timed out is. Two hourly jobs have their first
	// actions in flight too, one disabled and one deleted before the
	// crash: the disabled one's run goes on after the restart as the
	// other's does, and the job stays disabled; the deleted one's run was
	// cancelled with the DELETE, and nothing of it runs again.
	hourly := map[string]any{"recurrence": map[string]any{"frequency": "Hour"}}
	inflightAt := time.Now().Add(3 * time.Second).Truncate(time.Second)
	keys := map[string]string{}
	for _, name := range []string{"inflight", "disabled-inflight", "deleted-inflight"} {
		s.holdNext("/"+name, 1)
		props := hourly
		if name == "inflight" {
			props = nil
		}
		putFiring(t, p, name, inflightAt, lostWorkerJobWith(s, name, inflightAt, props))
	}
	for len(keys) < 3 {
		k := s.waitHeld(t, 20*time.Second)
		keys[strings.SplitN(strings.SplitN(k, "@", 2)[0], "/", 4)[3]] = k
	}
	key := keys["inflight"]
	code, body = p.do(t, http.MethodPatch, crashCollection+"/jobs/disabled-inflight", map[string]any{"properties": map[string]any{"state": "Disabled"}})
	require.Equal(t, http.StatusOK, code, body)
	code, body = p.do(t, http.MethodDelete, crashCollection+"/jobs/deleted-inflight", nil)
	require.Equal(t, http.StatusOK, code, body)
	// The PATCH and the DELETE were answered once their jobs' local
	// activities had handed their attempts off; inflight's is waited for.
	handedOff(t, p.temporal, temporalserver.DefaultNamespace, "job:s/rg/c/inflight")
	p.kill(t)
	p = startDev(t, bin, dataDir)

	require.Eventually(t, func() bool {
		_, done := s.counts(key)
		_, disabledDone := s.counts(keys["disabled-inflight"])
		return done == 1 && disabledDone == 1
	}, 60*time.Second, 100*time.Millisecond, "the actions in flight at the crash are retried and delivered: %v %v\n%s", s.raw, s.completed, p.output)
	requireCounters(t, p, "inflight", "completed", 1, 1, 0)
	requireCounters(t, p, "disabled-inflight", "disabled", 1, 1, 0)
	code, body = p.do(t, http.MethodGet, crashCollection+"/jobs/deleted-inflight", nil)
	require.Equal(t, http.StatusNotFound, code, body)
	raw, done := s.counts(keys["deleted-inflight"])
	require.Equal(t, [2]int{1, 0}, [2]int{raw, done}, "the deleted job's run is not sent again")

	// Nothing doubled: one completed delivery per occurrence, no other
	// occurrence delivered, no job lost.
	for _, name := range []string{"before", "during", "minutely", "inflight", "disabled-inflight"} {
		keys := s.keysOf(name)
		require.Len(t, keys, 1, "%s: %v", name, keys)
		_, completed := s.counts(keys[0])
		require.Equal(t, 1, completed, keys[0])
	}
	raw, _ = s.counts(key)
	require.Equal(t, 2, raw, "the held delivery and the one after the restart")
	s.report(t)
	code, body = p.do(t, http.MethodGet, crashCollection+"/jobs", nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Len(t, body["value"], 7, "no job is lost, the deleted one is gone: %v", body)
	p.stop(t, syscall.SIGTERM)
}

// requireHistoryRow checks the newest history row of a job.
func requireHistoryRow(t *testing.T, p *devProcess, name, status, message string) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, body, err := p.get(crashCollection + "/jobs/" + name + "/history")
		if !assert.NoError(c, err) || !assert.Equal(c, http.StatusOK, code, fmt.Sprint(body)) {
			return
		}
		rows, _ := body["value"].([]any)
		if !assert.NotEmpty(c, rows, name+" has a history row") {
			return
		}
		props, _ := rows[0].(map[string]any)["properties"].(map[string]any)
		assert.Equal(c, status, props["status"])
		assert.Contains(c, props["message"], message)
	}, 20*time.Second, 250*time.Millisecond)
}
