package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/internal/syncbuf"
	"github.com/recurhq/recur/temporalserver"
)

// startCluster starts a Temporal server in the test process on dataDir
// and port, standing for a cluster recur's processes connect to.
func startCluster(t *testing.T, dataDir string, port int) *temporalserver.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := temporalserver.Start(ctx, temporalserver.Config{
		DataDir: dataDir, FrontendPort: port, Namespace: "recur-cluster",
	})
	require.NoError(t, err)
	return srv
}

// startRole runs `recur serve|api` against address and waits until the
// API is ready.
func startRole(t *testing.T, bin, role, address string) *devProcess {
	t.Helper()
	apiPort := freePort(t)
	p := &devProcess{api: "http://127.0.0.1:" + strconv.Itoa(apiPort), output: &syncbuf.Buffer{}, done: make(chan error, 1)}
	p.start(t, bin, role, "--temporal-address", address, "--namespace", "recur-cluster", "--encryption-key-file", testKeyFile(t),
		"--http-addr", "127.0.0.1:"+strconv.Itoa(apiPort), "--egress-allow-loopback") // the sink is on 127.0.0.1
	return p
}

// TestTemporalOutage stops the Temporal server under a running `recur
// serve`: the API answers 503 with an ARM error at once instead of
// hanging; when the server is back, the API and the worker carry on by
// themselves and the job due during the outage runs once.
func TestTemporalOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it stops Temporal and waits for the outage to pass (about 25 s)")
	}
	bin := buildRecur(t)
	dataDir, port := t.TempDir(), freePort(t)
	srv := startCluster(t, dataDir, port)
	// Stop is idempotent: this stops whichever server runs at the end.
	t.Cleanup(func() { _ = srv.Stop() })
	p := startRole(t, bin, "serve", srv.FrontendAddress())
	s := newSink(t)
	code, body := p.do(t, http.MethodPut, crashCollection, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, code, body)

	// The occurrence must fall due while the server is down, or the test
	// would pass without an outage to live through: on a machine too slow
	// to define the job and stop the server within the lead, the job runs
	// before the outage, and the test tries again with a longer lead.
	var name string
	var due time.Time
	for lead := 8 * time.Second; ; lead *= 2 {
		name = "outage-" + strconv.Itoa(int(lead/time.Second))
		due = time.Now().Add(lead).Truncate(time.Second)
		code, body = p.do(t, http.MethodPut, crashCollection+"/jobs/"+name, sinkJob(s, name, due, nil))
		require.Equal(t, http.StatusCreated, code, body)
		stopping := time.Now()
		require.NoError(t, srv.Stop())
		t.Logf("%s is due at %s; the server stopped in %s", name, due.Format(time.TimeOnly), time.Since(stopping).Round(time.Millisecond))
		if time.Now().Before(due) {
			break
		}
		require.Less(t, lead, time.Minute, "the job fell due before the server stopped, even with a lead of %s", lead)
		srv = startCluster(t, dataDir, port)
		require.Eventually(t, func() bool { code, _ := p.do(t, http.MethodGet, crashCollection, nil); return code == http.StatusOK },
			30*time.Second, 200*time.Millisecond, "the API reconnects to the server")
	}
	client := &http.Client{Timeout: 20 * time.Second}
	for _, probe := range []struct{ method, path, body string }{
		{http.MethodGet, crashCollection + "/jobs/" + name, ""},
		{http.MethodPut, crashCollection + "/jobs/other", `{"properties":{"action":{"type":"Http","request":{"uri":"http://127.0.0.1:9/","method":"GET"}}}}`},
		{http.MethodGet, crashCollection + "/jobs", ""},
	} {
		req, err := http.NewRequest(probe.method, p.api+probe.path+"?api-version=2016-03-01", strings.NewReader(probe.body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		began := time.Now()
		resp, err := client.Do(req)
		require.NoError(t, err, "%s %s must answer, not hang", probe.method, probe.path)
		t.Logf("%s %s during the outage: %d in %s", probe.method, probe.path, resp.StatusCode, time.Since(began).Round(time.Millisecond))
		var armErr struct {
			Error struct{ Code, Message string }
		}
		require.NoError(t, decodeJSON(resp, &armErr))
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s %s: %+v\n%s", probe.method, probe.path, armErr, p.output)
		require.Equal(t, "ServiceUnavailable", armErr.Error.Code)
		require.Contains(t, armErr.Error.Message, "Temporal")
		require.NotEmpty(t, resp.Header.Get("Retry-After"))
	}
	waitUntil(due.Add(2 * time.Second))

	srv = startCluster(t, dataDir, port)
	back := time.Now()
	require.Eventually(t, func() bool { _, done := s.counts(occurrenceKey(name, due)); return done == 1 },
		60*time.Second, 200*time.Millisecond, "the worker reconnects and runs the occurrence due during the outage:\n%s", p.output)
	t.Logf("the occurrence due during the outage ran %s after the server was back", time.Since(back).Round(time.Millisecond))
	requireCounters(t, p, name, "completed", 1, 0, 0)
	raw, _ := s.counts(occurrenceKey(name, due))
	require.Equal(t, 1, raw)
	p.stop(t, syscall.SIGTERM)
}

// TestTwoWorkersOneKilledMidAction runs the API and two `recur worker`
// processes against one server and kills, with SIGKILL, the worker whose
// action is in flight: the other worker finishes that occurrence and runs
// the rest; nothing is lost or doubled.
func TestTwoWorkersOneKilledMidAction(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it kills a worker mid-action and waits for the other (about 40 s)")
	}
	t.Parallel() // it waits on the processes it kills: beside the others (TestMain)
	bin := buildRecur(t)
	srv := startCluster(t, t.TempDir(), freePort(t))
	defer srv.Stop()
	p := startRole(t, bin, "api", srv.FrontendAddress())
	workers := map[int]*devProcess{}
	for range 2 {
		w := &devProcess{output: &syncbuf.Buffer{}, done: make(chan error, 1)}
		w.startWorker(t, bin, srv.FrontendAddress())
		workers[w.cmd.Process.Pid] = w
	}
	s := newSink(t)
	code, body := p.do(t, http.MethodPut, crashCollection, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, code, body)

	s.holdNext("/handoff", 1)
	due := time.Now().Add(3 * time.Second).Truncate(time.Second)
	handoff := putFiring(t, p, "handoff", due, lostWorkerJob(s, "handoff", due))
	others := []string{"a", "b", "c", "d", "e", "f"}
	for _, name := range others {
		code, body = p.do(t, http.MethodPut, crashCollection+"/jobs/"+name, sinkJob(s, name, due.Add(4*time.Second), nil))
		require.Equal(t, http.StatusCreated, code, body)
	}
	key := s.waitHeld(t, 20*time.Second)
	handoff.requireRuns(t, key)

	// The worker that holds the action is the one awaiting it.
	identity := handedOff(t, srv.FrontendAddress(), "recur-cluster", "job:s/rg/c/handoff")
	pid, err := strconv.Atoi(strings.SplitN(identity, "@", 2)[0])
	require.NoError(t, err, "identity %q", identity)
	victim, ok := workers[pid]
	require.True(t, ok, "the action runs in worker %d, one of ours", pid)
	victim.kill(t)
	killed := time.Now()

	require.Eventually(t, func() bool { _, done := s.counts(key); return done == 1 },
		lostAttemptRecovery, 200*time.Millisecond, "the surviving worker retries the action")
	t.Logf("the retry completed %s after the kill", time.Since(killed).Round(time.Millisecond))
	// The attempt lost with the killed worker counts as a failed one, as
	// one that timed out does: its heartbeat stopped, and the surviving
	// worker ran the action again, under the same Idempotency-Key.
	requireCounters(t, p, "handoff", "completed", 1, 1, 0)
	for _, name := range others {
		requireCounters(t, p, name, "completed", 1, 0, 0)
		keys := s.keysOf(name)
		require.Len(t, keys, 1, "%s: %v", name, keys)
		raw, completed := s.counts(keys[0])
		require.Equal(t, [2]int{1, 1}, [2]int{raw, completed}, keys[0])
	}
	raw, _ := s.counts(key)
	require.Equal(t, 2, raw, "the held delivery and the surviving worker's")
	s.report(t)
}

