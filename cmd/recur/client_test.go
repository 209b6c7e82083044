package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/internal/recurtest"
)

// cliResult is what one recur command did.
type cliResult struct {
	code           int
	stdout, stderr string
}

// recurCLI runs recur in process with stdin.
func recurCLI(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr)
	return cliResult{code, stdout.String(), stderr.String()}
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// rows reads a table: one map from column to cell for each row.
func (r cliResult) rows(t *testing.T) []map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	require.NotEmpty(t, lines, "%s", r)
	gap := regexp.MustCompile(`\s{2,}`)
	header := gap.Split(strings.TrimSpace(lines[0]), -1)
	var rows []map[string]string
	for _, l := range lines[1:] {
		cells := gap.Split(strings.TrimSpace(l), -1)
		require.Len(t, cells, len(header), "row %q of\n%s", l, r)
		row := map[string]string{}
		for i, h := range header {
			row[h] = cells[i]
		}
		rows = append(rows, row)
	}
	return rows
}

// json decodes stdout.
func (r cliResult) json(t *testing.T) map[string]any {
	t.Helper()
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), "%s", r)
	return out
}

// names returns the NAME column of a table.
func names(rows []map[string]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r["NAME"])
	}
	return out
}

// clearClientEnv leaves none of the client's variables set, so that the
// test sees only what it sets.
func clearClientEnv(t *testing.T) {
	for _, v := range []string{"RECUR_SERVER", "RECUR_SUBSCRIPTION", "RECUR_RESOURCE_GROUP", "RECUR_COLLECTION", "RECUR_JOB", "RECUR_TOKEN"} {
		t.Setenv(v, "")
	}
}

// jobJSON is a job calling target every hour from an hour from now: it
// runs only when run by hand.
func jobJSON(target string, start time.Time) string {
	return fmt.Sprintf(`{"properties":{"startTime":%q,
		"action":{"type":"Http","request":{"uri":%q,"method":"POST","body":"hello"},"retryPolicy":{"retryType":"None"}},
		"recurrence":{"frequency":"Hour","interval":1}}}`, start.Format(time.RFC3339), target)
}

// eventually runs the command until check accepts its result; visibility,
// which lists read, lags behind the workflows.
func eventually(t *testing.T, check func(cliResult) bool, stdin string, args ...string) cliResult {
	t.Helper()
	var last cliResult
	require.Eventually(t, func() bool {
		last = recurCLI(t, stdin, args...)
		return check(last)
	}, 30*time.Second, 250*time.Millisecond, "recur %v; last:\n%s", args, &last)
	return last
}

