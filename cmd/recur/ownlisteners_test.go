package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/syncbuf"
)

// TestDevJobsNeverReachRecursOwnListeners runs the real binary with API
// tokens and loopback egress allowed explicitly, the most a tenant could
// be given: a tenant's HTTP jobs aimed at recur's REST API (by address and
// as localhost), the embedded Temporal frontend, the Web UI and pprof all
// fail, refused as recur's own listeners, while a job aimed at another
// loopback server succeeds. The policy the log shows lists every listener
// of the embedded server, the internal services' ports included.
func TestDevJobsNeverReachRecursOwnListeners(t *testing.T) {
	t.Parallel()
	bin := buildRecur(t)
	const token = "token-of-tenant-a-0123456789"
	apiPort, temporalPort, uiPort, pprofPort := freePort(t), freePort(t), freePort(t), freePort(t)
	p := &devProcess{api: "http://127.0.0.1:" + strconv.Itoa(apiPort), output: &syncbuf.Buffer{}, done: make(chan error, 1)}
	p.startEnv(t, bin, []string{"RECUR_API_TOKENS=" + token + "=sub-a"},
		"dev", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:"+strconv.Itoa(apiPort),
		"--temporal-port", strconv.Itoa(temporalPort), "--ui-port", strconv.Itoa(uiPort),
		"--pprof-addr", "127.0.0.1:"+strconv.Itoa(pprofPort), "--egress-allow-loopback")

	decoy := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(decoy.Close)
	send := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		data, err := json.Marshal(body)
		require.NoError(t, err)
		req, err := http.NewRequest(method, p.api+path+"?api-version=2016-03-01", bytes.NewReader(data))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		raw, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(raw, &out)
		return resp.StatusCode, out
	}
	coll := "/subscriptions/sub-a/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
	status, body := send(http.MethodPut, coll, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)

	targets := map[string]string{
		"api":       p.api + "/healthz",
		"localhost": "http://localhost:" + strconv.Itoa(apiPort) + "/healthz",
		"frontend":  "http://127.0.0.1:" + strconv.Itoa(temporalPort) + "/",
		"ui":        "http://127.0.0.1:" + strconv.Itoa(uiPort) + "/api/v1/namespaces",
		"pprof":     "http://127.0.0.1:" + strconv.Itoa(pprofPort) + "/debug/pprof/",
		"decoy":     decoy.URL,
	}
	for name, uri := range targets {
		status, body := send(http.MethodPut, coll+"/jobs/"+name, map[string]any{"properties": map[string]any{
			"action": map[string]any{"type": "Http", "request": map[string]any{"uri": uri, "method": "GET"},
				"retryPolicy": map[string]any{"retryType": "None"}}}})
		require.Equal(t, http.StatusCreated, status, "%s: %v", name, body)
	}
	rows := map[string]map[string]any{}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for name := range targets {
			_, body := send(http.MethodGet, coll+"/jobs/"+name+"/history", nil)
			list, _ := body["value"].([]any)
			if assert.Len(c, list, 1, name) {
				row, _ := list[0].(map[string]any)
				rows[name], _ = row["properties"].(map[string]any)
			}
		}
	}, 30*time.Second, 250*time.Millisecond, "every job ran once:\n%s", p.output)
	for name := range targets {
		row := rows[name]
		if name == "decoy" {
			require.Equal(t, "Completed", row["status"], "loopback is allowed: %v", row)
			continue
		}
		require.Equal(t, "Failed", row["status"], "%s: %v", name, row)
		require.Contains(t, row["message"], "a listener of recur itself; always refused", name)
	}

	out := p.output.String()
	for _, what := range []string{"recur's REST API", "the embedded Temporal frontend", "the embedded Temporal history service",
		"the embedded Temporal matching service", "the embedded Temporal worker service", "the Temporal Web UI", "recur's pprof"} {
		require.Contains(t, out, what, "the logged policy names it")
	}
	p.stop(t, os.Interrupt)
}
