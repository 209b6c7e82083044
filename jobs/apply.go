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
// definition, and same whether it is the PUT's, both accepted.
func (a Apply) Refusal(defined bool, same func() bool) error {
	switch {
	case a == ApplyAlways:
		return nil
	case defined && same():
		return NotWritten(OutcomeUnchanged).ToApplicationError()
	case a == ApplyIfChanged:
		return nil
	case !defined:
		return NotWritten(OutcomeCreated).ToApplicationError()
	}
	return NotWritten(OutcomeUpdated).ToApplicationError()
}

// NotWritten is the refusal of a PUT not written, whose outcome is
// outcome.
func NotWritten(outcome string) *Error {
	return &Error{Code: CodeNotWritten, Target: outcome, Message: "the PUT is not written: " + outcome}
}

// SameJob reports whether two accepted job definitions are one: the same
// properties, secrets included, whatever their status.
func SameJob(a, b Job) bool {
	a.Properties.Status, b.Properties.Status = nil, nil
	return sameJSON(a.Properties, b.Properties)
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
