package workflows

// Every workflow version ID, one per line, oldest first. Each guards a
// change of the commands a running workflow issues (workflow.GetVersion,
// the package doc): its comment says what changed, and a history recorded
// under testdata with the change in effect proves old and new replay
// (TestEveryVersionHasARecordedHistory).
const (
	// changeFoldPostponed folds the occurrences a job postpones while a
	// Postponed row of an earlier occurrence is still being written. At
	// 10,000 every-minute jobs on two cores, Postponed rows were more than
	// half of the run workflows that finished (5,435 of 10,111); folded, half
	// as many workflows were started (BENCHMARKS.md).
	changeFoldPostponed = "2026-11-21-fold-postponed"
	// changePutStateFansOut makes a PUT or PATCH that changes the collection's
	// state tell its jobs; before, only POST enable and disable did.
	changePutStateFansOut = "2026-11-21-put-state-fans-out"
	// changeRunNowIDs gives each run now of one workflow task its own run
	// workflow ID: they share their nominal time (the task's clock), and the
	// second one, answered 200, ran nothing.
	changeRunNowIDs = "2026-11-21-run-now-ids"
	// changeRunTaskQueue starts run workflows on jobs.RunTaskQueue. Before,
	// they shared the jobs' queue, where the SDK serves a worker's sticky
	// queue first while it has a backlog: at 10,000 every-minute jobs the
	// jobs' tasks kept every new run waiting (eight minutes in, 23,058 runs
	// had started and 1,139 had finished).
	changeRunTaskQueue = "2026-11-21-run-task-queue"
	// changeStartsBeforeEnd makes a job workflow wait, before it ends or
	// continues as new, until the server has started every run it asked for:
	// the server starts no child of a workflow that has closed, so a run now
	// answered 200 just before a DELETE never ran.
	changeStartsBeforeEnd = "2026-11-21-starts-before-end"
	// changeStateUpsertOnChange upserts the state search attribute only when
	// the state changed: before, every occurrence upserted it twice, each
	// upsert a history event and a write to the visibility store.
	changeStateUpsertOnChange = "2026-11-21-state-upsert-on-change"
	// changeFinishedRetention makes a completed or faulted job delete itself
	// once the worker's retention has passed (Azure Scheduler deleted them
	// after 60 days); before, a finished job lived until DELETE. Jobs that
	// finished under the old code keep doing so.
	changeFinishedRetention = "2026-11-22-finished-retention"
	// changePublicMemo makes the job and collection workflows keep their
	// public views in their memos (jobs.MemoJob, jobs.MemoCollection): the
	// API reads them by describe and from visibility, so that reads need no
	// worker. Workflows that started before keep no memo until their next
	// workflow task past their recorded history.
	changePublicMemo = "2026-11-22-public-memo"
	// changeJobLastStatus keeps the outcome of a job's last run in the job
	// workflow's RecurStatus, as a run workflow keeps its own.
	changeJobLastStatus = "2026-11-22-job-last-status"
)
