package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
)

func TestWorkerFlagsSizeTheWorker(t *testing.T) {
	t.Setenv("RECUR_WORKFLOW_CACHE", "300")
	var w workerFlags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var envs envDefaults
	w.register(fs, &envs)
	require.NoError(t, envs.err())
	require.NoError(t, fs.Parse([]string{"--workflow-pollers", "8", "--max-concurrent-actions", "50", "--max-concurrent-workflow-tasks", "70",
		"--sticky-timeout", "90s", "--stop-timeout", "45s"}))
	opts, err := w.options()
	require.NoError(t, err)
	require.Equal(t, 8, opts.MaxConcurrentWorkflowTaskPollers, "a number fixes the pollers")
	require.Nil(t, opts.WorkflowTaskPollerBehavior)
	require.Equal(t, 90*time.Second, opts.StickyScheduleToStartTimeout)
	require.Equal(t, 50, opts.MaxConcurrentActivityExecutionSize, "actions run as activities")
	require.Equal(t, 70, opts.MaxConcurrentWorkflowTaskExecutionSize)
	require.Equal(t, 45*time.Second, opts.WorkerStopTimeout)
	require.Equal(t, 300, w.cache, "from RECUR_WORKFLOW_CACHE")

	// Set back by t.Setenv's cleanup.
	require.NoError(t, os.Unsetenv("RECUR_WORKFLOW_CACHE"))
	var defaults workerFlags
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	defaults.register(fs, &envs)
	require.NoError(t, fs.Parse(nil))
	opts, err = defaults.options()
	require.NoError(t, err)
	require.Equal(t, 30*time.Second, opts.WorkerStopTimeout, "a stopping worker finishes what it started; the SDK's default waits for nothing")
	require.Zero(t, opts.MaxConcurrentWorkflowTaskPollers, "the SDK refuses a fixed number beside a poller behavior")
	require.Equal(t, sdkworker.NewPollerBehaviorAutoscaling(autoscaledPollers), opts.WorkflowTaskPollerBehavior,
		"the task queue has polls of its own, whatever the sticky queue's backlog")
	require.Equal(t, "auto", fs.Lookup("workflow-pollers").DefValue)
	var help bytes.Buffer
	fs.SetOutput(&help)
	fs.PrintDefaults()
	require.Contains(t, help.String(), "(default auto)", "the help says what a worker does unless told")
}

// TestWorkflowPollersFlag: auto or a number, from the flag or the
// environment; anything else stops the start.
func TestWorkflowPollersFlag(t *testing.T) {
	for _, c := range []struct {
		env, flag string
		want      int
	}{
		{"", "", autoPollers},
		{"", "auto", autoPollers},
		{"", "16", 16},
		{"12", "", 12},
		{"12", "auto", autoPollers},
		{"auto", "6", 6},
	} {
		t.Setenv("RECUR_WORKFLOW_POLLERS", c.env)
		var w workerFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var envs envDefaults
		w.register(fs, &envs)
		require.NoError(t, envs.err())
		var args []string
		if c.flag != "" {
			args = []string{"--workflow-pollers", c.flag}
		}
		require.NoError(t, fs.Parse(args))
		require.Equal(t, c.want, w.workflowPollers, "env %q, flag %q", c.env, c.flag)
	}
	for _, bad := range []string{"-1", "many", "4.5", "Auto"} {
		var w workerFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var envs envDefaults
		t.Setenv("RECUR_WORKFLOW_POLLERS", "")
		w.register(fs, &envs)
		require.ErrorContains(t, fs.Parse([]string{"--workflow-pollers", bad}), "want auto or a number of pollers", bad)
		t.Setenv("RECUR_WORKFLOW_POLLERS", bad)
		envs = envDefaults{}
		w.register(flag.NewFlagSet("t", flag.ContinueOnError), &envs)
		require.ErrorContains(t, envs.err(), "RECUR_WORKFLOW_POLLERS", bad)
	}
}

// TestTheHistoryCacheHoldsTheWorkersJobs: recur dev's history service
// keeps in memory every workflow its worker does and their collections,
// however large or small --workflow-cache is: a small worker cache shrinks
// the server's too, down to room for the collections.
func TestTheHistoryCacheHoldsTheWorkersJobs(t *testing.T) {
	for cache, want := range map[int]int{
		10000:  15000, // the default worker cache
		1000:   1500,
		100:    minHistoryCache,
		100000: 150000,
	} {
		w := workerFlags{cache: cache}
		require.Equal(t, want, w.historyCache(), "--workflow-cache %d", cache)
		require.Greater(t, w.historyCache(), cache)
	}
}

