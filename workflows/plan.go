package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/recurrence"
)

// Every computation of occurrences runs in a SideEffect: a later fix to the
// engine never changes the history of a running job.

const (
	// maxListed bounds the Postponed rows of one catch-up; the rest are
	// counted in the message of the last listed one.
	maxListed = 50
	// maxCatchUpSteps bounds the walk over missed occurrences.
	maxCatchUpSteps = 1_000_000
)

// catchUpPlan is what fell due between an occurrence and now.
type catchUpPlan struct {
	Due     []time.Time // from the occurrence on, at most maxListed; the last is the most recent
	Skipped int         // missed occurrences between Due's last two, not listed
	Next    *time.Time  // the first occurrence after now; nil when none is left
}

// first returns the job's first run when planned at c.
func (j *job) first(ctx workflow.Context, c time.Time) (*time.Time, error) {
	var next *time.Time
	err := j.sideEffect(ctx, &next, func(r *recurrence.Rule) any {
		if r == nil {
			return (*time.Time)(nil)
		}
		if t, ok := r.First(c); ok {
			return &t
		}
		return (*time.Time)(nil)
	})
	return next, err
}

// catchUp lists the occurrences from nominal up to now and the next one.
func (j *job) catchUp(ctx workflow.Context, nominal, now time.Time) (catchUpPlan, error) {
	var plan catchUpPlan
	err := j.sideEffect(ctx, &plan, func(r *recurrence.Rule) any {
		p := catchUpPlan{Due: []time.Time{nominal}}
		if r == nil {
			return p
		}
		t, ok := r.Next(nominal)
		for steps := 0; ok && !t.After(now) && steps < maxCatchUpSteps; steps++ {
			if len(p.Due) < maxListed {
				p.Due = append(p.Due, t)
			} else {
				p.Skipped++
				p.Due[len(p.Due)-1] = t
			}
			t, ok = r.Next(t)
		}
		if ok {
			p.Next = &t
		}
		return p
	})
	return plan, err
}

// sideEffect compiles the job's rule and records what ask returns; ask
// gets nil if the rule no longer compiles.
func (j *job) sideEffect(ctx workflow.Context, into any, ask func(*recurrence.Rule) any) error {
	def := j.state.Job.Properties.Schedule()
	created := j.state.Created
	return workflow.SideEffect(ctx, func(workflow.Context) any {
		rule, err := recurrence.Compile(def, created)
		if err != nil {
			// Validated at every PUT; a rule that stops compiling (an
			// engine change) ends the schedule rather than the workflow.
			rule = nil
		}
		return ask(rule)
	}).Get(into)
}
