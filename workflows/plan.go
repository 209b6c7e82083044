package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/lifecycle"
	"github.com/recurhq/recur/recurrence"
)

// world answers what the job's machine asks (lifecycle.World) in the
// coroutine that applies an event (ctx): every computation of occurrences
// runs in a SideEffect, so that a later fix to the engine never changes
// the history of a running job, and each behaviour is a version marker.
// One SideEffect plans many occurrences ahead (lifecycle.Ahead), as the
// Temporal scheduler caches its next times: an occurrence costs no marker
// of its own.
type world struct {
	ctx workflow.Context
}

func (w *world) First(def recurrence.Definition, c time.Time) (*time.Time, error) {
	var next *time.Time
	err := sideEffect(w.ctx, def, c, &next, func(r *recurrence.Rule) any { return lifecycle.FirstOf(r, c) })
	return next, err
}

func (w *world) Plan(def recurrence.Definition, c, nominal, now time.Time) (lifecycle.Planned, error) {
	var planned lifecycle.Planned
	err := sideEffect(w.ctx, def, c, &planned, func(r *recurrence.Rule) any { return lifecycle.PlanOf(r, nominal, now) })
	return planned, err
}

// behaviours are the versions that bring each of the machine's
// behaviours.
var behaviours = map[lifecycle.Behaviour]string{
	lifecycle.DisabledHoldsBuffered: versionDisabledBuffered,
	lifecycle.PacedBackfill:         versionBackfillPace,
	lifecycle.FinishedReruns:        versionFinishedReruns,
}

func (w *world) Has(b lifecycle.Behaviour) bool {
	return workflow.GetVersion(w.ctx, behaviours[b], workflow.DefaultVersion, 1) != workflow.DefaultVersion
}

// sideEffect compiles the rule def planned at c and records what ask
// returns; ask gets nil if the rule no longer compiles.
func sideEffect(ctx workflow.Context, def recurrence.Definition, c time.Time, into any, ask func(*recurrence.Rule) any) error {
	return workflow.SideEffect(ctx, func(workflow.Context) any {
		return ask(lifecycle.Compile(def, c))
	}).Get(into)
}
