package jobs

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/recurhq/recur/recurrence"
)

// TaskQueue is the task queue of recur's workflows. A job runs its
// actions as local activities, in the worker that runs its workflow task,
// so recur needs no other queue.
const TaskQueue = "recur"

// OwnTaskQueue reports whether q is one of recur's task queues in any
// letter case. Temporal's queue names are case-sensitive, so "RECUR" is
// another queue; it is refused all the same, as security.md promises: a
// boundary that folds case, like the temporal-sys checks beside it, has
// no near-spelling of recur's queue to argue about.
func OwnTaskQueue(q string) bool { return strings.EqualFold(q, TaskQueue) }

// Workflow type names: a wire contract, never renamed. Activities are
// registered under their method names (worker.Register), which are a wire
// contract too.
const (
	CollectionWorkflowName = "recur.Collection"
	JobWorkflowName        = "recur.Job"
)

// Message names: a wire contract, never renamed.
const (
	// Collection workflow.
	UpdatePutCollection    = "putCollection"      // PutCollectionRequest -> PutResult
	UpdateCollectionState  = "setCollectionState" // CollectionStateRequest -> OperationResult
	UpdateDeleteCollection = "deleteCollection"   // DeleteCollectionRequest -> struct{}
	QueryCollection        = "collection"         // -> CollectionView
	// SignalMembership asks a collection to admit one of its jobs, or to
	// forget it (MembershipRequest): a job's PUT, DELETE or end.
	SignalMembership = "membership"
	// UpdateLease admits new jobs on the slots of the collection's quota
	// leased to the API, gives leases back and grants new ones
	// (LeaseRequest -> LeaseAnswer).
	UpdateLease = "lease"

	// Job workflow.
	UpdatePutJob    = "putJob"    // PutJobRequest -> PutJobResult
	UpdatePatchJob  = "patchJob"  // PatchJobRequest -> PutJobResult
	UpdateDeleteJob = "deleteJob" // DeleteJobRequest -> struct{}
	UpdateRunNow    = "runNow"    // RunNowRequest -> struct{}
	UpdateBackfill  = "backfill"  // BackfillRequest -> BackfillResult
	UpdateRerun     = "rerun"     // RerunRequest -> struct{}
	// UpdateCollectionChanged tells a job what its collection did
	// (CollectionChange -> struct{}); it completes once the job shows it.
	UpdateCollectionChanged = "collectionChanged"
	// SignalAdmitted answers a job's MembershipRequest (AdmitAnswer).
	SignalAdmitted = "admitted"
	QueryJob       = "job"     // -> JobView
	QueryPreview   = "preview" // PreviewRequest -> []time.Time
)

// PutCollectionRequest creates or replaces a collection's definition.
type PutCollectionRequest struct {
	Collection Collection
	Preconditions
	Deadline
	Apply Apply `json:",omitempty"`
}

// PutResult answers a collection's PUT: the collection as stored (its
// ETag set), and whether the PUT created it (201) or updated it (200).
type PutResult struct {
	Collection Collection
	Created    bool
}

// MembershipRequest asks a collection to admit its job Job with a new
// definition, checking its quotas (how many jobs, how often one may run),
// or with Leave to forget it. The collection answers an admission with an
// AdmitAnswer of the same Seq; a collection's signals are handled in the
// order they came, so that the job's leave and a new job's admission of
// the same name never cross.
type MembershipRequest struct {
	Job         string
	Leave       bool          `json:",omitempty"`
	Seq         int           `json:",omitempty"` // the job's number for the request, which its answer carries
	ShortestGap time.Duration `json:",omitempty"` // between the job's occurrences; 0 for a one-time job
	// Defined marks the leave of a job defined by the admission ahead of
	// its name that it took (Admission.Gen): that admission was the
	// name's last, so none can be on its way, and its reservation goes at
	// once. The leave of any other job may come from a workflow that
	// ended before another took an admission of its name (Reservation):
	// one never defined, or one defined by asking its collection while
	// the name was reserved for another PUT, whose admission is still on
	// its way. Its reservation stays until its Until, then is looked at.
	Defined bool `json:",omitempty"`
	// Lease is the ID of the lease whose slot the API started the job's
	// workflow on (Lease); 0 for none. A claim (LeaseRequest) names it to
	// take the slot; a leave names it because the claim may come after
	// the leave.
	Lease int `json:",omitempty"`
	// Run, with Lease, is the first run ID of the job's workflow, which
	// tells the job that left from a later one of the same name.
	Run string `json:",omitempty"`
}

