package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/readme"
	"github.com/recurhq/recur/internal/syncbuf"
	"github.com/recurhq/recur/internal/temporalcluster"
)

// readmeClusterCommands returns the recur commands of the README's
// "Against a Temporal cluster" section by their first argument ("keygen",
// "serve", "worker", "api"), each as the arguments after "recur". (Its
// temporal CLI line is e2e/temporalcli's to run.)
func readmeClusterCommands(t *testing.T) map[string][]string {
	t.Helper()
	commands, err := readme.Commands("../../README.md", "Against a Temporal cluster")
	require.NoError(t, err)
	recur := map[string][]string{}
	for _, words := range commands {
		if len(words) > 1 && words[0] == "recur" {
			recur[words[1]] = words[1:]
		}
	}
	for _, cmd := range []string{"keygen", "serve", "worker", "api"} {
		require.Contains(t, recur, cmd, "the README's cluster section runs recur %s", cmd)
	}
	return recur
}

// onCluster returns args with the README's example address replaced by
// the cluster's, and its namespace checked against the cluster's.
func onCluster(t *testing.T, c *temporalcluster.Cluster, args []string) []string {
	t.Helper()
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "temporal.example.com:7233", c.FrontendAddress())
		if i > 0 && args[i-1] == "--namespace" {
			require.Equal(t, c.Namespace(), a, "the README's namespace")
		}
	}
	return out
}

// clusterProcess starts one recur process of the README's command role in
// dir (where keys.json is), with what a test machine needs beside it: a
// free API port for the roles that serve one, loopback targets for the
// roles that run actions. It waits until the process serves, or polls.
func clusterProcess(t *testing.T, bin, dir string, args []string) *devProcess {
	t.Helper()
	p := &devProcess{output: &syncbuf.Buffer{}, done: make(chan error, 1), dir: dir}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("recur %s's output:\n%s", args[0], lastLines(p.output.String(), 40))
		}
	})
	args = append(args, "--log-format", "text")
	if args[0] != "worker" {
		port := freePort(t)
		p.api = "http://127.0.0.1:" + strconv.Itoa(port)
		args = append(args, "--http-addr", "127.0.0.1:"+strconv.Itoa(port))
	}
	if args[0] != "api" {
		args = append(args, "--egress-allow-loopback")
	}
	if p.api != "" {
		p.start(t, bin, args...)
		return p
	}
	p.launch(t, bin, args...)
	require.Eventually(t, func() bool { return strings.Contains(p.output.String(), "worker polling") },
		60*time.Second, 100*time.Millisecond, "recur worker never polled:\n%s", p.output)
	return p
}

