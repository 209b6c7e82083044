package alerting

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/debian"
	"github.com/recurhq/recur/internal/freeport"
	"github.com/recurhq/recur/internal/syncbuf"
)

// shipped is the directory of the shipped Prometheus files.
const shipped = "../../docker/prometheus"

// prometheus is a Prometheus server the test started, and its HTTP API.
type prometheus struct {
	url string
	log *syncbuf.Buffer
}

// startPrometheus runs Debian's prometheus (installing it when missing)
// with the shipped config and rules, derived for a test: it scrapes
// target (host:port) with token every second and evaluates every second,
// and each rule's `for:` is a few seconds. The thresholds and expressions
// are the shipped ones.
func startPrometheus(t *testing.T, target, token string) *prometheus {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	require.NoError(t, debian.Install(ctx, "prometheus", func() bool { return debian.Executable("/usr/bin/prometheus") }))

	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "prometheus-token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token), 0o600))
	config := derive(t, filepath.Join(shipped, "prometheus.yml"), map[string]string{
		"scrape_interval: 15s":                            "scrape_interval: 1s",
		"evaluation_interval: 15s":                        "evaluation_interval: 1s",
		`targets: ["recur:8080"]`:                         `targets: ["` + target + `"]`,
		"credentials_file: /run/secrets/prometheus-token": "credentials_file: " + tokenFile,
	})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), config, 0o644))
	rules, err := os.ReadFile(filepath.Join(shipped, "recur-rules.yml"))
	require.NoError(t, err)
	fors := regexp.MustCompile(`(?m)^(\s+for:\s*)\S+$`)
	require.NotEmpty(t, fors.FindAll(rules, -1), "the shipped rules wait with for:")
	rules = fors.ReplaceAll(rules, []byte("${1}3s"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "recur-rules.yml"), rules, 0o644))

	ports, err := freeport.Pick("127.0.0.1", 1)
	require.NoError(t, err)
	p := &prometheus{url: "http://127.0.0.1:" + strconv.Itoa(ports[0]), log: &syncbuf.Buffer{}}
	cmd := exec.Command("/usr/bin/prometheus", "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address=127.0.0.1:"+strconv.Itoa(ports[0]),
		"--log.level=warn")
	cmd.Stdout, cmd.Stderr = p.log, p.log
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	require.Eventually(t, func() bool {
		resp, err := http.Get(p.url + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 60*time.Second, 200*time.Millisecond, "prometheus did not get ready:\n%s", p.log)
	return p
}

// derive returns the file at path with each key of replace replaced by
// its value, each found exactly once: the test fails when the shipped
// file changes shape rather than run on something else.
func derive(t *testing.T, path string, replace map[string]string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(b)
	for old, new := range replace {
		require.Equal(t, 1, strings.Count(s, old), "%s holds %q once", path, old)
		s = strings.Replace(s, old, new, 1)
	}
	return []byte(s)
}

// get calls the Prometheus HTTP API and decodes its data into out; a
// status other than success is an error.
func (p *prometheus) get(path string, params url.Values, out any) error {
	resp, err := http.Get(p.url + path + "?" + params.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var envelope struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
		Warnings  []string        `json:"warnings"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	if envelope.Status != "success" {
		return fmt.Errorf("GET %s %s: %s: %s", path, params.Encode(), envelope.ErrorType, envelope.Error)
	}
	if len(envelope.Warnings) > 0 {
		return fmt.Errorf("GET %s %s: warnings %v", path, params.Encode(), envelope.Warnings)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(envelope.Data, out)
}

// sample is one series of an instant query's answer.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// query evaluates expr now and returns its series; a scalar answer is
// one series without labels.
func (p *prometheus) query(expr string) ([]sample, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := p.get("/api/v1/query", url.Values{"query": {expr}}, &data); err != nil {
		return nil, err
	}
	switch data.ResultType {
	case "vector":
		var out []sample
		return out, json.Unmarshal(data.Result, &out)
	case "scalar":
		var v [2]any
		return []sample{{Value: v}}, json.Unmarshal(data.Result, &v)
	}
	return nil, fmt.Errorf("query %s: a %s", expr, data.ResultType)
}

// alert is one of Prometheus's alerts.
type alert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
	Value  string            `json:"value"`
}

// alerts returns the alerts pending or firing now.
func (p *prometheus) alerts() ([]alert, error) {
	var data struct {
		Alerts []alert `json:"alerts"`
	}
	return data.Alerts, p.get("/api/v1/alerts", nil, &data)
}

// rule is one alert rule as Prometheus loaded and last evaluated it.
type rule struct {
	Name      string `json:"name"`
	Query     string `json:"query"`
	Health    string `json:"health"`
	LastError string `json:"lastError"`
	Type      string `json:"type"`
}

// rules returns every rule Prometheus loaded.
func (p *prometheus) rules() ([]rule, error) {
	var data struct {
		Groups []struct {
			Rules []rule `json:"rules"`
		} `json:"groups"`
	}
	if err := p.get("/api/v1/rules", nil, &data); err != nil {
		return nil, err
	}
	var out []rule
	for _, g := range data.Groups {
		out = append(out, g.Rules...)
	}
	return out, nil
}
