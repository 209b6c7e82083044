package jobs

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/recurrence"
)

// Error codes. They appear in the API's ARM error envelope and, as the
// type of Temporal application errors, cross the wire between workflows
// and the API: they never change once released.
const (
	CodeInvalidName       = "InvalidResourceName"
	CodeInvalidRequest    = "BadRequest"
	CodeNotFound          = "ResourceNotFound"
	CodeCollectionMissing = "JobCollectionNotFound"
	CodeQuotaExceeded     = "QuotaExceeded"
	CodeNotSupported      = "NotSupported"
	CodeConflict          = "Conflict"
	// CodePreconditionFailed is a write whose If-Match or If-None-Match
	// the resource fails (412).
	CodePreconditionFailed = "PreconditionFailed"
	// CodeBaseChanged refuses a PatchJobRequest whose Base is no longer
	// the job's definition (409 once the API gives up reading it again).
	CodeBaseChanged = "BaseChanged"
	// CodeNotWritten refuses a PUT its Apply keeps from writing; the
	// target is the PUT's outcome (OutcomeUnchanged, or what a what-if
	// PUT would do). The API answers it 200.
	CodeNotWritten = "NotWritten"
	// CodeNotTaken refuses a write its workflow took past its Deadline,
	// after the API had answered 503 (which the API answers it too).
	CodeNotTaken = "NotTaken"
)

// Error is a business error: what the API answers with a 4xx.
type Error struct {
	Code    string
	Target  string // the JSON path or parameter at fault, if any
	Message string
}

func (e *Error) Error() string { return e.Message }

// NotFound returns the error for a missing resource.
func NotFound(what string) *Error {
	return &Error{Code: CodeNotFound, Message: what + " was not found"}
}

// CollectionMissing refuses a job whose collection does not exist.
func CollectionMissing(collection string) *Error {
	return &Error{Code: CodeCollectionMissing, Message: "job collection " + collection + " was not found"}
}

// CollectionFull refuses a new job of a collection that holds limit jobs,
// its quota.
func CollectionFull(collection string, limit int) *Error {
	return &Error{Code: CodeQuotaExceeded, Target: "properties.quota.maxJobCount",
		Message: fmt.Sprintf("job collection %s already has its maximum of %d jobs", collection, limit)}
}

// ToApplicationError wraps e for the wire: workflows return it from update
// validators and handlers, and FromApplicationError turns it back.
func (e *Error) ToApplicationError() error {
	return temporal.NewNonRetryableApplicationError(e.Message, e.Code, nil, e.Target)
}

// wireCodes are the codes an *Error may carry across the wire: those of
// this package and recurrence's (ValidationError). An application error of
// another type is no business error of recur's but a failure (Temporal's
// AcceptedUpdateCompletedWorkflow, when a workflow ended under an update
// it had taken), which the API answers 500.
var wireCodes = map[string]bool{
	CodeInvalidName: true, CodeInvalidRequest: true, CodeNotFound: true, CodeCollectionMissing: true,
	CodeQuotaExceeded: true, CodeNotSupported: true, CodeConflict: true, CodePreconditionFailed: true,
	CodeBaseChanged: true, CodeNotWritten: true, CodeInvalidContent: true, CodeNotTaken: true,

	recurrence.CodeInvalidJSON: true, recurrence.CodeInvalidDateTime: true, recurrence.CodeRequired: true,
	recurrence.CodeInvalidValue: true, recurrence.CodeOutOfRange: true, recurrence.CodeNotAllowed: true,
	recurrence.CodeUnknownProperty: true, recurrence.CodeUnknownTimeZone: true, recurrence.CodeEndBeforeStart: true,
	recurrence.CodeNeverOccurs: true, recurrence.CodeTooManyWeekDays: true, recurrence.CodeInvalidFrequency: true,
}

// FromApplicationError returns the *Error carried by err, if any: an
// application error whose type is one of recur's codes.
func FromApplicationError(err error) (*Error, bool) {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !wireCodes[appErr.Type()] {
		return nil, false
	}
	e := &Error{Code: appErr.Type(), Message: appErr.Message()}
	if appErr.HasDetails() {
		_ = appErr.Details(&e.Target)
	}
	return e, true
}
