package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// An action never starts in the workflow task that accepted the update
// asking for it: a run now, a PUT or PATCH whose first occurrence is due
// at once, a backfill. Until that task completes, the update's acceptance
// is not durable: Temporal may still lose the task (a completion it
// refuses, a speculative task it drops) and answer the update's caller
// that it failed, or hand the update to the workflow again, while a local
// activity started in the task has already reached its target, under a
// key the next try would not repeat. So the loop holds such starts until
// a later task: the gate opens gateDelay after the clock of the last task
// that accepted an update, a time no such task has, and the loop sleeps
// until then when it holds something.

// gateDelay is how long after an update's acceptance the gate opens: the
// shortest durable timer, whose firing is a later workflow task.
const gateDelay = time.Millisecond

// gate is what the loop knows of the updates that may start actions.
type gate struct {
	accepted time.Time   // the clock of the last task that accepted one
	held     []time.Time // runs now it holds, by nominal time
}

// accept notes that the current task accepted an update that may start
// an action.
func (g *gate) accept(ctx workflow.Context) { g.accepted = workflow.Now(ctx) }

// opens is when the gate opens.
func (g *gate) opens() time.Time { return g.accepted.Add(gateDelay) }

// open reports whether an action may start in the current task.
func (g *gate) open(ctx workflow.Context) bool { return !workflow.Now(ctx).Before(g.opens()) }

// gated reports whether the gate holds back an action that would start
// now: the loop must wake when it opens.
func (j *job) gated(ctx workflow.Context) bool {
	switch {
	case j.gate.open(ctx):
		return false
	case len(j.gate.held) > 0:
		return true
	case j.state == nil || j.deleted:
		return false
	case j.state.Buffered != nil && j.mayStart(), j.backfillDue():
		return true
	}
	next, ok := j.due()
	return ok && !j.startOf(next).After(workflow.Now(ctx))
}
