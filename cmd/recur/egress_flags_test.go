package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/egress"
)

// parseEgress registers the egress flags (dev's defaults when dev), parses
// args and loads them; it returns the policy and what load logged.
func parseEgress(t *testing.T, dev bool, args ...string) (egress.Policy, string, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e := egressFlags{dev: dev}
	e.register(fs)
	if err := fs.Parse(args); err != nil {
		return egress.Policy{}, "", err
	}
	var logged bytes.Buffer
	err := e.load(slog.New(slog.NewTextHandler(&logged, nil)))
	return e.policy, logged.String(), err
}

func TestEgressDefaults(t *testing.T) {
	p, logged, err := parseEgress(t, true)
	require.NoError(t, err)
	require.Equal(t, egress.Policy{AllowLoopback: true}, p, "recur dev: loopback allowed")
	require.Contains(t, logged, "outbound calls may reach loopback addresses (dev default)")

	p, logged, err = parseEgress(t, true, "--egress-allow-loopback=false")
	require.NoError(t, err)
	require.Equal(t, egress.Policy{}, p)
	require.Empty(t, logged)

	p, logged, err = parseEgress(t, false)
	require.NoError(t, err)
	require.Equal(t, egress.Policy{}, p, "recur serve and worker: public addresses only, no redirects")
	require.Empty(t, logged)
}

func TestEgressFlags(t *testing.T) {
	p, _, err := parseEgress(t, false, "--egress-allow-loopback", "--egress-allow-private", "--egress-follow-redirects",
		"--egress-allow", "10.1.0.0/16, Build.Internal", "--egress-allow", "192.168.7.9")
	require.NoError(t, err)
	require.Equal(t, egress.Policy{
		AllowLoopback: true, AllowPrivate: true, FollowRedirects: true,
		Allow:      []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("192.168.7.9/32")},
		AllowHosts: []string{"build.internal"},
	}, p)

	for _, bad := range [][]string{
		{"--egress-allow", "169.254.169.254"},
		{"--egress-allow", "http://build.internal/"},
		{"--egress-allow-private=maybe"},
	} {
		_, _, err := parseEgress(t, false, bad...)
		require.Error(t, err, "%v", bad)
	}
}

func TestEgressEnvironment(t *testing.T) {
	t.Setenv("RECUR_EGRESS_ALLOW", "10.0.0.0/8,queue.internal")
	t.Setenv("RECUR_EGRESS_ALLOW_LOOPBACK", "true")
	t.Setenv("RECUR_EGRESS_FOLLOW_REDIRECTS", "1")
	p, _, err := parseEgress(t, false)
	require.NoError(t, err)
	require.Equal(t, egress.Policy{
		AllowLoopback: true, FollowRedirects: true,
		Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, AllowHosts: []string{"queue.internal"},
	}, p)

	t.Setenv("RECUR_EGRESS_ALLOW_LOOPBACK", "false")
	p, logged, err := parseEgress(t, true)
	require.NoError(t, err)
	require.False(t, p.AllowLoopback, "the environment overrides dev's default")
	require.Empty(t, logged)

	p, _, err = parseEgress(t, false, "--egress-allow-loopback", "--egress-follow-redirects=false")
	require.NoError(t, err)
	require.True(t, p.AllowLoopback, "flags override the environment")
	require.False(t, p.FollowRedirects)
}

// TestBadEgressSettingsStopAtStart: a bad flag or variable stops the
// command with status 2 before it connects anywhere.
func TestBadEgressSettingsStopAtStart(t *testing.T) {
	var stderr bytes.Buffer
	require.Equal(t, 2, runCluster(context.Background(), "worker", roles{worker: true},
		[]string{"--egress-allow", "fd00:ec2::254"}, &stderr))
	require.Contains(t, stderr.String(), "always refused")

	for name, value := range map[string]string{
		"RECUR_EGRESS_ALLOW_PRIVATE": "yes please",
		"RECUR_EGRESS_ALLOW":         "0x7f000001",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			var stderr bytes.Buffer
			require.Equal(t, 2, runCluster(context.Background(), "worker", roles{worker: true}, nil, &stderr))
			require.Contains(t, stderr.String(), "recur worker: "+name)
			stderr.Reset()
			require.Equal(t, 2, runDev(context.Background(), []string{"--http-addr", "127.0.0.1:0"}, &stderr))
			require.Contains(t, stderr.String(), "recur dev: "+name)
		})
	}
}