// AdmitAnswer is a collection's answer to an admission: Error says why it
// refused, nil when it admitted the job; Terms are the collection's as it
// answered.
type AdmitAnswer struct {
	Seq   int
	Error *Error `json:",omitempty"`
	Terms CollectionTerms
	// Admission, in an answer to a LeaseRequest's claim, is what the PUT
	// of a job the collection admitted as new carries to the job (the
	// name is reserved until its Until: Reservation); nil when the
	// collection held the name already (a redefinition, or a job on its
	// way out): that PUT's job asks the collection itself.
	Admission *Admission `json:",omitempty"`
}

// LeaseRequest is the API's batch of a collection's admissions, which
// the API sends for the PUTs of new jobs that arrive together: first the
// leases named in Release are given back, their slots not claimed freed
// (the API gives a lease back once its claims are answered); then Claims
// are admitted in order, each as its job's own MembershipRequest would
// be, except that one on the slot of a Lease the collection holds takes
// the slot rather than the quota's room, and that a name asked without
// one is reserved (Reservation); then, when Want is not 0, a new lease of
// at most Want slots is granted.
type LeaseRequest struct {
	Claims  []MembershipRequest `json:",omitempty"`
	Release []int               `json:",omitempty"`
	Want    int                 `json:",omitempty"`
}

// LeaseAnswer answers a LeaseRequest: Answers are the Claims' in order;
// Grant is the new lease, nil when none was asked or the collection had
// no room; Leased counts the slots the collection holds leased afterwards
// (the API's and any other process's), which may yet be freed.
type LeaseAnswer struct {
	Answers []AdmitAnswer
	Grant   *Lease `json:",omitempty"`
	Leased  int    `json:",omitempty"`
}

// Lease is a share of a collection's quota granted to an API process
// ahead of its PUTs: the API starts a new job's workflow on one of its
// Slots without waiting for the collection, with the admission the lease
// carries, and claims the name in its next LeaseRequest. The collection
// counts the slots as jobs until they are claimed or the lease is given
// back. One the API does not give back (it died) the collection looks at
// after Until: the jobs of the collection started while it was held, as
// the visibility store finds them, become its reservations.
type Lease struct {
	ID    int
	Slots int
	Terms CollectionTerms
	Until time.Time
}

// Admission returns what a job started on the lease carries.
func (l Lease) Admission() Admission {
	return Admission{Terms: l.Terms, Until: l.Until, Lease: l.ID}
}

// LeasedJobsRequest asks for the names of the jobs of Collection whose
// workflows run and started between Since and Until (a lease's term).
type LeasedJobsRequest struct {
	Collection Key
	Since      time.Time
	Until      time.Time
}

// HeldLease is a lease as its collection keeps it: the slots not yet
// claimed, the terms' revision it was granted at, and when; Left are the
// workflows (first run IDs) of jobs started on it that left, whose claims,
// when they come after the leave, take their slots and admit nothing.
type HeldLease struct {
	ID       int
	Slots    int
	Revision int
	Granted  time.Time
	Until    time.Time
	Left     []string `json:",omitempty"`
}

// Admission is a collection's admission of a new job ahead of its PUT,
// which the PUT carries (PutJobRequest): the job takes it in place of
// asking the collection, if it reaches the job before Until, when the
// collection may give the name up.
type Admission struct {
	Terms CollectionTerms
	Until time.Time
	Gen   int `json:",omitempty"` // its Reservation's
	// Lease is the ID of the lease the job's workflow started on, whose
	// claim of the name may reach the collection after the job's leave:
	// the leave names it (MembershipRequest.Lease).
	Lease int `json:",omitempty"`
}

// Reservation is a name a collection admitted ahead of its job's PUT
// (a LeaseRequest's claim) and holds until it knows the job holds it: when it has
// not learnt so by Until, it looks at the job's workflow and gives the
// name up unless it runs. Gen tells one reservation of a name from a later
// one.
type Reservation struct {
	Job   string
	Gen   int
	Until time.Time
}

