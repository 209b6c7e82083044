package main

import (
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"time"

	sdkworker "go.temporal.io/sdk/worker"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
)

// workerFlags size the worker: how many workflows it keeps in memory
// between their tasks, how many pollers ask Temporal for tasks and how
// many tasks run at once. BENCHMARKS.md has the measurements behind the
// defaults.
type workerFlags struct {
	cache            int
	workflowPollers  int // a fixed number, or autoPollers
	activityPollers  int
	noEager          bool
	stickyTimeout    time.Duration
	maxActivities    int
	maxWorkflowTasks int
	stopTimeout      time.Duration
	// finishedRetention is how long completed and faulted jobs are kept.
	finishedRetention time.Duration
	// actionBudget is how long an occurrence's first attempt runs in its
	// workflow task before it is handed off; 0 makes every attempt an
	// activity.
	actionBudget time.Duration
	// dev is recur dev's worker, its server's only one: its sticky
	// timeout defaults to devStickyTimeout.
	dev bool
}

func (w *workerFlags) register(fs *flag.FlagSet, e *envDefaults) {
	fs.IntVar(&w.cache, "workflow-cache", e.int("RECUR_WORKFLOW_CACHE", 10000),
		"workflows kept in memory between their tasks; an evicted job replays its history at its next occurrence (RECUR_WORKFLOW_CACHE)")
	w.workflowPollers = autoPollers
	e.value("RECUR_WORKFLOW_POLLERS", pollersFlag{&w.workflowPollers})
	fs.Var(pollersFlag{&w.workflowPollers}, "workflow-pollers",
		"long polls for workflow tasks: auto, scaled by the server's backlog, each of the task queue and the worker's sticky queue with polls of its own, or a `number` of them, fixed and shared between the two (RECUR_WORKFLOW_POLLERS)")
	fs.IntVar(&w.activityPollers, "activity-pollers", e.int("RECUR_ACTIVITY_POLLERS", 4),
		"concurrent long polls for activity tasks (actions the server did not hand back eagerly) (RECUR_ACTIVITY_POLLERS)")
	fs.BoolVar(&w.noEager, "no-eager-actions", e.bool("RECUR_NO_EAGER_ACTIONS", false),
		"never ask the server to hand an action back with the workflow task that scheduled it: every action goes through the activity task queue (RECUR_NO_EAGER_ACTIONS)")
	sticky := clusterStickyTimeout
	if w.dev {
		sticky = devStickyTimeout
	}
	fs.DurationVar(&w.stickyTimeout, "sticky-timeout", e.duration("RECUR_STICKY_TIMEOUT", sticky),
		"how long a workflow task waits for the worker that has its workflow in memory before any worker may take it (RECUR_STICKY_TIMEOUT)")
	fs.IntVar(&w.maxActivities, "max-concurrent-actions", e.int("RECUR_MAX_CONCURRENT_ACTIONS", 1000),
		"actions (activity attempts) running at once in this worker (RECUR_MAX_CONCURRENT_ACTIONS)")
	fs.IntVar(&w.maxWorkflowTasks, "max-concurrent-workflow-tasks", e.int("RECUR_MAX_CONCURRENT_WORKFLOW_TASKS", defaultWorkflowTasks()),
		"workflow tasks running at once in this worker; by default 8 per CPU (RECUR_MAX_CONCURRENT_WORKFLOW_TASKS)")
	fs.DurationVar(&w.stopTimeout, "stop-timeout", e.duration("RECUR_STOP_TIMEOUT", 30*time.Second),
		"how long a stopping worker waits for the workflow tasks and actions it has started (RECUR_STOP_TIMEOUT)")
	fs.DurationVar(&w.actionBudget, "action-budget", e.duration("RECUR_ACTION_BUDGET", activities.DefaultActionBudget),
		"how long an occurrence's first attempt may hold its job's workflow task (and the writes to the job) before it goes on as an activity of this process; 0 makes every attempt an activity (RECUR_ACTION_BUDGET)")
	w.finishedRetention = jobs.DefaultFinishedRetention
	e.value("RECUR_FINISHED_JOB_RETENTION", retentionFlag{&w.finishedRetention})
	fs.Var(retentionFlag{&w.finishedRetention}, "finished-job-retention",
		"how long a completed or faulted job is kept before it deletes itself, e.g. 60d or 72h; 0 keeps it until DELETE (RECUR_FINISHED_JOB_RETENTION)")
}

// The sticky timeout is how long a workflow task waits on the sticky
// queue of the worker that has its workflow in memory, before it moves to
// the shared queue, where it costs its workflow a timeout, a new task and
// a replay from history. The SDK's 5 s is shorter than a burst of due jobs
// keeps tasks queued, and then worse than the cost: the SDK's pollers wait
// on a sticky queue that reported a backlog, in minute-long polls, while
// its tasks have all moved to the shared queue (BENCHMARKS.md). recur
// dev's worker is its server's only one, with no other worker to move to:
// its tasks wait for it (those queued when it stops may wait this long
// after a restart, which polls a new sticky queue). On a cluster a worker
// that stops or dies leaves the tasks queued for it waiting this long
// (started ones move after their 10 s task timeout), so serve and worker
// keep the SDK's default.
const (
	devStickyTimeout     = 5 * time.Minute
	clusterStickyTimeout = 5 * time.Second
)

// historyCache is how many workflows recur dev's embedded history
// service keeps in memory: every one the worker keeps, and their
// collections beside them, so that a cached job's task is not read back
// from SQLite either.
func (w *workerFlags) historyCache() int {
	return max(minHistoryCache, w.cache+w.cache/2)
}

