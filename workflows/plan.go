package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/recurrence"
)

// Every computation of occurrences runs in a SideEffect: a later fix to the
// engine never changes the history of a running job. One SideEffect plans
// many occurrences ahead (j.local.ahead), as the Temporal scheduler caches its
// next times: an occurrence costs no marker of its own.

const (
	// planAhead is how many occurrences one SideEffect plans after the
	// next one.
	planAhead = maxOccurrencesPerRun
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
	// LastSkipped is the latest of those, for the job's lastMissedTime.
	LastSkipped *time.Time `json:",omitempty"`
	Next        *time.Time // the first occurrence after now; nil when none is left
}

// add adds an occurrence that fell due: listed while there is room, else
// counted, the most recent always listed last.
func (p *catchUpPlan) add(t time.Time) {
	if len(p.Due) < maxListed {
		p.Due = append(p.Due, t)
		return
	}
	p.Skipped++
	skipped := p.Due[len(p.Due)-1]
	p.LastSkipped = &skipped
	p.Due[len(p.Due)-1] = t
}

// ahead is the occurrences planned after the job's next one.
type ahead struct {
	Times []time.Time // in order
	End   bool        // the rule has no occurrence after the last of Times
}

// covers reports whether the plan ahead knows the first occurrence after
// now, or that there is none.
func (a ahead) covers(now time.Time) bool {
	return a.End || len(a.Times) > 0 && a.Times[len(a.Times)-1].After(now)
}

// firstNominal returns the nominal time of the job's first run when
// planned at c.
func (j *job) firstNominal(ctx workflow.Context, c time.Time) (*time.Time, error) {
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

// catchUp lists the occurrences from nominal (the job's next) up to now
// and the next one: from the plan ahead when it covers now, else from a
// new plan that looks ahead again.
func (j *job) catchUp(ctx workflow.Context, nominal, now time.Time) (catchUpPlan, error) {
	if j.local.ahead.covers(now) {
		p := catchUpPlan{Due: []time.Time{nominal}}
		times := j.local.ahead.Times
		for len(times) > 0 && !times[0].After(now) {
			p.add(times[0])
			times = times[1:]
		}
		if len(times) > 0 {
			next := times[0]
			p.Next, times = &next, times[1:]
		}
		j.local.ahead.Times = times
		return p, nil
	}
	var planned plannedAhead
	err := j.sideEffect(ctx, &planned, func(r *recurrence.Rule) any {
		out := plannedAhead{Plan: catchUpPlan{Due: []time.Time{nominal}}, Ahead: ahead{End: true}}
		if r == nil {
			return out
		}
		t, ok := r.Next(nominal)
		for steps := 0; ok && !t.After(now) && steps < maxCatchUpSteps; steps++ {
			out.Plan.add(t)
			t, ok = r.Next(t)
		}
		if !ok {
			return out
		}
		next := t
		out.Plan.Next = &next
		for len(out.Ahead.Times) < planAhead {
			if t, ok = r.Next(t); !ok {
				return out
			}
			out.Ahead.Times = append(out.Ahead.Times, t)
		}
		out.Ahead.End = false
		return out
	})
	if err != nil {
		return catchUpPlan{}, err
	}
	j.local.ahead = planned.Ahead
	return planned.Plan, nil
}

// plannedAhead is what one SideEffect of catchUp records.
type plannedAhead struct {
	Plan  catchUpPlan
	Ahead ahead
}

// sideEffect compiles the job's rule and records what ask returns; ask
// gets nil if the rule no longer compiles.
func (j *job) sideEffect(ctx workflow.Context, into any, ask func(*recurrence.Rule) any) error {
	def := j.state.Job.Properties.Schedule()
	c := j.state.Created
	return workflow.SideEffect(ctx, func(workflow.Context) any {
		rule, err := recurrence.Compile(def, c)
		if err != nil {
			// Validated at every PUT; a rule that stops compiling (an
			// engine change) ends the schedule rather than the workflow.
			rule = nil
		}
		return ask(rule)
	}).Get(into)
}
