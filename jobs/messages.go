package jobs

import "time"

// Task queues recur's workers poll: collection and job workflows on
// TaskQueue, run workflows and their actions on RunTaskQueue. Each has
// pollers of its own, so that a burst of jobs falling due never keeps
// the runs they start waiting: the SDK polls a worker's sticky queue
// first while it has a backlog, and a new run's first task is not on it.
const (
	TaskQueue    = "recur"
	RunTaskQueue = "recur-runs"
)

// OwnTaskQueue reports whether q is one of recur's task queues.
func OwnTaskQueue(q string) bool { return q == TaskQueue || q == RunTaskQueue }

// Workflow and activity type names: a wire contract, never renamed.
const (
	CollectionWorkflowName = "recur.Collection"
	JobWorkflowName        = "recur.Job"
	RunWorkflowName        = "recur.Run"
	HTTPActivityName       = "recur.HTTP"
	StorageQueueActivity   = "recur.StorageQueue"
	ServiceBusActivity     = "recur.ServiceBus"
	StartWorkflowActivity  = "recur.StartWorkflow"
	// FinishedRetentionActivity is a local activity: how long a
	// completed or faulted job is kept before it deletes itself.
	FinishedRetentionActivity = "recur.FinishedRetention"
)

// Message names: a wire contract, never renamed.
const (
	// Collection workflow.
	UpdatePutCollection    = "putCollection"      // PutCollectionRequest -> PutResult
	UpdateAddJob           = "addJob"             // AddJobRequest -> PutResult
	UpdateRemoveJob        = "removeJob"          // RemoveJobRequest -> struct{}
	UpdateCollectionState  = "setCollectionState" // CollectionStateRequest -> struct{}
	UpdateDeleteCollection = "deleteCollection"   // DeleteCollectionRequest -> struct{}
	QueryCollection        = "collection"         // -> CollectionView
	// SignalJobGone tells a collection that one of its jobs deleted itself
	// (JobGoneSignal): a finished job past its retention.
	SignalJobGone = "jobGone"

	// Job workflow.
	UpdatePutJob    = "putJob"    // PutJobRequest -> Job
	UpdateDeleteJob = "deleteJob" // DeleteJobRequest -> struct{}
	UpdateRunNow    = "runNow"    // RunNowRequest -> struct{}
	// SignalCollection tells a job what its collection did (CollectionSignal).
	SignalCollection = "collection"
	QueryJob         = "job"     // -> JobView
	QueryPreview     = "preview" // PreviewRequest -> []time.Time
)

// PutCollectionRequest creates or replaces a collection's definition.
type PutCollectionRequest struct {
	Collection Collection
}

// PutResult answers a PUT: whether it created the resource (201) or
// updated it (200).
type PutResult struct {
	Created bool
}

// AddJobRequest records a job in its collection (or confirms it is
// there), checking the quota: how many jobs, and how often one may run.
type AddJobRequest struct {
	Job         string
	ShortestGap time.Duration // between the job's occurrences; 0 for a one-time job
}

// RemoveJobRequest forgets a deleted job.
type RemoveJobRequest struct {
	Job string
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
}

// DeleteCollectionRequest deletes a collection and every job in it.
type DeleteCollectionRequest struct{}

// CollectionSignal is what a collection sends its jobs: a new state
// (Enabled or Disabled, see JobsState), or that they are deleted.
type CollectionSignal struct {
	State   State `json:",omitempty"`
	Deleted bool  `json:",omitempty"`
}

// CollectionInput starts a collection workflow, or continues one as new
// with its state.
type CollectionInput struct {
	Key        Key
	Collection *Collection // nil until the first PUT
	Jobs       []string    // sorted
}

// JobInput starts a job workflow (State nil: the definition arrives with
// the first PutJobRequest update), or continues one as new.
type JobInput struct {
	Key   Key
	State *JobState
}

// JobState is what a job workflow carries across continue-as-new.
type JobState struct {
	Job               Job        // definition, state and status
	Created           time.Time  // C of RECURRENCE.md
	Runs              int        // scheduled runs since Created, for count
	Next              *time.Time // nominal time of the next occurrence; nil when none is left
	Buffered          *time.Time // BufferOne: the occurrence waiting for the running one
	ConsecutiveFaults int
	// Finished is when the job was first seen completed or faulted: its
	// retention counts from there.
	Finished *time.Time `json:",omitempty"`
}