// JobPresence is what a collection learns of a job whose name it
// reserved: whether its workflow runs, whether it is defined, and whether
// it was deleted: a deleted job has left its collection (or its leave is
// on its way), and its workflow runs on until its handlers in flight end.
type JobPresence struct {
	Running bool `json:",omitempty"`
	Defined bool `json:",omitempty"`
	Deleted bool `json:",omitempty"`
}

// CollectionTerms are what a job's definition must keep to of its
// collection, at one revision of the collection: a definition into a
// disabled (or suspended) collection takes effect disabled, and none may
// run more often than MaxRecurrence. A job admitted once keeps the newest
// terms it heard of (by Revision, from an answer or a CollectionChange)
// and takes a new definition they allow without asking its collection
// again.
type CollectionTerms struct {
	Revision      int
	Disabled      bool           `json:",omitempty"`
	MaxRecurrence *MaxRecurrence `json:",omitempty"`
}

// SameMaxRecurrence reports whether t and u allow the same recurrence.
func (t CollectionTerms) SameMaxRecurrence(u CollectionTerms) bool {
	if t.MaxRecurrence == nil || u.MaxRecurrence == nil {
		return t.MaxRecurrence == u.MaxRecurrence
	}
	return *t.MaxRecurrence == *u.MaxRecurrence
}

// Check refuses a definition whose occurrences come gap apart, closer
// than the terms allow (0: one occurrence, or none planned).
func (t CollectionTerms) Check(gap time.Duration, collection string) error {
	m := t.MaxRecurrence
	if gap <= 0 || m == nil || gap >= m.Period() {
		return nil
	}
	return &Error{Code: CodeQuotaExceeded, Target: "properties.recurrence",
		Message: fmt.Sprintf("the job runs as often as every %s, but job collection %s allows at most once every %d %s(s) (quota.maxRecurrence)",
			DescribeDuration(gap), collection, m.Interval, strings.ToLower(m.Frequency))}
}

// The operator's floor (recur's --min-interval): no job's occurrences may
// come closer than it, whatever its collection's quota allows. The
// default leaves every Azure schedule and every-10-second pollers alone;
// a second is the smallest, below which an occurrence's own work (a
// timer, an activity, a history row) takes longer than its period.
const (
	DefaultMinInterval  = 10 * time.Second
	SmallestMinInterval = time.Second
)

// CheckMinInterval refuses a definition whose occurrences come gap apart,
// closer than floor (0: one occurrence, or none planned).
func CheckMinInterval(gap, floor time.Duration) error {
	if gap <= 0 || gap >= floor {
		return nil
	}
	return &Error{Code: CodeInvalidRequest, Target: "properties.recurrence",
		Message: fmt.Sprintf("the job runs as often as every %s, but this server runs a job at most once every %s (its operator's --min-interval)",
			DescribeDuration(gap), DescribeDuration(floor))}
}

// shortestGapSample is how many occurrences the maxRecurrence quota looks
// at.
const shortestGapSample = 500

// ShortestGap is how close def's occurrences come when planned at c, which
// a collection's terms check (Check); 0 for a one-time job or one whose
// rule does not compile (Accept refuses it).
func ShortestGap(def Job, c time.Time) time.Duration {
	rule, err := recurrence.Compile(def.Properties.Schedule(), c)
	if err != nil {
		return 0
	}
	g, _ := rule.ShortestGap(c, shortestGapSample)
	return g
}

// CollectionView is a collection with the names of its jobs, or Deleted.
type CollectionView struct {
	Collection Collection
	Jobs       []string
	Deleted    bool
}

// CollectionStateRequest enables or disables a collection and every job
// in it.
type CollectionStateRequest struct {
	State string // CollectionEnabled or CollectionDisabled
	Deadline
}