// TestClient runs recur jobs and recur collections against a real recur:
// Temporal in process, the worker and the REST API.
func TestClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it runs the whole client against a real recur (about 10 s)")
	}
	clearClientEnv(t)
	st, err := recurtest.Start()
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	rg1 := []string{"--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg1"}
	at := func(args ...string) []string { return append(args, rg1...) }

	t.Run("collections", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "coll.json")
		require.NoError(t, os.WriteFile(file, []byte(`{"location":"westeurope","properties":{"sku":{"name":"Standard"}}}`), 0o600))
		res := recurCLI(t, "", at("collections", "put", "coll-a", "-f", file)...)
		require.Equal(t, 0, res.code, "%s", res)
		require.Equal(t, []map[string]string{{"NAME": "coll-a", "RESOURCE GROUP": "rg1", "STATE": "enabled",
			"SKU": "Standard", "MAX JOBS": "50", "MAX RECURRENCE": "every minute", "LOCATION": "westeurope"}}, res.rows(t))
		res = recurCLI(t, `{"location":"northeurope","properties":{"sku":{"name":"Free"}}}`,
			"collections", "put", "--collection", "coll-b", "-f", "-", "--server", st.API.URL, "--subscription", "sub1", "--resource-group", "rg2")
		require.Equal(t, 0, res.code, "%s", res)

		res = recurCLI(t, "", at("collections", "get", "coll-a", "-o", "json")...)
		require.Equal(t, 0, res.code, "%s", res)
		body := res.json(t)
		require.Equal(t, "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/coll-a", body["id"])
		require.Equal(t, "Standard", body["properties"].(map[string]any)["sku"].(map[string]any)["name"])
		require.Contains(t, res.stdout, "\n  \"id\"", "pretty printed")

		res = eventually(t, func(r cliResult) bool { return r.code == 0 && len(r.rows(t)) == 1 }, "", at("collections", "list")...)
		require.Equal(t, []string{"coll-a"}, names(res.rows(t)))
		res = eventually(t, func(r cliResult) bool { return r.code == 0 && len(r.rows(t)) == 2 }, "",
			"collections", "list", "--server", st.API.URL, "--subscription", "sub1")
		rows := res.rows(t)
		require.Equal(t, []string{"coll-a", "coll-b"}, names(rows))
		require.Equal(t, "rg2", rows[1]["RESOURCE GROUP"])
		require.Equal(t, "every hour", rows[1]["MAX RECURRENCE"])

		res = recurCLI(t, "", at("collections", "disable", "coll-a")...)
		require.Equal(t, 0, res.code, "%s", res)
		require.Equal(t, "job collection coll-a disabled\n", res.stdout)
		res = recurCLI(t, "", at("collections", "get", "coll-a")...)
		require.Equal(t, "disabled", res.rows(t)[0]["STATE"], "%s", res)
		res = recurCLI(t, "", at("collections", "enable", "coll-a", "-o", "json")...)
		require.Equal(t, 0, res.code, "%s", res)
		require.Empty(t, res.stdout, "the API answers enable without a body")
		res = recurCLI(t, "", at("collections", "get", "coll-a")...)
		require.Equal(t, "enabled", res.rows(t)[0]["STATE"], "%s", res)

		res = recurCLI(t, "", at("collections", "delete", "coll-a")...)
		require.Equal(t, 0, res.code, "%s", res)
		require.Equal(t, "job collection coll-a deleted\n", res.stdout)
		res = recurCLI(t, "", at("collections", "get", "coll-a")...)
		require.Equal(t, 1, res.code, "%s", res)
		require.Regexp(t, `^recur: (ResourceNotFound|JobCollectionNotFound): .+\n$`, res.stderr)
	})

	got := make(chan string, 16)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- string(body)
	}))
	t.Cleanup(target.Close)
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second)

	t.Run("jobs", func(t *testing.T) {
		res := recurCLI(t, `{"properties":{}}`, at("collections", "put", "reports", "-f", "-")...)
		require.Equal(t, 0, res.code, "%s", res)
		file := filepath.Join(t.TempDir(), "job.json")
		require.NoError(t, os.WriteFile(file, []byte(jobJSON(target.URL, start)), 0o600))
		res = recurCLI(t, "", at("jobs", "put", "--collection", "reports", "--job", "nightly", "-f", file)...)
		require.Equal(t, 0, res.code, "%s", res)
		require.Equal(t, []map[string]string{{"NAME": "nightly", "STATE": "enabled", "RECURRENCE": "every hour",
			"NEXT RUN": start.Format(time.RFC3339), "LAST RUN": "-", "EXECUTIONS": "0", "FAILURES": "0", "FAULTS": "0"}}, res.rows(t))
		weekly := `{"properties":{"startTime":"2026-01-01T00:00:00Z","action":{"type":"Http","request":{"uri":"` + target.URL + `","method":"GET"}},
			"recurrence":{"frequency":"Week","interval":2,"schedule":{"weekDays":["Monday"],"hours":[2],"minutes":[30]},"timeZone":"Europe/Berlin","count":50}}}`
		res = recurCLI(t, weekly, at("jobs", "put", "weekly", "--collection", "reports", "-f", "-", "-o", "json")...)
		require.Equal(t, 0, res.code, "%s", res)
		require.Equal(t, "reports/weekly", res.json(t)["name"])

		res = eventually(t, func(r cliResult) bool { return r.code == 0 && len(r.rows(t)) == 2 }, "", at("jobs", "list", "--collection", "reports")...)
		rows := res.rows(t)
		require.Equal(t, []string{"nightly", "weekly"}, names(rows))
		require.Equal(t, "every 2 weeks; minutes 30; hours 2; weekdays monday; Europe/Berlin; 50 times", rows[1]["RECURRENCE"])
		res = recurCLI(t, "", at("jobs", "list", "--collection", "reports", "-o", "json")...)
		require.Equal(t, 0, res.code, "%s", res)
		list := res.json(t)
		require.Len(t, list["value"], 2)
		require.NotContains(t, list, "nextLink")
		res = recurCLI(t, "", at("jobs", "list", "--collection", "reports", "--state", "Disabled")...)
		require.Equal(t, 0, res.code, "%s", res)
		require.Empty(t, res.rows(t), "no job is disabled")

		res = recurCLI(t, "", at("jobs", "run", "nightly", "--collection", "reports")...)
		require.Equal(t, 0, res.code, "%s", res)
		require.Equal(t, "job nightly started\n", res.stdout)
		select {
		case body := <-got:
			require.Equal(t, "hello", body)
		case <-time.After(30 * time.Second):
			t.Fatal("the run reached no target")
		}
		res = eventually(t, func(r cliResult) bool { return r.code == 0 && len(r.rows(t)) == 1 }, "",
			at("jobs", "history", "nightly", "--collection", "reports")...)
		row := res.rows(t)[0]
		require.Equal(t, "MainAction", row["ACTION"])
		require.Equal(t, "Completed", row["STATUS"])
		require.Equal(t, "0", row["RETRY"])
		_, err := time.Parse(time.RFC3339, row["TIME"])
		require.NoError(t, err)
		res = recurCLI(t, "", at("jobs", "history", "nightly", "--collection", "reports", "--status", "Failed")...)
		require.Equal(t, 0, res.code, "%s", res)
		require.Empty(t, res.rows(t), "no run failed")
		res = eventually(t, func(r cliResult) bool { return r.code == 0 && r.rows(t)[0]["EXECUTIONS"] == "1" }, "",
			at("jobs", "get", "nightly", "--collection", "reports")...)
		require.NotEqual(t, "-", res.rows(t)[0]["LAST RUN"])

		res = recurCLI(t, "", at("jobs", "delete", "weekly", "--collection", "reports")...)
		require.Equal(t, 0, res.code, "%s", res)
		require.Equal(t, "job weekly deleted\n", res.stdout)
		res = recurCLI(t, "", at("jobs", "get", "weekly", "--collection", "reports")...)
		require.Equal(t, 1, res.code, "%s", res)
		require.Regexp(t, `^recur: ResourceNotFound: .*weekly.*\n$`, res.stderr)
		require.Empty(t, res.stdout)
	})

	t.Run("failures", func(t *testing.T) {
		var fixed atomic.Bool
		calls := make(chan string, 4)
		flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls <- r.Header.Get("Idempotency-Key")
			if !fixed.Load() {
				http.Error(w, "down", http.StatusInternalServerError)
			}
		}))
		t.Cleanup(flaky.Close)
		res := recurCLI(t, `{"properties":{}}`, at("collections", "put", "failing", "-f", "-")...)
		require.Equal(t, 0, res.code, "%s", res)
		res = recurCLI(t, jobJSON(flaky.URL, start), at("jobs", "put", "flaky", "--collection", "failing", "-f", "-")...)
		require.Equal(t, 0, res.code, "%s", res)
		res = recurCLI(t, "", at("jobs", "run", "flaky", "--collection", "failing")...)
		require.Equal(t, 0, res.code, "%s", res)
		<-calls
		res = eventually(t, func(r cliResult) bool { return r.code == 0 && len(r.rows(t)) == 1 }, "",
			at("jobs", "failures", "flaky", "--collection", "failing")...)
		row := res.rows(t)[0]
		require.Equal(t, "runNow", row["KIND"])
		require.Equal(t, "500 Internal Server Error", row["ANSWER"])
		require.Equal(t, "1", row["ATTEMPTS"])
		require.Regexp(t, `^\d{8}T\d{6}(\.\d+)?Z-run-now$`, row["FAILURE"])

		res = recurCLI(t, "", at("jobs", "rerun", "--collection", "failing", "--job", "flaky")...)
		require.Equal(t, 2, res.code, "%s", res)
		require.Contains(t, res.stderr, "no FAILURE given")
		fixed.Store(true)
		res = recurCLI(t, "", at("jobs", "rerun", "flaky", row["FAILURE"], "--collection", "failing")...)
		require.Equal(t, 0, res.code, "%s", res)
		require.Equal(t, "job flaky: failure queued to run again\n", res.stdout)
		select {
		case key := <-calls:
			require.Contains(t, key, "/rerun-1")
		case <-time.After(30 * time.Second):
			t.Fatal("the re-run reached no target")
		}
		res = recurCLI(t, "", at("jobs", "rerun", "flaky", "20200101T000000Z-scheduled", "--collection", "failing")...)
		require.Equal(t, 1, res.code, "%s", res)
		require.Regexp(t, `^recur: ResourceNotFound: .*20200101T000000Z-scheduled.*\n$`, res.stderr)
	})

	t.Run("environment", func(t *testing.T) {
		t.Setenv("RECUR_SERVER", st.API.URL)
		t.Setenv("RECUR_SUBSCRIPTION", "sub1")
		t.Setenv("RECUR_RESOURCE_GROUP", "rg1")
		t.Setenv("RECUR_COLLECTION", "reports")
		t.Setenv("RECUR_JOB", "nightly")
		res := recurCLI(t, "", "jobs", "get")
		require.Equal(t, 0, res.code, "%s", res)
		require.Equal(t, []string{"nightly"}, names(res.rows(t)))
		// Flags and arguments win over the environment.
		res = recurCLI(t, "", "jobs", "get", "--job", "missing")
		require.Equal(t, 1, res.code, "%s", res)
		require.Contains(t, res.stderr, "recur: ResourceNotFound: ")
		t.Setenv("RECUR_SERVER", "http://127.0.0.1:1")
		res = recurCLI(t, "", "collections", "get", "--server", st.API.URL)
		require.Equal(t, 0, res.code, "%s", res)
		require.Equal(t, []string{"reports"}, names(res.rows(t)))
	})

	t.Run("a list of several pages", func(t *testing.T) {
		// The API pages lists by 100.
		const n = 105
		res := recurCLI(t, `{"properties":{"sku":{"name":"P20Premium"}}}`, at("collections", "put", "big", "-f", "-")...)
		require.Equal(t, 0, res.code, "%s", res)
		var (
			wg     sync.WaitGroup
			failed atomic.Pointer[cliResult]
			next   atomic.Int32
		)
		for range 4 {
			wg.Go(func() {
				for i := next.Add(1); i <= n; i = next.Add(1) {
					var stdout, stderr bytes.Buffer
					args := at("jobs", "put", fmt.Sprintf("job-%03d", i), "--collection", "big", "-f", "-", "-o", "json")
					if code := run(context.Background(), args, strings.NewReader(jobJSON(target.URL, start)), &stdout, &stderr); code != 0 {
						failed.Store(&cliResult{code, stdout.String(), stderr.String()})
					}
				}
			})
		}
		wg.Wait()
		require.Nil(t, failed.Load(), "a put failed")

		var want []string
		for i := 1; i <= n; i++ {
			want = append(want, fmt.Sprintf("job-%03d", i))
		}
		res = eventually(t, func(r cliResult) bool { return r.code == 0 && len(r.rows(t)) == n }, "", at("jobs", "list", "--collection", "big")...)
		require.Equal(t, want, names(res.rows(t)), "every page, in order, each job once")
		require.Empty(t, res.stderr, "no progress line when stderr is no terminal")
		res = recurCLI(t, "", at("jobs", "list", "--collection", "big", "-o", "json")...)
		require.Equal(t, 0, res.code, "%s", res)
		list := res.json(t)
		require.Len(t, list["value"], n)
		require.NotContains(t, list, "nextLink")

		// Behind a proxy that gives the API its own host, the nextLink
		// names the API, not the proxy: the client follows its query
		// through --server, and the token goes nowhere else.
		apiURL, err := url.Parse(st.API.URL)
		require.NoError(t, err)
		var listed atomic.Int32
		proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
			listed.Add(1)
			r.SetURL(apiURL)
		}})
		t.Cleanup(proxy.Close)
		res = recurCLI(t, "", "jobs", "list", "--collection", "big", "--server", proxy.URL, "--subscription", "sub1", "--resource-group", "rg1")
		require.Equal(t, 0, res.code, "%s", res)
		require.Equal(t, want, names(res.rows(t)))
		require.EqualValues(t, 2, listed.Load(), "both pages through the proxy")

		// On a terminal, a line counts the jobs fetched, then goes.
		server, err := parseServer(st.API.URL)
		require.NoError(t, err)
		var term bytes.Buffer
		c := &apiClient{server: server, http: http.DefaultClient, progress: &term}
		values, err := c.list(context.Background(), address{subscription: "sub1", resourceGroup: "rg1", collection: "big"}.jobsPath(), nil, "jobs")
		require.NoError(t, err)
		require.Len(t, values, n)
		line := "fetched 100 jobs…"
		require.Equal(t, "\r"+line+"\r"+strings.Repeat(" ", len([]rune(line)))+"\r", term.String())
	})

	t.Run("usage errors", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"jobs"}, "Usage: recur jobs VERB"},
			{[]string{"jobs", "frob"}, `recur jobs: unknown verb "frob"`},
			{[]string{"collections"}, "Usage: recur collections VERB"},
			{at("jobs", "get", "--bogus"), "Usage: recur jobs get [JOB]"},
			{at("jobs", "put", "x", "--collection", "c"), "recur jobs put: -f FILE is required"},
			{at("jobs", "get", "x", "--collection", "c", "-o", "yaml"), `recur jobs get: -o "yaml": want table or json`},
			{at("jobs", "get", "x", "y", "--collection", "c"), `recur jobs get: unexpected argument "y"`},
			{at("jobs", "list", "x", "--collection", "c"), `recur jobs list: unexpected argument "x"`},
			{[]string{"jobs", "get", "x", "--resource-group", "rg", "--collection", "c"},
				"recur jobs get: no subscription given: use --subscription or RECUR_SUBSCRIPTION"},
			{[]string{"jobs", "get", "x", "--subscription", "s", "--collection", "c"},
				"recur jobs get: no resource group given: use --resource-group or RECUR_RESOURCE_GROUP"},
			{at("jobs", "get", "x"), "recur jobs get: no job collection given: use --collection or RECUR_COLLECTION"},
			{at("jobs", "get", "--collection", "c"), "recur jobs get: no job given: name it as an argument, or use --job or RECUR_JOB"},
			{at("collections", "get"), "recur collections get: no job collection given: name it as an argument, or use --collection or RECUR_COLLECTION"},
			{[]string{"collections", "list", "--server", "127.0.0.1:8080", "--subscription", "s"}, `--server "127.0.0.1:8080": want the API's URL`},
		} {
			res := recurCLI(t, "", tc.args...)
			assert.Equal(t, 2, res.code, "%v: %s", tc.args, res)
			assert.Contains(t, res.stderr, tc.want, "%v", tc.args)
			assert.Empty(t, res.stdout, "%v", tc.args)
		}
	})

	t.Run("help", func(t *testing.T) {
		res := recurCLI(t, "", "help")
		require.Equal(t, 0, res.code)
		require.Contains(t, res.stdout, "recur jobs VERB")
		require.Contains(t, res.stdout, "recur collections VERB")
		for _, args := range [][]string{{"help", "jobs"}, {"jobs", "-h"}, {"jobs", "--help"}, {"jobs", "help"}} {
			res := recurCLI(t, "", args...)
			require.Equal(t, 0, res.code, "%v: %s", args, res)
			for _, want := range []string{"put", "history", "-server URL", "-subscription", "-resource-group", "-collection", "-job", "-token", "-o format"} {
				require.Contains(t, res.stdout, want, "%v", args)
			}
		}
		res = recurCLI(t, "", "help", "collections")
		require.Equal(t, 0, res.code, "%s", res)
		require.Contains(t, res.stdout, "disable  disable a job collection")
		require.NotContains(t, res.stdout, "-job")
		res = recurCLI(t, "", "jobs", "put", "-h")
		require.Equal(t, 0, res.code, "%s", res)
		require.Contains(t, res.stdout, "-f FILE")
	})
}

