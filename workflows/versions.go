package workflows

// Every workflow version ID, one per line, oldest first. Each guards a
// change of the commands a running workflow issues (workflow.GetVersion,
// the package doc): its comment says what changed, and a history recorded
// under testdata with the change in effect proves old and new replay
// (TestEveryVersionHasARecordedHistory).
const (
	// A job's backfill occurrences start a pace apart (jobs.BackfillRequest.Pace),
	// a timer between them, instead of one after another as fast as they
	// end: one backfill made a burst of calls to the job's target.
	versionBackfillPace = "2026-11-27-backfill-pace"
	// The occurrence a BufferOne job buffered behind a run is postponed,
	// not started, when the run ends while the job (or its collection) is
	// disabled: a disabled job ran it and called its target.
	versionDisabledBuffered = "2026-11-27-disabled-buffered"
	// A look at a lease not given back takes in up to every slot leased of
	// the jobs it finds, not up to that lease's slots: the visibility store
	// lists first the jobs of other leases whose claims are on their way,
	// and the lease's own job ran uncounted (adoptOrphans).
	versionAdoptOrphans = "2026-11-27-adopt-orphans"
	// A claim of a name the collection holds reserved renews the
	// reservation: a look at it begun before the claim found no workflow,
	// gave the name up after the claim was answered, and the job whose PUT
	// the claim was ran uncounted (collectionstate renew).
	versionRenewClaimedNames = "2026-11-27-renew-claimed-names"
	// A completed or faulted job runs the re-runs asked of it (a failed
	// one-time job's run most often), and its collection's disable and
	// enable hold and free them: a final job refused every re-run.
	versionFinishedReruns = "2026-11-28-finished-reruns"
	// A collection's enable and disable answer in the workflow task that
	// takes them, with the message to the jobs the operation waits for
	// (jobs.OperationResult), instead of once every job is told: until
	// then each held one of the updates Temporal lets a workflow have in
	// flight.
	versionOperationsAnswerAtOnce = "2026-11-28-operations-answer-at-once"
	// A collection's change of state or terms queued behind another not
	// yet on its way to the jobs takes its place (collection.tellJobs):
	// each operation queued a message to every job.
	versionMergedTells = "2026-11-28-merged-tells"
	// A message's handler that runs once the loop's wake-up has come, before
	// the loop acted on it, has the machine act on what fell due first
	// (job.dueFirst): a PUT taken in the task that held an occurrence's
	// timer planned past the occurrence, which was never run nor counted.
	versionDueFirst = "2026-11-29-due-first"
	// A job deleted while it waits for its collection's answer asks no
	// more, and its leave waits for a request on its way: asked again
	// after the leave, or arriving after it, the collection admitted the
	// name anew for a job that was gone, and held it for good.
	versionLeftAsksNothing = "2026-11-29-left-asks-nothing"
)
