package alerting

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/recurproc"
	"github.com/recurhq/recur/jobs"
)

// operatorToken is the API token Prometheus scrapes /metrics with, as the
// compose file's Prometheus does.
const operatorToken = "alerting-operator-token-0123456789"

// The collection of the test's jobs, and its label value.
var collection = jobs.Key{Subscription: "alerting-sub", ResourceGroup: "rg-1", Collection: "nightly.reports"}

// TestShippedAlertsFireOnARealRecur runs `recur dev` with API tokens and
// the collection label, and Debian's Prometheus scraping it with the
// shipped config and rules (derived for a test: 1 s intervals, `for:` of
// 3 s). A recurring job whose target answers 500 fires RecurFailureStreak;
// a one-shot job with a catch-up window of a second, whose due time passes
// while recur is stopped (SIGSTOP, the whole process with its embedded
// Temporal server), is missed and fires RecurMissedRuns; both carry the
// collection. Every rule evaluates without error and the two about a
// broken setup (no worker polling, Temporal unreachable) stay quiet;
// every dashboard query evaluates without error, and those that chart
// what happened are not empty.
func TestShippedAlertsFireOnARealRecur(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it builds recur, runs it and Debian's prometheus for about a minute")
	}
	work := t.TempDir()
	bin, err := recurproc.Build(work)
	require.NoError(t, err)
	tokens := filepath.Join(work, "api-tokens.json")
	require.NoError(t, os.WriteFile(tokens, []byte(`{"tokens":[{"name":"ops","token":"`+operatorToken+`","subscriptions":["*"]}]}`), 0o600))
	recur, err := recurproc.Start(bin, filepath.Join(work, "data"), filepath.Join(work, "recur.log"), false,
		"--api-tokens-file", tokens, "--metrics-collection-label", "--egress-allow-loopback")
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = syscall.Kill(recur.Pid(), syscall.SIGCONT)
		if err := recur.Stop(); err != nil {
			t.Errorf("stop recur: %v", err)
		}
	})
	prom := startPrometheus(t, strings.TrimPrefix(recur.API, "http://"), operatorToken)

	var answered500 atomic.Int32
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answered500.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(ok.Close)

	api := client{base: recur.API}
	coll := collection.CollectionID()
	api.put(t, coll, map[string]any{"properties": map[string]any{}})
	soon := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	action := func(uri string) map[string]any {
		return map[string]any{"type": "Http", "request": map[string]any{"uri": uri, "method": "POST"},
			"retryPolicy": map[string]any{"retryType": "None"}}
	}
	api.put(t, coll+"/jobs/failing-every-minute", map[string]any{"properties": map[string]any{
		"startTime": soon.Format(time.RFC3339), "action": action(failing.URL),
		"recurrence": map[string]any{"frequency": "Minute", "interval": 1},
	}})
	api.put(t, coll+"/jobs/once-ok", map[string]any{"properties": map[string]any{
		"startTime": soon.Format(time.RFC3339), "action": action(ok.URL),
	}})
	// Due while recur is stopped, and missed by more than its catch-up
	// window when it resumes.
	due := time.Now().UTC().Add(8 * time.Second).Truncate(time.Second)
	api.put(t, coll+"/jobs/missed-while-stopped", map[string]any{"properties": map[string]any{
		"startTime": due.Format(time.RFC3339), "action": action(ok.URL), "catchUpWindow": "PT1S",
	}})
	// recur is stopped from 3 s before the due time to 4 s after it: the
	// stop is what the test is about, so it sleeps through it.
	time.Sleep(time.Until(due.Add(-3 * time.Second)))
	require.NoError(t, syscall.Kill(recur.Pid(), syscall.SIGSTOP))
	time.Sleep(time.Until(due.Add(4 * time.Second)))
	require.NoError(t, syscall.Kill(recur.Pid(), syscall.SIGCONT))

	label := collection.MetricCollection()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		alerts, err := prom.alerts()
		if !assert.NoError(c, err) {
			return
		}
		for _, name := range []string{"RecurMissedRuns", "RecurFailureStreak"} {
			assert.True(c, firing(alerts, name, label), "%s firing for collection %s: %+v", name, label, alerts)
		}
	}, 3*time.Minute, time.Second, "recur log:\n%s\nprometheus log:\n%s", tail(recur.LogPath), prom.log)

	require.Positive(t, answered500.Load(), "the failing job's runs reached its target")
	// The job was missed, not run: its history says so.
	status, body := api.do(t, http.MethodGet, coll+"/jobs/missed-while-stopped/history", nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.Contains(t, string(body), "more than the catch-up window", "%s", body)

	// Every shipped rule is loaded and evaluates without error; those
	// about a broken setup stay quiet on a healthy one.
	loaded, err := prom.rules()
	require.NoError(t, err)
	shippedRules, err := os.ReadFile(filepath.Join(shipped, "recur-rules.yml"))
	require.NoError(t, err)
	names := regexp.MustCompile(`(?m)^\s+- alert: (\S+)$`).FindAllStringSubmatch(string(shippedRules), -1)
	require.Len(t, loaded, len(names))
	for i, r := range loaded {
		require.Equal(t, names[i][1], r.Name)
		require.Equal(t, "ok", r.Health, "%s: %s", r.Name, r.LastError)
		_, err := prom.query(r.Query)
		require.NoError(t, err, r.Name)
	}
	alerts, err := prom.alerts()
	require.NoError(t, err)
	for _, name := range []string{"RecurNoWorkerPolling", "RecurTemporalUnreachable", "RecurLatenessHigh"} {
		for _, a := range alerts {
			require.NotEqual(t, name, a.Labels["alertname"], "a healthy recur: %+v", a)
		}
	}

	outcomes, err := prom.query(`sum by (outcome) (recur_runs_total{collection="` + label + `"})`)
	require.NoError(t, err)
	require.Len(t, outcomes, 2, "runs completed and failed: %+v", outcomes)

	checkDashboard(t, prom)
}