// minHistoryCache is the embedded history service's cache for a small
// worker cache: room for the collections and the jobs the API reads.
const minHistoryCache = 1024

// options checks the flags and returns the worker's options. The cache
// size is process-wide in the SDK: options sets it too.
func (w *workerFlags) options() (sdkworker.Options, error) {
	if w.actionBudget < 0 || w.actionBudget > time.Second {
		return sdkworker.Options{}, fmt.Errorf("--action-budget must be between 0 and 1s, not %s", w.actionBudget)
	}
	if w.finishedRetention < 0 {
		return sdkworker.Options{}, fmt.Errorf("--finished-job-retention must be 0 (keep) or more, not %s", w.finishedRetention)
	}
	for _, f := range []struct {
		name  string
		value int
	}{
		{"--workflow-cache", w.cache}, {"--max-concurrent-actions", w.maxActivities}, {"--max-concurrent-workflow-tasks", w.maxWorkflowTasks},
		{"--activity-pollers", w.activityPollers},
	} {
		if f.value < 1 {
			return sdkworker.Options{}, fmt.Errorf("%s must be at least 1, not %d", f.name, f.value)
		}
	}
	if w.cache < 2*w.maxWorkflowTasks {
		// A workflow task holds its workflow in the cache while it runs,
		// and the SDK's cache refuses a new workflow when its least
		// recently used one is held, not only when all are: the task of a
		// workflow it refuses fails and waits out its 10 s timeout. As
		// many idle workflows as held ones keep the least recent idle.
		return sdkworker.Options{}, fmt.Errorf("--workflow-cache (%d) must be at least twice --max-concurrent-workflow-tasks (%d): lower the tasks with the cache",
			w.cache, w.maxWorkflowTasks)
	}
	if w.workflowPollers != autoPollers && w.workflowPollers < 2 {
		// The SDK needs two: one for the task queue, one for its sticky queue.
		return sdkworker.Options{}, fmt.Errorf("--workflow-pollers must be at least 2, not %d", w.workflowPollers)
	}
	if w.stopTimeout < 0 {
		return sdkworker.Options{}, fmt.Errorf("--stop-timeout must be at least 0s, not %s", w.stopTimeout)
	}
	if w.stickyTimeout < time.Second {
		// The server counts it in whole seconds.
		return sdkworker.Options{}, fmt.Errorf("--sticky-timeout must be at least 1s, not %s", w.stickyTimeout)
	}
	sdkworker.SetStickyWorkflowCacheSize(w.cache)
	opts := sdkworker.Options{
		StickyScheduleToStartTimeout:       w.stickyTimeout,
		MaxConcurrentActivityTaskPollers:   w.activityPollers,
		MaxConcurrentActivityExecutionSize: w.maxActivities,
		DisableEagerActivities:             w.noEager,
		// The one local activity left (a finished job's retention) is
		// quick; the actions are activities.
		MaxConcurrentLocalActivityExecutionSize: w.maxActivities,
		MaxConcurrentWorkflowTaskExecutionSize:  w.maxWorkflowTasks,
		// The SDK's default, 0, does not wait: a workflow task whose action
		// has just run is dropped with the client's connection, times out,
		// and the next worker runs the action again.
		WorkerStopTimeout: w.stopTimeout,
	}
	if w.workflowPollers == autoPollers {
		opts.WorkflowTaskPollerBehavior = sdkworker.NewPollerBehaviorAutoscaling(autoscaledPollers)
	} else {
		opts.MaxConcurrentWorkflowTaskPollers = w.workflowPollers
	}
	return opts, nil
}

// autoPollers is --workflow-pollers auto: the server's backlog scales the
// workflow task pollers. A fixed number of pollers is shared between the
// task queue and the sticky queue, and the SDK sends every new poll to
// the sticky queue while it reports a backlog: while the sticky queue
// stays busy, as in a mass creation or a burst, the task queue (a new
// job's first task, a write to a job out of the cache, a due job out of
// it) is polled by whichever polls are left, fewer than its partitions,
// and its backlog grows by the minute; an update to such a job waits
// behind it. Autoscaled, each queue has polls of its own, and more when
// its backlog ages.
const autoPollers = -1

// defaultWorkflowTasks is 8 workflow tasks per CPU the process may use.
// A task the worker has taken runs before any the server still holds,
// whatever their priorities (a write's ahead of a burst's, store's
// priority.go): with more taken than the CPUs keep busy, a write waits
// behind them, and the burst itself runs slower for the contention. A task
// holds its slot while its occurrence's first attempt waits for the
// target (at most --action-budget): 8 a CPU keep the CPUs busy through a
// burst of slow targets.
func defaultWorkflowTasks() int { return 8 * runtime.GOMAXPROCS(0) }

// autoscaledPollers bounds the polls on each of the two queues: two
// keep a poll on more than one of the task queue's partitions, and 32 the
// polls a worker holds open against the server.
var autoscaledPollers = sdkworker.PollerBehaviorAutoscalingOptions{
	InitialNumberOfPollers: 4,
	MinimumNumberOfPollers: 2,
	MaximumNumberOfPollers: 32,
}

// pollersFlag is --workflow-pollers: auto (autoPollers) or a number.
type pollersFlag struct{ n *int }

func (f pollersFlag) String() string {
	if f.n == nil {
		return ""
	}
	if *f.n == autoPollers {
		return "auto"
	}
	return strconv.Itoa(*f.n)
}

func (f pollersFlag) Set(s string) error {
	if s == "auto" {
		*f.n = autoPollers
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want auto or a number of pollers, not %q", s)
	}
	*f.n = n
	return nil
}
