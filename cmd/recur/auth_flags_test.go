package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// prepareSecurity registers the API's security flags, parses args and
// prepares the API's configuration for addr; it returns what prepare
// logged.
func prepareSecurity(t *testing.T, addr string, args ...string) (apiConfig, string, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var s apiSecurity
	var envs envDefaults
	s.register(fs, 0, &envs)
	if err := fs.Parse(args); err != nil {
		return apiConfig{}, "", err
	}
	if err := envs.err(); err != nil {
		return apiConfig{}, "", err
	}
	var logged bytes.Buffer
	cfg, err := s.prepare(context.Background(), addr, slog.New(slog.NewTextHandler(&logged, nil)))
	return cfg, logged.String(), err
}

// TestAllowedHostsAndTrustedProxiesFlags: --allowed-hosts and
// --trusted-proxies add to the lists their variables start; none of
// either by default; a bad entry stops the command.
func TestAllowedHostsAndTrustedProxiesFlags(t *testing.T) {
	cfg, logged, err := prepareSecurity(t, "127.0.0.1:8080")
	require.NoError(t, err)
	require.True(t, cfg.allowedHosts.Empty())
	require.Empty(t, cfg.trustedProxies, "no proxy is trusted unless named")
	require.Contains(t, logged, "web pages open in a browser cannot: requests from pages of other origins and sites")

	t.Setenv("RECUR_ALLOWED_HOSTS", "recur.example.com")
	t.Setenv("RECUR_TRUSTED_PROXIES", "10.0.0.0/8")
	cfg, _, err = prepareSecurity(t, "127.0.0.1:8080", "--allowed-hosts", ".corp.example,Recur.Internal",
		"--trusted-proxies", "127.0.0.1", "--trusted-proxies", "fd00::/8")
	require.NoError(t, err)
	require.Equal(t, "recur.example.com,recur.internal,*.corp.example", cfg.allowedHosts.String())
	require.Equal(t, "10.0.0.0/8,127.0.0.1/32,fd00::/8", cfg.trustedProxies.String())

	for _, bad := range [][]string{
		{"--allowed-hosts", "https://recur.example.com"},
		{"--allowed-hosts", "recur.example.com:443"},
		{"--trusted-proxies", "proxy.internal"},
		{"--trusted-proxies", "10.0.0.0/40"},
	} {
		_, _, err := prepareSecurity(t, "127.0.0.1:8080", bad...)
		require.Error(t, err, "%v", bad)
	}
	t.Setenv("RECUR_TRUSTED_PROXIES", "everyone")
	_, _, err = prepareSecurity(t, "127.0.0.1:8080")
	require.ErrorContains(t, err, "RECUR_TRUSTED_PROXIES")
}

// TestMinIntervalFlag: the floor is 10 s unless the flag or
// RECUR_MIN_INTERVAL says otherwise, the flag first; below a second, or
// not a duration, stops the command.
func TestMinIntervalFlag(t *testing.T) {
	cfg, _, err := prepareSecurity(t, "127.0.0.1:8080")
	require.NoError(t, err)
	require.Equal(t, 10*time.Second, cfg.minInterval)
	cfg, _, err = prepareSecurity(t, "127.0.0.1:8080", "--min-interval", "1s")
	require.NoError(t, err)
	require.Equal(t, time.Second, cfg.minInterval)
	t.Setenv("RECUR_MIN_INTERVAL", "1m")
	cfg, _, err = prepareSecurity(t, "127.0.0.1:8080")
	require.NoError(t, err)
	require.Equal(t, time.Minute, cfg.minInterval)
	cfg, _, err = prepareSecurity(t, "127.0.0.1:8080", "--min-interval", "30s")
	require.NoError(t, err)
	require.Equal(t, 30*time.Second, cfg.minInterval, "the flag before the environment")
	_, _, err = prepareSecurity(t, "127.0.0.1:8080", "--min-interval", "500ms")
	require.ErrorContains(t, err, "--min-interval must be at least 1s, not 500ms")
	t.Setenv("RECUR_MIN_INTERVAL", "often")
	_, _, err = prepareSecurity(t, "127.0.0.1:8080")
	require.ErrorContains(t, err, "RECUR_MIN_INTERVAL")
}
