package jobs

import (
	"context"
	"time"
)

// Deadline is the time by which the workflow a write is sent to must
// take it, or refuse it: the API answers 503 once a request's time has
// run out, and a write its workflow took after that would happen after
// its client was told it failed (a DELETE answered 503 that deletes the
// job a minute later; a run now that runs after its client has asked
// again). A write the workflow takes at or before NotAfter (the
// workflow task's time) goes on, with TakeMargin of the request's time
// left for its answer to come back; one it takes later is refused
// (CodeNotTaken), and changes nothing.
type Deadline struct {
	// NotAfter is the latest time the write may be taken at; zero is
	// none.
	NotAfter time.Time `json:",omitzero"`
}

// TakeMargin is how much of a request's time a write has left when it is
// taken at its Deadline: for its workflow task to end, a DELETE's word to
// its collection to arrive and the answer to reach the API. It also
// absorbs that much difference between the API's clock and Temporal's.
const TakeMargin = 10 * time.Second

// DeadlineOf is the Deadline of a write sent with ctx: TakeMargin before
// ctx's deadline, none when ctx has none.
func DeadlineOf(ctx context.Context) Deadline {
	d, ok := ctx.Deadline()
	if !ok {
		return Deadline{}
	}
	return Deadline{NotAfter: d.Add(-TakeMargin).UTC()}
}

// Late refuses a write taken at now, past NotAfter.
func (d Deadline) Late(now time.Time) *Error {
	if d.NotAfter.IsZero() || !now.After(d.NotAfter) {
		return nil
	}
	return &Error{Code: CodeNotTaken, Message: "the write was not taken before the request's time ran out (its job or collection was busy); nothing changed: try again"}
}
