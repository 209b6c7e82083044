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
// args and loads them for an API without tokens; it returns the policy
// and what load logged.
func parseEgress(t *testing.T, dev bool, args ...string) (egress.Policy, string, error) {
	t.Helper()
	e, logged, err := loadEgress(t, dev, false, args...)
	return e.policy, logged, err
}

// loadEgress is parseEgress for an API with tokens when authenticated; it
// returns the flags.
func loadEgress(t *testing.T, dev, authenticated bool, args ...string) (egressFlags, string, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e := egressFlags{dev: dev}
	var envs envDefaults
	e.register(fs, &envs)
	if err := fs.Parse(args); err != nil {
		return e, "", err
	}
	if err := envs.err(); err != nil {
		return e, "", err
	}
	var logged bytes.Buffer
	err := e.load(slog.New(slog.NewTextHandler(&logged, nil)), authenticated)
	return e, logged.String(), err
}

// TestDevWithTokensRefusesLoopback: once the API has tenants, recur dev
// refuses loopback unless a flag or the environment allows it: a tenant's
// job would otherwise call whatever listens on the machine.
func TestDevWithTokensRefusesLoopback(t *testing.T) {
	e, logged, err := loadEgress(t, true, true)
	require.NoError(t, err)
	require.False(t, e.policy.AllowLoopback)
	require.Contains(t, logged, "outbound calls may not reach loopback addresses: the API has tokens")

	e, logged, err = loadEgress(t, true, true, "--egress-allow-loopback")
	require.NoError(t, err)
	require.True(t, e.policy.AllowLoopback, "said explicitly")
	require.Empty(t, logged)

	t.Setenv("RECUR_EGRESS_ALLOW_LOOPBACK", "true")
	e, _, err = loadEgress(t, true, true)
	require.NoError(t, err)
	require.True(t, e.policy.AllowLoopback, "the environment says so explicitly too")
}

// TestWorkflowActionAllowFlag: --workflow-action-allow and its variable
// add to one list; a bad entry stops the command.
func TestWorkflowActionAllowFlag(t *testing.T) {
	t.Setenv("RECUR_WORKFLOW_ACTION_ALLOW", "recur/reports")
	e, logged, err := loadEgress(t, false, false, "--workflow-action-allow", "billing/*,team-*/jobs")
	require.NoError(t, err)
	require.Empty(t, logged)
	require.Equal(t, "recur/reports,billing/*,team-*/jobs", e.workflowTargets.String())

	_, _, err = loadEgress(t, false, false, "--workflow-action-allow", "reports")
	require.Error(t, err)
	t.Setenv("RECUR_WORKFLOW_ACTION_ALLOW", "recur/a b")
	_, _, err = loadEgress(t, false, false)
	require.ErrorContains(t, err, "RECUR_WORKFLOW_ACTION_ALLOW")
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
