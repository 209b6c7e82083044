package docker

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/debian"
)

// installPrometheus installs Debian's prometheus package, which brings
// promtool, when it is missing.
func installPrometheus(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	require.NoError(t, debian.Install(ctx, "prometheus", func() bool {
		return debian.Executable("/usr/bin/prometheus") && debian.Executable("/usr/bin/promtool")
	}))
}

// promtool runs promtool in dir and fails the test with its output when
// it fails.
func promtool(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "/usr/bin/promtool", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// TestAlertRulesPassPromtool checks the shipped rules and runs their unit
// tests (prometheus/recur-rules_test.yml) with promtool, and checks the
// shipped Prometheus config with a token file in place of the compose
// file's secret.
func TestAlertRulesPassPromtool(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it needs Debian's prometheus package")
	}
	installPrometheus(t)
	out := promtool(t, "prometheus", "check", "rules", "recur-rules.yml")
	require.Contains(t, out, "SUCCESS: 5 rules found")
	out = promtool(t, "prometheus", "test", "rules", "recur-rules_test.yml")
	require.Contains(t, out, "SUCCESS")

	dir := t.TempDir()
	config, err := os.ReadFile("prometheus/prometheus.yml")
	require.NoError(t, err)
	token := filepath.Join(dir, "prometheus-token")
	require.NoError(t, os.WriteFile(token, []byte("operator-token-0123456789"), 0o600))
	require.Contains(t, string(config), "credentials_file: /run/secrets/prometheus-token")
	config = []byte(strings.Replace(string(config), "/run/secrets/prometheus-token", token, 1))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), config, 0o644))
	rules, err := os.ReadFile("prometheus/recur-rules.yml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "recur-rules.yml"), rules, 0o644))
	out = promtool(t, dir, "check", "config", "prometheus.yml")
	require.Contains(t, out, "SUCCESS: 1 rule files found")
}

// TestComposeRunsTheTestedPrometheus: the compose file's Prometheus is
// the version of Debian's package, which promtool and the alerting tests
// (e2e/alerting) run.
func TestComposeRunsTheTestedPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it needs Debian's prometheus package")
	}
	installPrometheus(t)
	out, err := exec.CommandContext(t.Context(), "/usr/bin/prometheus", "--version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	tested := regexp.MustCompile(`prometheus, version (\d+\.\d+\.\d+)`).FindStringSubmatch(string(out))
	require.NotNil(t, tested, "%s", out)
	compose, err := os.ReadFile("compose.yaml")
	require.NoError(t, err)
	require.Contains(t, string(compose), "image: prom/prometheus:v"+tested[1]+"\n")
}

// TestDashboardReadsTheProvisionedPrometheus: every panel of the
// dashboard queries the data source the provisioning file defines, by
// its uid, with a PromQL expression (e2e/alerting evaluates each one
// against a real Prometheus).
func TestDashboardReadsTheProvisionedPrometheus(t *testing.T) {
	var dashboard struct {
		UID    string `json:"uid"`
		Panels []struct {
			ID         int    `json:"id"`
			Title      string `json:"title"`
			Datasource struct {
				Type string `json:"type"`
				UID  string `json:"uid"`
			} `json:"datasource"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	data, err := os.ReadFile("grafana/dashboards/recur.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &dashboard))
	require.NotEmpty(t, dashboard.UID)
	source, err := os.ReadFile("grafana/provisioning/datasources/prometheus.yml")
	require.NoError(t, err)
	uid := regexp.MustCompile(`(?m)^\s+uid: (\S+)$`).FindStringSubmatch(string(source))
	require.NotNil(t, uid)
	require.GreaterOrEqual(t, len(dashboard.Panels), 8)
	ids := map[int]bool{}
	for _, p := range dashboard.Panels {
		require.False(t, ids[p.ID], "panel id %d twice", p.ID)
		ids[p.ID] = true
		require.Equal(t, "prometheus", p.Datasource.Type, p.Title)
		require.Equal(t, uid[1], p.Datasource.UID, p.Title)
		require.NotEmpty(t, p.Targets, p.Title)
		for _, target := range p.Targets {
			require.NotEmpty(t, target.Expr, p.Title)
		}
	}
	provider, err := os.ReadFile("grafana/provisioning/dashboards/recur.yml")
	require.NoError(t, err)
	require.Contains(t, string(provider), "path: /etc/grafana/dashboards", "where compose.yaml mounts grafana/dashboards")
}
