package jobs

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Apply says how a PUT applies its definition: the Recur-Apply header of
// recur's API. A write that Apply keeps from writing is refused by the
// resource's workflow in its update validator, so it leaves no trace in
// history; the refusal (CodeNotWritten) says what the PUT does or would do.
type Apply string

const (
	// ApplyAlways writes the definition: a plain PUT.
	ApplyAlways Apply = ""
	// ApplyIfChanged writes the definition only when it differs from the
	// stored one, secrets included: what recur import sends, so that a
	// second import of the same files writes nothing.
	ApplyIfChanged Apply = "if-changed"
	// ApplyWhatIf writes nothing and says what a PUT would do.
	ApplyWhatIf Apply = "what-if"
)

// ParseApply reads a Recur-Apply header.
func ParseApply(header string) (Apply, error) {
	switch a := Apply(header); a {
	case ApplyAlways, ApplyIfChanged, ApplyWhatIf:
		return a, nil
	}
	return "", &Error{Code: CodeInvalidRequest, Target: "Recur-Apply",
		Message: fmt.Sprintf("the Recur-Apply header must be %s or %s, or not given", ApplyIfChanged, ApplyWhatIf)}
}

// Outcomes of a PUT, in the Recur-Outcome header of its answer.
const (
	OutcomeCreated   = "created"
	OutcomeUpdated   = "updated"
	OutcomeUnchanged = "unchanged"
)

// Refusal returns the refusal of a PUT given as Apply says, or nil when
// the PUT is to be written. defined says whether the resource has a
// definition, and same whether it is the PUT's, both accepted; writable
// refuses a write the resource takes from no PUT (a job that has ended),
// which a PUT that changes nothing never needs.
func (a Apply) Refusal(defined bool, same func() bool, writable func() error) error {
	if a != ApplyAlways && defined && same() {
		return NotWritten(OutcomeUnchanged).ToApplicationError()
	}
	if err := writable(); err != nil || a != ApplyWhatIf {
		return err
	}
	if !defined {
		return NotWritten(OutcomeCreated).ToApplicationError()
	}
	return NotWritten(OutcomeUpdated).ToApplicationError()
}

// NotWritten is the refusal of a PUT not written, whose outcome is
// outcome.
func NotWritten(outcome string) *Error {
	return &Error{Code: CodeNotWritten, Target: outcome, Message: "the PUT is not written: " + outcome}
}

// SameJob reports whether a new accepted definition is the stored one:
// the same properties, secrets included, whatever their status. A job
// that ran its course (Completed, Faulted) holds the definition it was
// given, enabled, disabled (as recur export writes a faulted job, so that
// it runs nowhere) or completed: its state and its reason are the
// scheduler's doing, not another definition.
func SameJob(stored, accepted Job) bool {
	s, a := stored.Properties, accepted.Properties
	s.Status, a.Status = nil, nil
	if s.State.Final() && (a.State == Enabled || a.State == Disabled || a.State == s.State) {
		s.State, s.StateReason = a.State, ""
		a.StateReason = ""
	}
	return sameJSON(s, a)
}

// SameCollection reports whether two accepted collection definitions are
// one.
func SameCollection(a, b Collection) bool {
	return a.Location == b.Location && sameJSON(a.Tags, b.Tags) && sameJSON(a.Properties, b.Properties)
}

// sameJSON compares two values as encoding/json writes them: maps in
// the order of their keys, so equal values write equal bytes.
func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}