// TestACluster runs recur as the README deploys it on a Temporal cluster
// on PostgreSQL: every command of its cluster section (the search
// attributes registered by hand, one key file for every process), two
// `recur worker` and two `recur api` processes, and what a cluster lives
// through: concurrent writes over both APIs, a worker killed with an
// action in flight, every worker stopped, the Temporal server stopped for
// 30 s, and a rolling restart of the workers onto a new build.
func TestACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it starts PostgreSQL, a Temporal server and five recur processes")
	}
	t.Parallel() // beside TestAQuotaHoldsAcrossAKill9's wait
	// The logs dumped when it fails follow the failure messages, and an
	// excerpt of the output's end shows only them: the last line names the
	// subtests that failed. Registered first, it runs last.
	var failed []string
	t.Cleanup(func() {
		if len(failed) > 0 {
			t.Logf("failed subtests: %s", strings.Join(failed, "; "))
		}
	})
	run := func(name string, f func(t *testing.T)) {
		if !t.Run(name, f) {
			failed = append(failed, name)
		}
	}
	bin := buildRecur(t)
	commands := readmeClusterCommands(t)
	c := temporalcluster.Start(t)
	dir := t.TempDir()

	out, err := runIn(dir, bin, commands["keygen"]...)
	require.NoError(t, err, "%s", out)
	// What the README's `temporal operator search-attribute create` line
	// does, through the same operator API: e2e/temporalcli runs the line
	// itself, where the CLI is installed within that package's time.
	registerByHand(t, c)

	run("serve", func(t *testing.T) {
		p := clusterProcess(t, bin, dir, onCluster(t, c, commands["serve"]))
		putUntilCreated(t, p)
		p.stop(t, syscall.SIGTERM)
	})

	s := newSink(t)
	workers := []*devProcess{
		clusterProcess(t, bin, dir, onCluster(t, c, commands["worker"])),
		clusterProcess(t, bin, dir, onCluster(t, c, commands["worker"])),
	}
	apis := []*devProcess{
		clusterProcess(t, bin, dir, onCluster(t, c, commands["api"])),
		clusterProcess(t, bin, dir, onCluster(t, c, commands["api"])),
	}
	// revive starts a new worker for each one a subtest stopped or killed:
	// the processes outlive the subtests only when this test starts them.
	revive := func() {
		for i, w := range workers {
			if w.cmd.ProcessState != nil {
				workers[i] = clusterProcess(t, bin, dir, onCluster(t, c, commands["worker"]))
			}
		}
	}
	status, body := apis[0].do(t, http.MethodPut, crashCollection, map[string]any{"properties": map[string]any{
		"sku": map[string]any{"name": "P20Premium"}}})
	require.Equal(t, http.StatusCreated, status, body)

	run("jobs created through either API fire once each", func(t *testing.T) {
		start := time.Now().Add(5 * time.Second).Truncate(time.Second)
		var due []firing
		for i := range 10 {
			due = append(due, putSinkJob(t, apis[i%2], s, fmt.Sprintf("either-%d", i), start))
		}
		requireDeliveredOnce(t, s, due, 60*time.Second)
	})

	run("a quota stays exact under PUTs over both APIs", func(t *testing.T) {
		coll := "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/quota"
		status, body := apis[1].do(t, http.MethodPut, coll, map[string]any{"properties": map[string]any{
			"sku": map[string]any{"name": "Standard"}, "quota": map[string]any{"maxJobCount": 10}}})
		require.Equal(t, http.StatusCreated, status, body)
		statuses := make([]int, 30)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Go(func() {
				statuses[i], _ = apis[i%2].do(t, http.MethodPut, fmt.Sprintf("%s/jobs/q%02d", coll, i),
					sinkJob(s, "quota", time.Now().Add(time.Hour), nil))
			})
		}
		wg.Wait()
		counts := map[int]int{}
		for _, st := range statuses {
			counts[st]++
		}
		require.Equal(t, map[int]int{http.StatusCreated: 10, http.StatusConflict: 20}, counts)
		for _, api := range apis {
			require.Eventually(t, func() bool {
				status, list, err := api.get(coll + "/jobs")
				items, _ := list["value"].([]any)
				return err == nil && status == http.StatusOK && len(items) == 10
			}, 20*time.Second, 250*time.Millisecond, "both APIs list the 10 jobs")
		}
	})

	run("the worker running an action is killed", func(t *testing.T) {
		s.holdNext("/inflight", 1)
		due := time.Now().Add(3 * time.Second).Truncate(time.Second)
		job := putFiring(t, apis[0], "inflight", due, lostWorkerJob(s, "inflight", due))
		key := s.waitHeld(t, 30*time.Second)
		job.requireRuns(t, key)
		i := workerOf(t, workers, s.heldRemote(key))
		handedOff(t, c.FrontendAddress(), c.Namespace(), "job:s/rg/c/inflight")
		workers[i].kill(t)
		// The attempt's heartbeat stops with the worker: the server takes
		// it for lost, and the other worker runs the retry under the same
		// key. The lost attempt counts as a failed one.
		require.Eventually(t, func() bool { _, done := s.counts(key); return done == 1 },
			lostAttemptRecovery, 200*time.Millisecond, "the surviving worker retries the action")
		requireCounters(t, apis[1], "inflight", "completed", 1, 1, 0)
		_, completed := s.counts(key)
		require.Equal(t, 1, completed, "one delivery completed; the killed one never did")
		requireHistoryRow(t, apis[1], "inflight", "Completed", "")
	})
	revive()

	run("with every worker stopped, reads answer", func(t *testing.T) {
		for _, w := range workers {
			w.stop(t, syscall.SIGTERM)
		}
		for _, api := range apis {
			for _, path := range []string{
				crashCollection, crashCollection + "/jobs/inflight", crashCollection + "/jobs",
				crashCollection + "/jobs/inflight/history", "/subscriptions/s/providers/Microsoft.Scheduler/jobCollections",
			} {
				status, body, err := api.get(path)
				require.NoError(t, err, path)
				require.Equal(t, http.StatusOK, status, "%s: %v", path, body)
			}
		}
		st, err := apis[0].status("inflight")
		require.NoError(t, err)
		require.Equal(t, "completed", st["state"], "the last written state")
	})
	revive()

	run("the Temporal server stops for 30 s", func(t *testing.T) {
		job := putSinkJob(t, apis[1], s, "outage", time.Now().Add(15*time.Second).Truncate(time.Second))
		require.NoError(t, c.Server.Stop())
		down := time.Now()
		var answers int
		for time.Since(down) < 30*time.Second {
			for _, api := range apis {
				resp, err := http.Get(api.api + crashCollection + "/jobs/outage?api-version=2016-03-01")
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "while Temporal is down")
				require.NotEmpty(t, resp.Header.Get("Retry-After"))
				answers++
			}
			time.Sleep(time.Second)
		}
		t.Logf("%d answers of 503 with Retry-After while Temporal was down", answers)
		require.NoError(t, c.Server.Start(t.Context()))
		// The occurrence fell due in the outage: the workers reconnect on
		// their own and run it late, within the catch-up window.
		requireDeliveredOnce(t, s, []firing{job}, 2*time.Minute)
		requireCounters(t, apis[0], "outage", "completed", 1, 0, 0)
	})
	revive()

	run("the workers restart one by one onto a new build under load", func(t *testing.T) {
		// A binary of its own link, as a release's would be; the code is
		// the same, as a rollout's is where workflows are concerned (a
		// changed workflow keeps the old path: workflows/versions.go).
		next := filepath.Join(t.TempDir(), "recur")
		out, err := exec.Command("go", "build", "-ldflags=-X main.rolloutBuild=next", "-o", next, ".").CombinedOutput()
		require.NoError(t, err, "%s", out)
		// One job falls due every second while the workers restart.
		first := time.Now().Add(8 * time.Second).Truncate(time.Second)
		var due []firing
		for i := range 30 {
			due = append(due, putSinkJob(t, apis[i%2], s, fmt.Sprintf("rolling-%02d", i), first.Add(time.Duration(i)*time.Second)))
		}
		ctx, stopLoad := context.WithCancel(t.Context())
		loadDone := make(chan map[int]int)
		go func() { loadDone <- readLoad(ctx, apis) }()
		time.Sleep(time.Until(first.Add(5 * time.Second)))
		for i, w := range workers {
			w.stop(t, syscall.SIGTERM)
			workers[i] = clusterProcess(t, next, dir, onCluster(t, c, commands["worker"]))
			time.Sleep(5 * time.Second)
		}
		keys := requireDeliveredOnce(t, s, due, time.Minute)
		stopLoad()
		answers := <-loadDone
		t.Logf("reads during the restarts: %v", answers)
		require.Equal(t, []int{http.StatusOK}, statusesOf(answers), "every read under load answered 200")
		for _, k := range keys {
			raw, _ := s.counts(k)
			require.Equal(t, 1, raw, "%s: a graceful restart delivers nothing twice", k)
		}
	})
	s.report(t)
}

