package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/jobs"
)

// TestBackfillFlags: a backfill is paced one occurrence a second per job
// and a subscription's budget is a whole backfill at once, then one
// occurrence a second, unless the flags or the environment say
// otherwise; a budget of rate 0 is none.
func TestBackfillFlags(t *testing.T) {
	parse := func(t *testing.T, args ...string) (api.BackfillLimits, error) {
		t.Helper()
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var s apiSecurity
		var envs envDefaults
		s.register(fs, 0, &envs)
		require.NoError(t, envs.err())
		require.NoError(t, fs.Parse(args))
		return s.backfill.limits()
	}
	limits, err := parse(t)
	require.NoError(t, err)
	require.Equal(t, api.BackfillLimits{Pace: jobs.DefaultBackfillPace, PerSubscription: api.RateLimit{PerSecond: 1, Burst: jobs.MaxBackfill}}, limits)
	limits, err = parse(t, "--backfill-pace", "250ms", "--backfill-rate", "0.5", "--backfill-burst", "40")
	require.NoError(t, err)
	require.Equal(t, api.BackfillLimits{Pace: 250 * time.Millisecond, PerSubscription: api.RateLimit{PerSecond: 0.5, Burst: 40}}, limits)
	limits, err = parse(t, "--backfill-rate", "0")
	require.NoError(t, err)
	require.Zero(t, limits.PerSubscription.PerSecond, "no budget")

	t.Setenv("RECUR_BACKFILL_PACE", "5s")
	t.Setenv("RECUR_BACKFILL_RATE", "3")
	t.Setenv("RECUR_BACKFILL_BURST", "30")
	limits, err = parse(t)
	require.NoError(t, err)
	require.Equal(t, api.BackfillLimits{Pace: 5 * time.Second, PerSubscription: api.RateLimit{PerSecond: 3, Burst: 30}}, limits)
	limits, err = parse(t, "--backfill-pace", "2s")
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, limits.Pace, "the flag before the environment")
}

// TestBadBackfillFlagsStopAtStart: no pace, a pace past an hour, a
// negative rate, an empty burst and a variable that does not parse stop
// recur dev and recur api.
func TestBadBackfillFlagsStopAtStart(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--backfill-pace", "0s"}, "--backfill-pace must be more than 0s and at most 1h0m0s, not 0s"},
		{[]string{"--backfill-pace", "2h"}, "--backfill-pace must be more than 0s and at most 1h0m0s, not 2h0m0s"},
		{[]string{"--backfill-rate", "-1"}, "--backfill-rate must be 0 (no limit) or more, not -1"},
		{[]string{"--backfill-burst", "0"}, "--backfill-burst must be at least 1, not 0"},
	} {
		var stderr bytes.Buffer
		require.Equal(t, 2, runDev(context.Background(), append([]string{"--http-addr", "127.0.0.1:0"}, c.args...), &stderr), "%v", c.args)
		require.Contains(t, stderr.String(), c.want)
		stderr.Reset()
		require.Equal(t, 2, runCluster(context.Background(), "api", roles{api: true},
			append([]string{"--http-addr", "127.0.0.1:0", "--insecure-no-encryption"}, c.args...), &stderr), "%v", c.args)
		require.Contains(t, stderr.String(), c.want)
	}
	var stderr bytes.Buffer
	require.Equal(t, 2, runCluster(context.Background(), "worker", roles{worker: true}, []string{"--backfill-pace", "1s"}, &stderr))
	require.Contains(t, stderr.String(), "flag provided but not defined: -backfill-pace", "the API paces backfills; a worker has no flag for it")
	// A variable that does not parse stops them too, naming it.
	for _, variable := range []string{"RECUR_BACKFILL_PACE", "RECUR_BACKFILL_RATE", "RECUR_BACKFILL_BURST"} {
		t.Run(variable, func(t *testing.T) {
			t.Setenv(variable, "yes please")
			var stderr bytes.Buffer
			require.Equal(t, 2, runDev(context.Background(), []string{"--http-addr", "127.0.0.1:0"}, &stderr))
			require.Contains(t, stderr.String(), variable+`="yes please"`)
			stderr.Reset()
			require.Equal(t, 2, runCluster(context.Background(), "api", roles{api: true}, []string{"--insecure-no-encryption"}, &stderr))
			require.Contains(t, stderr.String(), variable+`="yes please"`)
		})
	}
}
