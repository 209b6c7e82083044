package jobs

import (
	"strings"
	"time"
	"unicode/utf8"
)

// MemoFailures is the failure records of the occurrences whose main action
// failed for good in one workflow task, written in the same upsert of the
// job's memo as their history rows (MemoRows): each upsert of it is an
// event of the job's own history, which the API reads back as the job's
// failures, as far as its history goes. The memo keeps the last.
const MemoFailures = "recurFailures" // -> []Failure

// Kinds of run, as a failure record names them.
const (
	RunKindScheduled = "scheduled"
	RunKindRunNow    = "runNow"
	RunKindBackfill  = "backfill"
	RunKindRerun     = "rerun"
)

// MaxFailures bounds the failure records a job lists: its newest.
const MaxFailures = 100

// MaxQueuedReruns bounds the re-runs a job holds queued.
const MaxQueuedReruns = 100

// MaxFailureBody is how much of the last answer's body a failure record
// keeps.
const MaxFailureBody = 1024

// Failure is an occurrence whose main action failed for good (after its
// retries), as the job keeps it to be read and run again: its action as it
// ran, secrets included, since a re-run sends it again. Payloads pass
// through recur's codec, so the record is encrypted at rest like the
// definition; the API shows it only through Redacted.
type Failure struct {
	ID           string    // URL-safe, unique within the job (FailureID)
	Nominal      time.Time // the occurrence's nominal time
	Kind         string    // RunKindScheduled, RunKindRunNow, RunKindBackfill or RunKindRerun
	OccurrenceID string    // the run's occurrence ID
	// SignedAs is the occurrence ID its calls were signed with (webhook-id),
	// when it is not OccurrenceID: a re-run signs as the run it re-runs.
	SignedAs string `json:",omitempty"`
	// RerunOf is the ID of the failure a re-run ran again.
	RerunOf        string `json:",omitempty"`
	Action         Action
	Started, Ended time.Time
	// Response is the last answer of the main action: status, headers of
	// note, the body's first MaxFailureBody bytes.
	Response       HTTPResponse
	Message        string // the main action's history row's message
	Attempts       int
	FailedAttempts int
	// ErrorAction is the outcome of the error action, when the job has one.
	ErrorAction ExecutionStatus `json:",omitempty"`
}

// failureIDLayout spells a failure's nominal time in its ID, as history
// rows' IDs do.
const failureIDLayout = "20060102T150405.999999999"

// FailureID is the ID of the failure of the run of occurrence
// occurrenceID, of nominal time nominal and kind kind: the nominal time
// and, for the runs that share it (runs now, re-runs), the suffix that
// tells their occurrence IDs apart, else the kind. It holds only letters,
// digits, '.' and '-': it is a path segment of the API.
func FailureID(nominal time.Time, kind, occurrenceID string) string {
	id := nominal.UTC().Format(failureIDLayout) + "Z-"
	_, after, _ := strings.Cut(occurrenceID, "@")
	if _, suffix, ok := strings.Cut(after, "/"); ok && suffix != "" {
		return id + strings.ReplaceAll(suffix, "/", "-")
	}
	return id + kind
}

// CutBody returns s cut to at most n bytes, on a character boundary: a
// character cut in two leaves at most three of its bytes.
func CutBody(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for back := 0; back < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(s[n]); back++ {
		n--
	}
	return s[:n]
}

// Redacted returns a copy of f whose action carries no secret: the form
// every API response must use.
func (f Failure) Redacted() Failure {
	f.Action = f.Action.Redacted()
	return f
}