// requireDeliveredOnce waits until every job has a completed delivery, and
// fails unless each ran one occurrence, the one it should, completed once.
// It returns their occurrences' keys.
func requireDeliveredOnce(t *testing.T, s *sink, fs []firing, within time.Duration) []string {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, f := range fs {
			keys := s.keysOf(f.name)
			if len(keys) == 0 {
				return false
			}
			if _, completed := s.counts(keys[0]); completed == 0 {
				return false
			}
		}
		return true
	}, within, 200*time.Millisecond, "every occurrence delivered")
	var keys []string
	for _, f := range fs {
		ks := s.keysOf(f.name)
		require.Len(t, ks, 1, "%s ran one occurrence", f.name)
		f.requireRuns(t, ks[0])
		_, completed := s.counts(ks[0])
		require.Equal(t, 1, completed, "%s completed once", ks[0])
		keys = append(keys, ks[0])
	}
	return keys
}

// readLoad GETs the jobs and their list over both APIs until ctx ends, and
// counts the answers by status.
func readLoad(ctx context.Context, apis []*devProcess) map[int]int {
	counts := map[int]int{}
	for i := 0; ctx.Err() == nil; i++ {
		path := crashCollection + "/jobs"
		if i%2 == 1 {
			path += fmt.Sprintf("/rolling-%02d", i%30)
		}
		status, _, err := apis[i%2].get(path)
		if err != nil {
			status = -1
		}
		counts[status]++
		time.Sleep(20 * time.Millisecond)
	}
	return counts
}

func statusesOf(m map[int]int) []int {
	var keys []int
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// runIn runs bin with args in dir.
func runIn(dir, bin string, args ...string) ([]byte, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// workerOf returns the index of the worker process that holds the TCP
// connection whose local address is remote (the sink's view of it), read
// from /proc: the connection's socket inode, then the process that has it
// open.
func workerOf(t *testing.T, workers []*devProcess, remote string) int {
	t.Helper()
	_, portText, err := net.SplitHostPort(remote)
	require.NoError(t, err)
	port, err := strconv.Atoi(portText)
	require.NoError(t, err)
	inode := socketInode(t, port)
	for i, w := range workers {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", w.cmd.Process.Pid))
		require.NoError(t, err)
		for _, fd := range fds {
			link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", w.cmd.Process.Pid, fd.Name()))
			if err == nil && link == "socket:["+inode+"]" {
				return i
			}
		}
	}
	t.Fatalf("no worker holds the connection from %s", remote)
	return -1
}

// socketInode returns the inode of the IPv4 TCP socket bound to local
// port port, from /proc/net/tcp.
func socketInode(t *testing.T, port int) string {
	t.Helper()
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		require.NoError(t, err)
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 {
				continue
			}
			local := f[1]
			if strings.HasSuffix(local, fmt.Sprintf(":%04X", port)) {
				return f[9]
			}
		}
	}
	t.Fatalf("no socket on local port %d", port)
	return ""
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
