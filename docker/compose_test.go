// Package docker holds recur's container files; its test checks the
// compose file with what runs without a Docker engine.
package docker

import (
	"context"
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
	"github.com/recurhq/recur/internal/temporalcluster"
)

// TestComposeFileIsValidAndRunsTheTestedServer checks compose.yaml as
// Debian's docker-compose reads it, and that the Temporal server and its
// admin tools are the version go.mod requires, the one the cluster tests
// run (internal/temporalcluster).
func TestComposeFileIsValidAndRunsTheTestedServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it needs Debian's docker-compose")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	const bin = "/usr/bin/docker-compose"
	require.NoError(t, debian.Install(ctx, "docker-compose", func() bool { return debian.Executable(bin) }))

	// A copy of the directory, with the secret files the compose file
	// names: config fails when they are missing.
	dir := t.TempDir()
	for _, name := range []string{"compose.yaml", "postgresql-init.sql", "Dockerfile", "dynamicconfig/recur.yaml",
		"prometheus/prometheus.yml", "prometheus/recur-rules.yml", "prometheus/recur-rules_test.yml",
		"grafana/provisioning/datasources/prometheus.yml", "grafana/provisioning/dashboards/recur.yml", "grafana/dashboards/recur.json"} {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "secrets"), 0o700))
	for _, name := range []string{"api-tokens.json", "encryption-keys.json", "prometheus-token"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "secrets", name), []byte("{}"), 0o600))
	}
	out, err := exec.CommandContext(ctx, bin, "-f", filepath.Join(dir, "compose.yaml"), "config").CombinedOutput()
	require.NoError(t, err, "%s", out)
	config := string(out)

	gomod, err := os.ReadFile("../go.mod")
	require.NoError(t, err)
	server := regexp.MustCompile(`(?m)^\s*go\.temporal\.io/server v(\S+)`).FindStringSubmatch(string(gomod))
	require.NotNil(t, server, "go.mod requires go.temporal.io/server")
	for _, image := range []string{"temporalio/server", "temporalio/admin-tools"} {
		tags := regexp.MustCompile(`image: `+regexp.QuoteMeta(image)+`:(\S+)`).FindAllStringSubmatch(config, -1)
		require.NotEmpty(t, tags, "compose.yaml runs %s", image)
		for _, tag := range tags {
			require.Equal(t, server[1], tag[1], "%s's tag", image)
		}
	}
	require.Contains(t, config, "image: postgres:"+temporalcluster.PostgresVersion+"\n", "PostgreSQL of the version the cluster tests run")
	require.NotContains(t, config, "auto-setup", "the deprecated auto-setup image")
	for _, service := range []string{"postgresql:", "temporal-schema:", "temporal:", "temporal-namespace:", "temporal-ui:", "recur:",
		"prometheus:", "grafana:"} {
		require.True(t, strings.Contains(config, "\n  "+service), "service %s", service)
	}
	// Prometheus and Grafana read the files under docker/ that the tests
	// check (prometheus_test.go, e2e/alerting).
	for _, mount := range []string{
		filepath.Join(dir, "prometheus") + ":/etc/prometheus:ro",
		filepath.Join(dir, "grafana", "provisioning") + ":/etc/grafana/provisioning:ro",
		filepath.Join(dir, "grafana", "dashboards") + ":/etc/grafana/dashboards:ro",
	} {
		require.Contains(t, config, mount)
	}
	require.Contains(t, config, "source: prometheus-token", "Prometheus gets the operator's token /metrics asks for")
}

// TestTheDynamicConfigIsTheClusterTests: the server of compose.yaml keeps
// as many writes of a shard in flight, and allows the namespace as many
// visibility calls, as the cluster tests' and the benchmarks'
// (internal/temporalcluster).
func TestTheDynamicConfigIsTheClusterTests(t *testing.T) {
	b, err := os.ReadFile("dynamicconfig/recur.yaml")
	require.NoError(t, err)
	for key, want := range map[string]int{
		"history.shardIOConcurrency":       temporalcluster.DefaultShardIOConcurrency,
		"frontend.namespaceRPS.visibility": temporalcluster.DefaultVisibilityRPS,
	} {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + `:\n\s+- value: (\d+)\n`).FindSubmatch(b)
		require.NotNil(t, m, "recur.yaml sets %s:\n%s", key, b)
		require.Equal(t, strconv.Itoa(want), string(m[1]), key)
	}
}