// firing reports whether alerts has name firing for collection label.
func firing(alerts []alert, name, label string) bool {
	for _, a := range alerts {
		if a.Labels["alertname"] == name && a.Labels[jobs.MetricCollectionLabel] == label && a.State == "firing" {
			return true
		}
	}
	return false
}

// checkDashboard evaluates every query of the shipped dashboard, with
// Grafana's variables as they are when everything is selected, and wants
// data from the panels that chart what the test made happen.
func checkDashboard(t *testing.T, prom *prometheus) {
	t.Helper()
	var dashboard struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	data, err := os.ReadFile("../../docker/grafana/dashboards/recur.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &dashboard))
	variables := strings.NewReplacer(`$collection`, `.*`, `$__rate_interval`, `1m`)
	wantData := map[string]bool{"Jobs failing": true, "Missed in the last hour": true, "Lateness p99 (10 min)": true,
		"Workflow pollers": true, "Lateness p50 and p99": true, "Runs by outcome": true, "Failures": true,
		"Missed and postponed": true, "Jobs by state": true, "recur alerts": true}
	seen := 0
	for _, p := range dashboard.Panels {
		got := 0
		for _, target := range p.Targets {
			expr := variables.Replace(target.Expr)
			require.NotContains(t, expr, "$", "%s: a variable the test does not know", p.Title)
			series, err := prom.query(expr)
			require.NoError(t, err, "%s: %s", p.Title, expr)
			got += len(series)
		}
		if wantData[p.Title] {
			seen++
			require.Positive(t, got, "%s charts nothing", p.Title)
		}
	}
	require.Equal(t, len(wantData), seen, "every panel the test wants data from is on the dashboard")
}

// client speaks recur's API with the operator's token.
type client struct{ base string }

func (c client) do(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path+"?api-version=2016-03-01", rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+operatorToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

func (c client) put(t *testing.T, path string, body any) {
	t.Helper()
	status, out := c.do(t, http.MethodPut, path, body)
	require.Contains(t, []int{http.StatusOK, http.StatusCreated}, status, "PUT %s: %s", path, out)
}

// tail returns the last lines of the file at path.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(string(b), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}