func TestBadWorkerFlagsStopAtStart(t *testing.T) {
	for _, args := range [][]string{
		{"--workflow-pollers", "1"},
		{"--workflow-pollers", "0"},
		{"--workflow-cache", "0"},
		{"--max-concurrent-actions", "0"},
		{"--max-concurrent-workflow-tasks", "0"},
		{"--sticky-timeout", "500ms"},
		{"--stop-timeout", "-1s"},
	} {
		var stderr bytes.Buffer
		require.Equal(t, 2, runDev(context.Background(), append([]string{"--http-addr", "127.0.0.1:0"}, args...), &stderr), "%v", args)
		require.Contains(t, stderr.String(), args[0]+" must be at least", "%v", args)
		stderr.Reset()
		require.Equal(t, 2, runCluster(context.Background(), "worker", roles{worker: true}, append([]string{"--insecure-no-encryption"}, args...), &stderr), "%v", args)
		require.Contains(t, stderr.String(), args[0]+" must be at least", "%v", args)
	}
	// A workflow task holds its workflow in the cache: a cache that
	// running tasks can fill fails tasks.
	var stderr bytes.Buffer
	require.Equal(t, 2, runDev(context.Background(), []string{"--http-addr", "127.0.0.1:0", "--workflow-cache", "1000", "--max-concurrent-workflow-tasks", "1000"}, &stderr))
	require.Contains(t, stderr.String(), "--workflow-cache (1000) must be at least twice --max-concurrent-workflow-tasks (1000)")
	stderr.Reset()
	require.Equal(t, 2, runCluster(context.Background(), "api", roles{api: true}, []string{"--workflow-pollers", "4"}, &stderr))
	require.Contains(t, stderr.String(), "flag provided but not defined: -workflow-pollers", "an API-only process has no worker to size")
}

func TestBadSQLiteSyncStopsAtStart(t *testing.T) {
	var stderr bytes.Buffer
	require.Equal(t, 2, runDev(context.Background(), []string{"--http-addr", "127.0.0.1:0", "--sqlite-sync", "off"}, &stderr))
	require.Contains(t, stderr.String(), `--sqlite-sync must be full or normal, not "off"`)
}

// TestFinishedJobRetentionFlag: 60 days unless said otherwise, in days or
// as a duration, 0 to keep finished jobs; a bad variable stops the start.
func TestFinishedJobRetentionFlag(t *testing.T) {
	for args, want := range map[string]time.Duration{"": jobs.DefaultFinishedRetention, "7d": 7 * 24 * time.Hour, "90m": 90 * time.Minute, "0": 0} {
		var w workerFlags
		var err error
		if args == "" {
			w, err = parseWorkerFlags()
		} else {
			w, err = parseWorkerFlags("--finished-job-retention", args)
		}
		require.NoError(t, err, args)
		require.Equal(t, want, w.finishedRetention, args)
	}
	_, err := parseWorkerFlags("--finished-job-retention", "-1h")
	require.ErrorContains(t, err, "--finished-job-retention must be 0 (keep) or more")
	t.Setenv("RECUR_FINISHED_JOB_RETENTION", "sixty days")
	_, err = parseWorkerFlags()
	require.ErrorContains(t, err, "RECUR_FINISHED_JOB_RETENTION")
}

// TestStickyTimeoutDefaults: recur dev's worker, its server's only one,
// waits minutes for its own tasks; a cluster's worker keeps the SDK's 5 s,
// after which another worker may take them.
func TestStickyTimeoutDefaults(t *testing.T) {
	for _, dev := range []bool{true, false} {
		w := workerFlags{dev: dev}
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		w.register(fs, &envDefaults{})
		require.NoError(t, fs.Parse(nil))
		opts, err := w.options()
		require.NoError(t, err)
		want := 5 * time.Second
		if dev {
			want = 5 * time.Minute
		}
		require.Equal(t, want, opts.StickyScheduleToStartTimeout, "dev %v", dev)
	}
}

