package main

import (
	"flag"
	"fmt"
	"time"

	sdkworker "go.temporal.io/sdk/worker"

	"github.com/recurhq/recur/jobs"
)

// workerFlags size the worker: how many workflows it keeps in memory
// between their tasks, how many pollers ask Temporal for tasks and how
// many tasks run at once. BENCHMARKS.md has the measurements behind the
// defaults.
type workerFlags struct {
	cache            int
	workflowPollers  int
	maxActivities    int
	maxWorkflowTasks int
	// finishedRetention is how long completed and faulted jobs are kept;
	// envErr a bad RECUR_FINISHED_JOB_RETENTION, reported by options.
	finishedRetention time.Duration
	envErr            error
}

func (w *workerFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&w.cache, "workflow-cache", envInt("RECUR_WORKFLOW_CACHE", 10000),
		"workflows kept in memory between their tasks; an evicted job replays its history at its next occurrence (RECUR_WORKFLOW_CACHE)")
	fs.IntVar(&w.workflowPollers, "workflow-pollers", envInt("RECUR_WORKFLOW_POLLERS", 4),
		"concurrent long polls for workflow tasks (RECUR_WORKFLOW_POLLERS)")
	fs.IntVar(&w.maxActivities, "max-concurrent-actions", envInt("RECUR_MAX_CONCURRENT_ACTIONS", 1000),
		"actions (local activity attempts) running at once in this worker (RECUR_MAX_CONCURRENT_ACTIONS)")
	fs.IntVar(&w.maxWorkflowTasks, "max-concurrent-workflow-tasks", envInt("RECUR_MAX_CONCURRENT_WORKFLOW_TASKS", 1000),
		"workflow tasks running at once in this worker (RECUR_MAX_CONCURRENT_WORKFLOW_TASKS)")
	w.finishedRetention = jobs.DefaultFinishedRetention
	if v := env("RECUR_FINISHED_JOB_RETENTION", ""); v != "" {
		if err := (retentionFlag{&w.finishedRetention}).Set(v); err != nil {
			w.envErr = fmt.Errorf("RECUR_FINISHED_JOB_RETENTION: %w", err)
		}
	}
	fs.Var(retentionFlag{&w.finishedRetention}, "finished-job-retention",
		"how long a completed or faulted job is kept before it deletes itself, e.g. 60d or 72h; 0 keeps it until DELETE (RECUR_FINISHED_JOB_RETENTION)")
}

// options checks the flags and returns the worker's options. The cache
// size is process-wide in the SDK: options sets it too.
func (w *workerFlags) options() (sdkworker.Options, error) {
	if w.envErr != nil {
		return sdkworker.Options{}, w.envErr
	}
	if w.finishedRetention < 0 {
		return sdkworker.Options{}, fmt.Errorf("--finished-job-retention must be 0 (keep) or more, not %s", w.finishedRetention)
	}
	for _, f := range []struct {
		name  string
		value int
	}{
		{"--workflow-cache", w.cache}, {"--max-concurrent-actions", w.maxActivities}, {"--max-concurrent-workflow-tasks", w.maxWorkflowTasks},
	} {
		if f.value < 1 {
			return sdkworker.Options{}, fmt.Errorf("%s must be at least 1, not %d", f.name, f.value)
		}
	}
	if w.workflowPollers < 2 {
		// The SDK needs two: one for the task queue, one for its sticky queue.
		return sdkworker.Options{}, fmt.Errorf("--workflow-pollers must be at least 2, not %d", w.workflowPollers)
	}
	sdkworker.SetStickyWorkflowCacheSize(w.cache)
	return sdkworker.Options{
		MaxConcurrentWorkflowTaskPollers:        w.workflowPollers,
		MaxConcurrentLocalActivityExecutionSize: w.maxActivities,
		MaxConcurrentWorkflowTaskExecutionSize:  w.maxWorkflowTasks,
	}, nil
}