// startWorker runs `recur worker` against address and waits until it
// polls.
func (p *devProcess) startWorker(t *testing.T, bin, address string) {
	t.Helper()
	p.launch(t, bin, "worker", "--temporal-address", address, "--namespace", "recur-cluster", "--egress-allow-loopback",
		"--encryption-key-file", testKeyFile(t))
	require.Eventually(t, func() bool { return strings.Contains(p.output.String(), "worker polling") },
		60*time.Second, 100*time.Millisecond, "recur worker never polled:\n%s", p.output)
}

// decodeJSON decodes and closes an answer's body.
func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// handedOff waits until the action in flight of the job workflow id has
// been handed off by its first attempt's local activity, past its budget,
// to the activity that awaits it on the queue of the process that sent it
// (its one pending activity), and returns that process's worker identity.
// Until then a worker killed takes the attempt with its workflow task, and
// the retried task sends it again as a first attempt, counting no failure.
func handedOff(t *testing.T, hostPort, namespace, id string) string {
	t.Helper()
	cl, err := client.Dial(client.Options{HostPort: hostPort, Namespace: namespace})
	require.NoError(t, err)
	defer cl.Close()
	var identity string
	require.Eventually(t, func() bool {
		desc, err := cl.DescribeWorkflowExecution(context.Background(), id, "")
		if err != nil || len(desc.GetPendingActivities()) != 1 {
			return false
		}
		identity = desc.GetPendingActivities()[0].GetLastWorkerIdentity()
		return identity != ""
	}, 10*time.Second, 50*time.Millisecond, "the action in flight of %s is awaited, as one pending activity", id)
	return identity
}

// lostAttemptRecovery bounds how long an attempt handed off to a worker
// that is then killed takes to run again on another: the await's
// heartbeat timeout (jobs.ActionHeartbeatTimeout, 20 s), the job's
// workflow task meeting the dead worker's sticky queue first (5 s), the
// retry policy's interval as a workflow timer (15 s in lostWorkerJob),
// and the workflow tasks around it on a loaded machine.
const lostAttemptRecovery = 90 * time.Second