// OperationResult is what a collection's operation (UpdateCollectionState)
// answers, in the workflow task that takes it: an update in flight until
// every job is told would hold one of the few updates Temporal lets a
// workflow have in flight (history.maxInFlightUpdates, 10 by default), and
// while telling takes seconds, as during a burst, the collection's next
// writes, a creation's admission included, would wait for one to end.
// Tell, when not 0, is the number of the run's message to its jobs that
// the operation waits for: it has ended once the run's memo MemoTold
// reaches it, or once the run has closed, which it does only with its jobs
// told. 0: the operation has ended (a run recorded before operations
// answered at once answers when it has).
type OperationResult struct {
	Tell int `json:",omitempty"`
}

// DeleteCollectionRequest deletes a collection and every job in it.
type DeleteCollectionRequest struct {
	Preconditions
	Deadline
}

// CollectionChange is what a collection tells its jobs: a new state
// (Enabled or Disabled, see JobsState; none when only its terms changed)
// with its new terms, or that they are deleted. A job takes the same
// change twice as once, and one older than the terms it heard not at all.
type CollectionChange struct {
	State   State            `json:",omitempty"`
	Terms   *CollectionTerms `json:",omitempty"`
	Deleted bool             `json:",omitempty"`
	// HoldUntil, with Deleted, keeps the deleted job's workflow running
	// until then: the collection admitted the name ahead of a PUT that may
	// carry the admission until then (Admission.Until), and a PUT that
	// finds the deleted workflow running is refused, where one that finds
	// none would start a job that takes the admission.
	HoldUntil time.Time `json:",omitempty"`
	// Gen is the held Reservation's: a job that took that admission
	// itself has had the PUT that carried it, and ends at once.
	Gen int `json:",omitempty"`
}

// HoldRequest asks that the jobs a deleted collection reserved, whose
// admissions a PUT may still carry, be told they are deleted, each
// workflow started if it does not run yet, and held until its
// reservation's Until (CollectionChange.HoldUntil), each by an update of
// ID UpdateID, as TellJobsRequest's.
type HoldRequest struct {
	Collection Key
	Jobs       []Reservation
	UpdateID   string `json:",omitempty"`
}

// TellJobsRequest has the TellJobs activity tell the jobs of a
// collection what it did, each as an update of ID UpdateID: a retried
// attempt sends the same updates again, which a job that took them
// already answers without taking them twice.
type TellJobsRequest struct {
	Collection Key // the collection's key; Job is empty
	Jobs       []string
	Change     CollectionChange
	UpdateID   string
}

// CollectionInput starts a collection workflow, or continues one as new
// with its state.
type CollectionInput struct {
	Key        Key
	Collection *Collection // nil until the first PUT
	Jobs       []string    // sorted
	Revision   int         // of the definition, for its ETag
	// Reserved are the names of Jobs admitted ahead of their PUTs whose
	// jobs have not shown they hold them, soonest Until first.
	Reserved []Reservation `json:",omitempty"`
	// Reservations counts the reservations ever made: the Gen of the
	// next.
	Reservations int `json:",omitempty"`
	// Leases are the shares of the quota leased to API processes, each
	// counted as its slots not yet claimed; Leased counts the leases ever
	// granted: the ID of the next.
	Leases []HeldLease `json:",omitempty"`
	Leased int         `json:",omitempty"`
}

// JobInput starts a job workflow, or continues one as new. A workflow
// the API starts for a new job's PUT holds its definition (State, from
// lifecycle.NewState) and the admission of its collection the PUT took;
// one started without State waits for its definition in a PutJobRequest
// update.
type JobInput struct {
	Key   Key
	State *JobState
	// Origin names the job's ETags (NewETag) when it is not the first run
	// ID of the workflow's chain: a job the API started names them before
	// Temporal gives the run its ID.
	Origin    string     `json:",omitempty"`
	Admission *Admission `json:",omitempty"`
}