// TestClientServerUnreachable: a server that refuses connections is named.
func TestClientServerUnreachable(t *testing.T) {
	clearClientEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	server := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	res := recurCLI(t, "", "collections", "list", "--server", server, "--subscription", "s")
	require.Equal(t, 1, res.code, "%s", res)
	require.Equal(t, "recur: cannot reach the recur server at "+server+": connection refused; is recur running there? (--server, RECUR_SERVER)\n", res.stderr)
	require.Empty(t, res.stdout)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"collections", "list", "--server", server, "--subscription", "s"}, strings.NewReader(""), &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Equal(t, "recur: interrupted\n", stderr.String(), "Ctrl-C is no connection error")
}

// TestClientFollowsALongOperation: a 202 with a Location is polled, with
// the token, on --server whatever host the Location names, after each
// Retry-After, until it answers otherwise; that answer is the command's.
func TestClientFollowsALongOperation(t *testing.T) {
	clearClientEnv(t)
	const token = "client-test-token-0123456789"
	const op = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/operations/o"
	var polls atomic.Int32
	var last atomic.Int64
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c":
			w.Header().Set("Location", "http://elsewhere.invalid"+op+"?api-version="+api.APIVersion)
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusAccepted)
		case op:
			if since := time.Since(time.Unix(0, last.Load())); since < 900*time.Millisecond {
				t.Errorf("polled %s after the last answer, before its Retry-After", since)
			}
			if polls.Add(1) < 2 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusAccepted)
			}
		default:
			http.NotFound(w, r)
		}
		last.Store(time.Now().UnixNano())
	}))
	t.Cleanup(server.Close)
	res := recurCLI(t, "", "collections", "delete", "c", "--server", server.URL, "--subscription", "s",
		"--resource-group", "rg", "--token", token)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "job collection c deleted\n", res.stdout)
	require.EqualValues(t, 2, polls.Load(), "polled until it answered 200")
}

