package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWorkerFlagsSizeTheWorker(t *testing.T) {
	t.Setenv("RECUR_ACTIVITY_POLLERS", "6")
	var w workerFlags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	w.register(fs)
	require.NoError(t, fs.Parse([]string{"--workflow-pollers", "8", "--max-concurrent-actions", "50", "--workflow-cache", "20000"}))
	opts, err := w.options()
	require.NoError(t, err)
	require.Equal(t, 8, opts.MaxConcurrentWorkflowTaskPollers)
	require.Equal(t, 6, opts.MaxConcurrentActivityTaskPollers, "from RECUR_ACTIVITY_POLLERS")
	require.Equal(t, 50, opts.MaxConcurrentActivityExecutionSize)
	require.Equal(t, 1000, opts.MaxConcurrentWorkflowTaskExecutionSize, "the default")
}

func TestBadWorkerFlagsStopAtStart(t *testing.T) {
	for _, args := range [][]string{
		{"--workflow-pollers", "1"},
		{"--workflow-cache", "0"},
		{"--activity-pollers", "-3"},
		{"--max-concurrent-actions", "0"},
		{"--max-concurrent-workflow-tasks", "0"},
	} {
		var stderr bytes.Buffer
		require.Equal(t, 2, runDev(context.Background(), append([]string{"--http-addr", "127.0.0.1:0"}, args...), &stderr), "%v", args)
		require.Contains(t, stderr.String(), args[0]+" must be at least", "%v", args)
		stderr.Reset()
		require.Equal(t, 2, runCluster(context.Background(), "worker", roles{worker: true}, append([]string{"--insecure-no-encryption"}, args...), &stderr), "%v", args)
		require.Contains(t, stderr.String(), args[0]+" must be at least", "%v", args)
	}
	var stderr bytes.Buffer
	require.Equal(t, 2, runCluster(context.Background(), "api", roles{api: true}, []string{"--workflow-pollers", "4"}, &stderr))
	require.Contains(t, stderr.String(), "flag provided but not defined: -workflow-pollers", "an API-only process has no worker to size")
}

func TestBadSQLiteSyncStopsAtStart(t *testing.T) {
	var stderr bytes.Buffer
	require.Equal(t, 2, runDev(context.Background(), []string{"--http-addr", "127.0.0.1:0", "--sqlite-sync", "off"}, &stderr))
	require.Contains(t, stderr.String(), `--sqlite-sync must be full or normal, not "off"`)
}