// JobState is what a job workflow carries across continue-as-new.
type JobState struct {
	Job Job // definition, state and status
	// PlannedFrom is C of docs/recurrence.md: when the job was last
	// defined, which its rule is planned from.
	PlannedFrom time.Time  `json:"Created"`
	Runs        int        // scheduled runs since PlannedFrom, for count
	Next        *time.Time // nominal time of the next occurrence; nil when none is left
	Buffered    *time.Time // BufferOne: the occurrence waiting for the running one
	// Handled is the nominal time of the last scheduled occurrence the
	// job ran or postponed: one at or before it is never handled again,
	// so that a redefinition planned within the second of a run (C is in
	// whole seconds) does not run that occurrence twice.
	Handled *time.Time `json:",omitempty"`
	// ConsecutiveFaults counts faulted runs in a row for
	// maxConsecutiveFaults: only a success ends it, where enabling the
	// job ends Status.ConsecutiveFailures too.
	ConsecutiveFaults int
	// FailingSince is when the first run of the job's failure streak
	// (Status.ConsecutiveFailures) started, in whole seconds; nil when it
	// has none. AttrFailingSince holds it.
	FailingSince *time.Time `json:",omitempty"`
	Revision     int        // of the definition, for its ETag
	// Backfill holds the nominal times a backfill queued and not yet
	// started, in order.
	Backfill []time.Time `json:",omitempty"`
	// BackfillPace is the pace of the backfill last queued
	// (BackfillRequest.Pace), and BackfillNotBefore the earliest start
	// of the next backfill occurrence: the last one's start plus the
	// pace; nil before the first paced start.
	BackfillPace      time.Duration `json:",omitempty"`
	BackfillNotBefore *time.Time    `json:",omitempty"`
	// Reruns holds the failures a re-run queued and not yet started, in
	// order; Reran counts the re-runs started, which tells their
	// occurrence IDs apart.
	Reruns []Failure `json:",omitempty"`
	Reran  int       `json:",omitempty"`
	// Finished is when the job was first seen completed or faulted: its
	// retention counts from there.
	Finished *time.Time `json:",omitempty"`
}

// DefaultFinishedRetention is how long a completed or faulted job is kept
// before it deletes itself, as Azure Scheduler kept them.
const DefaultFinishedRetention = 60 * 24 * time.Hour

// PutJobRequest defines or redefines a job. The job workflow's clock at
// the update is C, the creation time of docs/recurrence.md. The job workflow
// has its collection admit the definition before it takes it, so that
// one update is the whole of a PUT: quotas and membership are the
// workflows' to keep, whatever becomes of the caller.
//
// A PUT of a new job carries its collection's Admission, asked for by the
// API (a LeaseRequest's claim), so that the job defines itself in the workflow task
// that takes the PUT; one without asks the collection itself.
type PutJobRequest struct {
	Job Job
	Preconditions
	Deadline
	Admission *Admission `json:",omitempty"`
	Apply     Apply      `json:",omitempty"`
}

// PatchJobRequest redefines a job with its definition merged with a JSON
// merge patch (PatchJob), as a PutJobRequest would, except that it
// creates nothing. The job's workflow merges it, since it alone holds the
// definition's secrets: a PATCH is one update. Base is the ETag of the
// definition the API merged the patch into to check it (the targets of
// Workflow actions); a job redefined since refuses it with
// CodeBaseChanged, and the API reads it again.
type PatchJobRequest struct {
	Patch json.RawMessage
	Base  string
	Preconditions
	Deadline
}

// PutJobResult answers a PutJobRequest: the job as defined, and whether
// the request created it (201) or redefined it (200).
type PutJobResult struct {
	Job     Job
	Created bool
}

// DeleteJobRequest deletes a job: its workflow ends.
type DeleteJobRequest struct {
	Preconditions
	Deadline
}

// PreviewRequest asks a job for its next Count scheduled runs.
type PreviewRequest struct {
	Count int
}

// MaxPreview bounds a preview.
const MaxPreview = 1000

// BackfillRequest runs the job's occurrences due in [StartTime, EndTime],
// a past range, with their own nominal times (recur's extension).
type BackfillRequest struct {
	StartTime time.Time `json:"startTime"`
	EndTime   time.Time `json:"endTime"`
	// Pace is the least time between the starts of two of the job's
	// backfill occurrences, the operator's (the API's --backfill-pace);
	// zero is DefaultBackfillPace. It paces every occurrence the job
	// holds queued from then on.
	Pace time.Duration `json:"pace,omitempty"`
	// Budget, if set, is the most occurrences the backfill may queue:
	// those the API counted (BackfillCount) and charged the job's
	// subscription for. A job redefined since, whose range holds more,
	// refuses the backfill.
	Budget *int `json:"budget,omitempty"`
	Deadline
}