// TestClientBearerToken: the token from --token or RECUR_TOKEN reaches
// the API, and no output shows it, not even when it is refused.
func TestClientBearerToken(t *testing.T) {
	clearClientEnv(t)
	const token = "client-test-token-0123456789"
	tokens, err := api.ParseTokenList(token + "=sub1")
	require.NoError(t, err)
	st, err := recurtest.StartWith(recurtest.Config{Auth: tokens})
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	t.Setenv("RECUR_SERVER", st.API.URL)
	t.Setenv("RECUR_SUBSCRIPTION", "sub1")
	t.Setenv("RECUR_RESOURCE_GROUP", "rg1")
	t.Setenv("RECUR_COLLECTION", "secure")

	noToken := func(t *testing.T, r cliResult, tok string) {
		t.Helper()
		require.NotContains(t, r.stdout, tok)
		require.NotContains(t, r.stderr, tok)
	}
	res := recurCLI(t, `{"properties":{}}`, "collections", "put", "-f", "-")
	require.Equal(t, 1, res.code, "%s", res)
	require.Regexp(t, `^recur: AuthenticationFailed: `, res.stderr, "no token, no access")

	res = recurCLI(t, `{"properties":{}}`, "collections", "put", "-f", "-", "--token", token)
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, []string{"secure"}, names(res.rows(t)))
	noToken(t, res, token)

	t.Setenv("RECUR_TOKEN", token)
	res = recurCLI(t, "", "collections", "get", "-o", "json")
	require.Equal(t, 0, res.code, "%s", res)
	require.Equal(t, "secure", res.json(t)["name"])
	noToken(t, res, token)
	res = recurCLI(t, "", "collections", "get", "--subscription", "sub2")
	require.Equal(t, 1, res.code, "%s", res)
	require.Regexp(t, `^recur: SubscriptionNotFound: `, res.stderr, "the token is sub1's")
	noToken(t, res, token)
	for _, args := range [][]string{{"collections", "-h"}, {"collections", "get", "-h"}, {"collections", "get", "--bogus"}} {
		res = recurCLI(t, "", args...)
		noToken(t, res, token)
		require.Contains(t, res.stdout+res.stderr, "-token token", "%v", args)
	}

	const wrong = "not-the-token-0123456789"
	res = recurCLI(t, "", "collections", "get", "--token", wrong)
	require.Equal(t, 1, res.code, "%s", res)
	require.Regexp(t, `^recur: AuthenticationFailed: `, res.stderr)
	noToken(t, res, wrong)
	noToken(t, res, token)
}

// TestProgress: the progress line on a terminal, rewritten in place and
// blanked at the end; without a terminal nothing.
func TestProgress(t *testing.T) {
	var term bytes.Buffer
	p := progress{w: &term, noun: "jobs"}
	p.update(100)
	p.update(1000)
	p.update(50) // shorter: the rest of the longer line is blanked
	p.clear()
	require.Equal(t, "\rfetched 100 jobs…\rfetched 1000 jobs…\rfetched 50 jobs…  \r"+strings.Repeat(" ", 18)+"\r", term.String())

	var none progress
	none.update(100)
	none.clear() // nothing to write to, and no panic
	require.False(t, isTerminal(&term), "a buffer is no terminal")
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	defer f.Close()
	require.False(t, isTerminal(f), "a file is no terminal")
}
