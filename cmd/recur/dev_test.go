package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/syncbuf"
)

// devProcess is `recur dev` running as a child process.
type devProcess struct {
	cmd      *exec.Cmd
	api      string
	ui       string
	temporal string // the frontend's host:port, for dev
	dir      string // the working directory; the test's when empty
	output   *syncbuf.Buffer
	done     chan error
}

// startDev starts the binary in dev mode on dataDir with free ports and
// waits until /readyz answers 200.
func startDev(t *testing.T, bin, dataDir string) *devProcess {
	t.Helper()
	apiPort, temporalPort, uiPort := freePort(t), freePort(t), freePort(t)
	p := &devProcess{
		api:      "http://127.0.0.1:" + strconv.Itoa(apiPort),
		ui:       "http://127.0.0.1:" + strconv.Itoa(uiPort),
		temporal: "127.0.0.1:" + strconv.Itoa(temporalPort),
		output:   &syncbuf.Buffer{},
		done:     make(chan error, 1),
	}
	p.start(t, bin, "dev", "--data-dir", dataDir,
		"--http-addr", "127.0.0.1:"+strconv.Itoa(apiPort),
		"--temporal-port", strconv.Itoa(temporalPort), "--ui-port", strconv.Itoa(uiPort), "--retention", "3d")
	return p
}

// start runs the binary with args and waits until its /readyz answers 200.
func (p *devProcess) start(t *testing.T, bin string, args ...string) {
	t.Helper()
	p.startEnv(t, bin, nil, args...)
}

// startEnv is start with more environment variables.
func (p *devProcess) startEnv(t *testing.T, bin string, env []string, args ...string) {
	t.Helper()
	p.launchEnv(t, bin, env, args...)
	require.Eventually(t, func() bool {
		resp, err := http.Get(p.api + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 90*time.Second, 250*time.Millisecond, "recur %s never became ready:\n%s", args[0], p.output)
}

// launch runs the binary with args; the test's end kills it if it still
// runs.
func (p *devProcess) launch(t *testing.T, bin string, args ...string) {
	t.Helper()
	p.launchEnv(t, bin, nil, args...)
}

// stop sends sig and expects a clean exit.
func (p *devProcess) stop(t *testing.T, sig os.Signal) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(sig))
	select {
	case err := <-p.done:
		require.NoError(t, err, "recur dev did not exit cleanly:\n%s", p.output)
	case <-time.After(60 * time.Second):
		t.Fatalf("recur dev did not stop within 60s:\n%s", p.output)
	}
}

func (p *devProcess) do(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, p.api+path+"?api-version=2016-03-01", rd)
	require.NoError(t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	if len(data) > 0 {
		require.NoError(t, json.Unmarshal(data, &out), string(data))
	}
	return resp.StatusCode, out
}

// TestDevKeepsJobsAcrossRestarts runs the real binary: dev mode starts the
// embedded server, the UI and the API; SIGTERM stops it cleanly; started
// again on the same data dir it finds the job where it was.
func TestDevKeepsJobsAcrossRestarts(t *testing.T) {
	bin := buildRecur(t)
	dataDir := t.TempDir()
	p := startDev(t, bin, dataDir)
	for _, want := range []string{"Temporal frontend listening", "Temporal Web UI listening", "REST API listening", "worker polling"} {
		require.Contains(t, p.output.String(), want)
	}
	resp, err := http.Get(p.ui + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the Web UI answers on its port")

	coll := "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
	status, body := p.do(t, http.MethodPut, coll, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second).Format(time.RFC3339)
	status, body = p.do(t, http.MethodPut, coll+"/jobs/hourly", map[string]any{"properties": map[string]any{
		"startTime":  start,
		"action":     map[string]any{"type": "Http", "request": map[string]any{"uri": "http://127.0.0.1:9/never", "method": "GET"}},
		"recurrence": map[string]any{"frequency": "Hour", "interval": 1},
	}})
	require.Equal(t, http.StatusCreated, status, body)
	p.stop(t, syscall.SIGTERM)
	require.Contains(t, p.output.String(), "embedded Temporal server stopped")

	p = startDev(t, bin, dataDir)
	status, body = p.do(t, http.MethodGet, coll+"/jobs/hourly", nil)
	require.Equal(t, http.StatusOK, status, body)
	props := body["properties"].(map[string]any)
	require.Equal(t, "enabled", props["state"])
	require.Equal(t, start, props["status"].(map[string]any)["nextExecutionTime"], fmt.Sprint(body))
	p.stop(t, syscall.SIGINT)
}

// TestDevRefusesAPortInUse: a port in use is a clear error, exit 1.
func TestDevRefusesAPortInUse(t *testing.T) {
	bin := buildRecur(t)
	busy := freePort(t)
	ln, err := listenOn(busy)
	require.NoError(t, err)
	defer ln.Close()
	out, err := exec.Command(bin, "dev", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:"+strconv.Itoa(busy),
		"--temporal-port", strconv.Itoa(freePort(t)), "--ui-port", "0").CombinedOutput()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr, "%s", out)
	require.Equal(t, 1, exitErr.ExitCode())
	require.Contains(t, string(out), "is in use")
}

// TestServeAgainstACluster runs `recur serve` against a Temporal server it
// did not start: it registers the search attributes, serves the API and
// runs the worker.
func TestServeAgainstACluster(t *testing.T) {
	bin := buildRecur(t)
	srv := startCluster(t, t.TempDir(), freePort(t))
	defer srv.Stop()

	apiPort := freePort(t)
	p := &devProcess{api: "http://127.0.0.1:" + strconv.Itoa(apiPort), output: &syncbuf.Buffer{}, done: make(chan error, 1)}
	p.start(t, bin, "serve", "--temporal-address", srv.FrontendAddress(), "--namespace", "recur-cluster", "--encryption-key-file", testKeyFile(t),
		"--http-addr", "127.0.0.1:"+strconv.Itoa(apiPort))
	status, body := p.do(t, http.MethodPut, "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c",
		map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	p.stop(t, syscall.SIGTERM)
}