// BackfillResult says how many occurrences a backfill queued, and when
// the last of those the job holds queued may start at its pace.
type BackfillResult struct {
	Queued int `json:"queued"`
	// LastRunTime is the earliest start of the last occurrence queued:
	// one pace after another from the next backfill start the pace
	// allows. Runs that last longer than the pace, the schedule's runs
	// taking the job's slot, or a disable make it later. Absent when
	// the job holds none queued.
	LastRunTime *time.Time `json:"lastRunTime,omitempty"`
}

// MaxBackfill bounds the occurrences of one backfill.
const MaxBackfill = 1000

// MaxQueuedBackfill bounds the backfill occurrences a job holds queued:
// a backfill that would queue more is refused.
const MaxQueuedBackfill = 10_000

// RunNowRequest runs a job once, now, outside its schedule: it counts in
// executionCount, not toward count.
type RunNowRequest struct {
	Deadline
}

// RerunRequest runs a failed occurrence again as it ran (recur's
// extension): its action, its nominal time, its calls signed as its own.
type RerunRequest struct {
	Failure Failure
	Deadline
}

// JobView is what the job query returns: the job with its status, or
// Deleted when the job was deleted. The job workflow's memo holds it too,
// under MemoJob, with the secrets of the definition redacted; the status
// there is the one of the last change of definition or state, and the
// current one is under MemoStatus (WithStatus).
type JobView struct {
	Job     Job
	Deleted bool
	// PlannedFrom and Runs are what planning the job's next runs takes
	// beside its definition (Upcoming): when it was last defined (C), and
	// how many occurrences counted toward its count.
	PlannedFrom time.Time `json:"Created"`
	Runs        int
}

// Memo keys of the public views the job and collection workflows keep in
// their memos: the API reads them from what Temporal persisted (describe,
// visibility), so that GET and lists need no worker.
const (
	MemoJob        = "recurJob"        // -> JobView, secrets redacted
	MemoStatus     = "recurStatus"     // -> StatusView
	MemoCollection = "recurCollection" // -> CollectionView without Jobs
	// MemoRows is the history rows of the occurrences a job handled in
	// one workflow task: each upsert of it is an event of the job's own
	// history, which the API reads as the job's history (newest first,
	// run by run back along continue-as-new). The memo keeps the last.
	MemoRows = "recurRows" // -> []HistoryRow
	// MemoJobNames prefixes the keys of the collection's memo that hold
	// its jobs' names (JobNamesKey): a list page reads its names there and
	// the views of that page alone from visibility.
	MemoJobNames = "recurJobs."
	// MemoTold is the number of the last message to its jobs that a
	// collection's run has delivered, of those an operation waits for
	// (OperationResult).
	MemoTold = "recurTold" // -> int
)

// jobNameShards is how many memo keys a collection's job names are spread
// over: an admission rewrites one of them, a sixteenth of the names.
const jobNameShards = 16

// JobNamesKey returns the key of the collection's memo whose sorted list
// of names ([]string) holds the job named name.
func JobNamesKey(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%s%x", MemoJobNames, h.Sum32()%jobNameShards)
}

// StatusView is the part of a job's public view that changes with each
// occurrence: the memo keeps it apart from the definition, so that an
// occurrence writes a few hundred bytes, not the whole job.
type StatusView struct {
	Status Status
	Runs   int // as JobView.Runs
}

// WithStatus returns the view with the status s, the current one.
func (v JobView) WithStatus(s StatusView) JobView {
	status := s.Status
	v.Job.Properties.Status = &status
	v.Runs = s.Runs
	return v
}

// RunResult is the outcome of one occurrence's main action, for the
// job's status.
type RunResult struct {
	Status         ExecutionStatus
	HTTPStatus     int    `json:",omitempty"`
	Message        string `json:",omitempty"`
	Attempts       int    // attempts of the main action
	FailedAttempts int    // of those, how many failed
	Faulted        bool   // the main action failed after all its retries
}