// JobGoneSignal tells a collection that its job Job deleted itself.
type JobGoneSignal struct {
	Job string
}

// DefaultFinishedRetention is how long a completed or faulted job is kept
// before it deletes itself, as Azure Scheduler kept them.
const DefaultFinishedRetention = 60 * 24 * time.Hour

// PutJobRequest defines or redefines a job. The job workflow's clock at
// the update is C, the creation time of RECURRENCE.md.
type PutJobRequest struct {
	Job Job
}

// DeleteJobRequest deletes a job: its workflow ends.
type DeleteJobRequest struct{}

// PreviewRequest asks a job for its next Count scheduled runs.
type PreviewRequest struct {
	Count int
}

// MaxPreview bounds a preview.
const MaxPreview = 1000

// RunNowRequest runs a job once, now, outside its schedule: it counts in
// executionCount, not toward count.
type RunNowRequest struct{}

// JobView is what the job query returns: the job with its status, or
// Deleted when the job was deleted. The job workflow's memo holds it too,
// under MemoJob, with the secrets of the definition redacted.
type JobView struct {
	Job     Job
	Deleted bool
	// Created and Runs are what planning the job's next runs takes
	// beside its definition (Upcoming): when it was last defined, and how
	// many occurrences counted toward its count.
	Created time.Time
	Runs    int
}

// Memo keys of the public views the job and collection workflows keep in
// their memos: the API reads them from what Temporal persisted (describe,
// visibility), so that GET and lists need no worker.
const (
	MemoJob        = "recurJob"        // -> JobView, secrets redacted
	MemoCollection = "recurCollection" // -> CollectionView without Jobs
)

// RunInput starts the run workflow of one occurrence. A postponed
// occurrence (Postponed gives the reason) runs nothing: its workflow only
// records the history row.
type RunInput struct {
	Key       Key
	Nominal   time.Time // the occurrence's nominal time
	Action    Action
	Repeat    int    // the job's runs so far, this one included
	Postponed string `json:",omitempty"`
	// Folded counts the later occurrences a Postponed row also stands
	// for: a job that is behind folds the occurrences it postpones into
	// one row rather than a run workflow each.
	Folded int `json:",omitempty"`
}

// RunResult is the outcome of one occurrence, for the job's status.
type RunResult struct {
	Status         ExecutionStatus
	HTTPStatus     int    `json:",omitempty"`
	Message        string `json:",omitempty"`
	Attempts       int    // attempts of the main action
	FailedAttempts int    // of those, how many failed
	Faulted        bool   // the main action failed after all its retries
}

// HistoryRow is one row of a job's history, in the shape of Azure's
// JobHistoryDefinition properties. Each run workflow keeps its rows (the
// main action's, then the error action's) in its memo under MemoHistory,
// so a job's history is one visibility query.
type HistoryRow struct {
	StartTime             *time.Time      `json:"startTime,omitempty"`
	EndTime               *time.Time      `json:"endTime,omitempty"`
	ExpectedExecutionTime time.Time       `json:"expectedExecutionTime"`
	ActionName            string          `json:"actionName"`
	Status                ExecutionStatus `json:"status"`
	Message               string          `json:"message,omitempty"`
	RetryCount            int             `json:"retryCount"`
	RepeatCount           int             `json:"repeatCount"`
}

// MemoHistory is the memo key of a run workflow's history rows.
const MemoHistory = "recurHistory"

// Action names of history rows.
const (
	MainAction  = "MainAction"
	ErrorAction = "ErrorAction"
)

// ExecutionStatus is a history row's status, as the API spells it.
type ExecutionStatus string

// Execution statuses.
const (
	Succeeded ExecutionStatus = "Completed"
	Failed    ExecutionStatus = "Failed"
	Postponed ExecutionStatus = "Postponed"
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
	Key          Key
	Nominal      time.Time
	Timeout      time.Duration // of one attempt
}

// HTTPResponse is what the HTTP activity returns: status and at most
// MaxResponseBody bytes of the body.
type HTTPResponse struct {
	StatusCode int    `json:",omitempty"`
	Status     string `json:",omitempty"` // the status line, "200 OK"
	Headers    string `json:",omitempty"` // the headers of note, "Name: value; ..."
	Body       string `json:",omitempty"`
	Attempt    int    // which attempt this was, from 1
}

// MaxResponseBody is how much of a response body history keeps.
const MaxResponseBody = 2048