// TestBadEnvironmentStopsAtStart: a variable that does not parse stops
// every command that reads it before anything starts, naming it; none
// falls back to its default in silence (RECUR_TEMPORAL_TLS=yes would
// connect in plaintext).
func TestBadEnvironmentStopsAtStart(t *testing.T) {
	dev := func(stderr io.Writer) int {
		return runDev(context.Background(), []string{"--http-addr", "127.0.0.1:0"}, stderr)
	}
	cluster := func(name string, r roles) func(io.Writer) int {
		return func(stderr io.Writer) int {
			return runCluster(context.Background(), name, r, []string{"--insecure-no-encryption"}, stderr)
		}
	}
	worker, api := cluster("worker", roles{worker: true}), cluster("api", roles{api: true})
	for variable, commands := range map[string][]func(io.Writer) int{
		"RECUR_WORKFLOW_CACHE":                {dev, worker},
		"RECUR_WORKFLOW_POLLERS":              {dev, worker},
		"RECUR_STICKY_TIMEOUT":                {dev, worker},
		"RECUR_MAX_CONCURRENT_ACTIONS":        {dev, worker},
		"RECUR_MAX_CONCURRENT_WORKFLOW_TASKS": {dev, worker},
		"RECUR_FINISHED_JOB_RETENTION":        {dev, worker},
		"RECUR_MAX_CONNECTIONS":               {dev, worker, api},
		"RECUR_MAX_CONNECTIONS_PER_CLIENT":    {dev, worker, api},
		"RECUR_RATE_LIMIT":                    {dev, api},
		"RECUR_RATE_BURST":                    {dev, api},
		"RECUR_INSECURE_OPEN_API":             {dev, api},
		"RECUR_CODEC_ENDPOINT":                {dev, api},
		"RECUR_INSECURE_NO_ENCRYPTION":        {dev, worker, api},
		"RECUR_TEMPORAL_TLS":                  {worker, api},
		"RECUR_TEMPORAL_PORT":                 {dev},
		"RECUR_UI_PORT":                       {dev},
		"RECUR_RETENTION":                     {dev},
		"RECUR_EGRESS_ALLOW_LOOPBACK":         {dev, worker, api},
		"RECUR_EGRESS_ALLOW_PRIVATE":          {dev, worker, api},
		"RECUR_EGRESS_FOLLOW_REDIRECTS":       {dev, worker, api},
		"RECUR_WORKFLOW_ACTION_ALLOW":         {dev, worker, api},
	} {
		t.Run(variable, func(t *testing.T) {
			t.Setenv(variable, "yes please")
			for _, run := range commands {
				var stderr bytes.Buffer
				require.Equal(t, 2, run(&stderr), stderr.String())
				require.Contains(t, stderr.String(), variable+`="yes please"`)
			}
		})
	}
}

// TestActionBudgetFlag: --action-budget defaults to the activities'
// budget, takes RECUR_ACTION_BUDGET, and refuses a budget that would hold
// a job's workflow task (and its writes) for more than a second.
func TestActionBudgetFlag(t *testing.T) {
	w, err := parseWorkerFlags()
	require.NoError(t, err)
	require.Equal(t, activities.DefaultActionBudget, w.actionBudget)
	w, err = parseWorkerFlags("--action-budget", "0")
	require.NoError(t, err)
	require.Zero(t, w.actionBudget, "0 makes every attempt an activity")
	t.Setenv("RECUR_ACTION_BUDGET", "250ms")
	w, err = parseWorkerFlags()
	require.NoError(t, err)
	require.Equal(t, 250*time.Millisecond, w.actionBudget)
	for _, bad := range []string{"-1ms", "2s"} {
		_, err = parseWorkerFlags("--action-budget", bad)
		require.ErrorContains(t, err, "--action-budget must be between 0 and 1s", bad)
	}
}

// parseWorkerFlags parses a worker's flags as its command does, the
// environment's defaults included, and checks the options they make.
func parseWorkerFlags(args ...string) (workerFlags, error) {
	var w workerFlags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var envs envDefaults
	w.register(fs, &envs)
	if err := fs.Parse(args); err != nil {
		return w, err
	}
	if err := envs.err(); err != nil {
		return w, err
	}
	_, err := w.options()
	return w, err
}