// HistoryRow is one row of a job's history, in the shape of Azure's
// JobHistoryDefinition properties. The job workflow writes them to its
// own history under MemoRows: an occurrence's main action's row, then its
// error action's, or one Postponed row.
type HistoryRow struct {
	StartTime             *time.Time      `json:"startTime,omitempty"`
	EndTime               *time.Time      `json:"endTime,omitempty"`
	ExpectedExecutionTime time.Time       `json:"expectedExecutionTime"`
	ActionName            string          `json:"actionName"`
	Status                ExecutionStatus `json:"status"`
	Message               string          `json:"message,omitempty"`
	RetryCount            int             `json:"retryCount"`
	RepeatCount           int             `json:"repeatCount"`
	// Backfill marks a run of a backfill (recur's extension).
	Backfill bool `json:"backfill,omitempty"`
	// RerunOf names the failure a re-run ran again (recur's extension).
	RerunOf string `json:"rerunOf,omitempty"`
	// Lateness is how late the main action of a scheduled run started
	// against its start as planned (recur's extension, as
	// Status.LastLateness); none on the rows of other runs.
	Lateness *Duration `json:"lateness,omitempty"`
}

// Action names of history rows.
const (
	MainAction  = "MainAction"
	ErrorAction = "ErrorAction"
)

// ExecutionStatus is a history row's status, as the API spells it.
type ExecutionStatus string

// Execution statuses.
const (
	ExecutionCompleted ExecutionStatus = "Completed"
	ExecutionFailed    ExecutionStatus = "Failed"
	ExecutionPostponed ExecutionStatus = "Postponed"
)

// ActionInput is the argument of the activities other than HTTP: the
// action and the occurrence it runs for. Their result is an HTTPResponse
// (status and body of what answered, and the attempt).
type ActionInput struct {
	ActionName   string // MainAction or ErrorAction
	Spec         ActionSpec
	OccurrenceID string
	Key          Key
	Nominal      time.Time
	Timeout      time.Duration // of one attempt
}

// HTTPRequestInput is the HTTP activity's argument.
type HTTPRequestInput struct {
	ActionName   string // MainAction or ErrorAction
	Request      HTTPRequest
	OccurrenceID string
	// SignedAs is the occurrence ID the calls are signed as (webhook-id)
	// when it is not OccurrenceID: a re-run's, its original's.
	SignedAs string `json:",omitempty"`
	Key      Key
	Nominal  time.Time
	Timeout  time.Duration // of one attempt
}

// FirstAttemptInput is the argument of the local activity that makes an
// occurrence's first attempt of its main action: the HTTP activity's
// argument for an HTTP(S) action, the other activities' otherwise.
type FirstAttemptInput struct {
	HTTP   *HTTPRequestInput `json:",omitempty"`
	Action *ActionInput      `json:",omitempty"`
}

// FirstAttempt is what that local activity returns when the attempt did
// not fail: its answer, or where the attempt went on running when the
// answer did not come within the worker's budget.
type FirstAttempt struct {
	Response HTTPResponse
	// Queue and ID, when Queue is set, name the attempt still running in
	// the worker process that started it: Queue is the task queue only
	// that process polls, ID the attempt's key in its registry.
	Queue string `json:",omitempty"`
	ID    string `json:",omitempty"`
	// Declined says the worker starts no attempt in a local activity
	// (its budget is 0): nothing was sent.
	Declined bool `json:",omitempty"`
}

// AwaitAttemptInput is the argument of the activity that waits, in the
// worker process that started it, for a first attempt handed off.
type AwaitAttemptInput struct {
	ID string
}

// HTTPResponse is what the HTTP activity returns: status and at most
// MaxResponseBody bytes of the body.
type HTTPResponse struct {
	StatusCode int    `json:",omitempty"`
	Status     string `json:",omitempty"` // the status line, "200 OK"
	Headers    string `json:",omitempty"` // the headers of note, "Name: value; ..."
	Body       string `json:",omitempty"`
	Attempt    int    // which attempt this was, from 1
	// Message is a failed attempt's error message. A local activity's
	// failure keeps its message in the job's history in clear, whatever
	// the failure converter, so the worker moves it here, among the
	// payloads that recur's codec encrypts (worker.Options).
	Message string `json:",omitempty"`
}

// MaxResponseBody is how much of a response body history keeps.
const MaxResponseBody = 2048
