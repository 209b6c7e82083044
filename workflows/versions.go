package workflows

// Every workflow version ID, one per line, oldest first. Each guards a
// change of the commands a running workflow issues (workflow.GetVersion,
// the package doc): its comment says what changed, and a history recorded
// under testdata with the change in effect proves old and new replay
// (TestEveryVersionHasARecordedHistory).
const (
	// changeFoldPostponed folds the occurrences a job postpones while a
	// Postponed row of an earlier occurrence is still being written, so
	// that a Temporal behind is not given a workflow per missed
	// occurrence (BENCHMARKS.md).
	changeFoldPostponed = "2026-11-21-fold-postponed"
	// changePutStateFansOut makes a PUT or PATCH that changes the
	// collection's state tell its jobs, as POST enable and disable do.
	changePutStateFansOut = "2026-11-21-put-state-fans-out"
	// changeRunNowIDs gives each run now of one workflow task its own run
	// workflow ID: they share their nominal time (the task's clock), and
	// one ID for both would run only the first.
	changeRunNowIDs = "2026-11-21-run-now-ids"
	// changeRunTaskQueue starts run workflows on jobs.RunTaskQueue: on the
	// jobs' queue, which the SDK serves from a worker's sticky queue first
	// while it has a backlog, a burst of due jobs keeps every new run
	// waiting (BENCHMARKS.md).
	changeRunTaskQueue = "2026-11-21-run-task-queue"
	// changeStartsBeforeEnd makes a job workflow wait, before it ends or
	// continues as new, until the server has started every run it asked for:
	// the server starts no child of a workflow that has closed, so a run
	// now answered just before a DELETE would never run.
	changeStartsBeforeEnd = "2026-11-21-starts-before-end"
	// changeStateUpsertOnChange upserts the state search attribute only
	// when the state changed: each upsert is a history event and a write
	// to the visibility store.
	changeStateUpsertOnChange = "2026-11-21-state-upsert-on-change"
	// changeFinishedRetention makes a completed or faulted job delete
	// itself once the worker's retention has passed, as Azure Scheduler
	// did; a job that finished without it lives until DELETE.
	changeFinishedRetention = "2026-11-22-finished-retention"
	// changePublicMemo makes the job and collection workflows keep their
	// public views in their memos (jobs.MemoJob, jobs.MemoCollection): the
	// API reads them by describe and from visibility, so that reads need
	// no worker.
	changePublicMemo = "2026-11-22-public-memo"
	// changeJobLastStatus keeps the outcome of a job's last run in the job
	// workflow's RecurStatus, as a run workflow keeps its own.
	changeJobLastStatus = "2026-11-22-job-last-status"
)
