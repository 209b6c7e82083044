package lifecycle

import (
	"time"

	"github.com/recurhq/recur/recurrence"
)

// World answers what the machine asks while it applies an event: its
// rule's occurrences and which of its behaviours hold. The job workflow
// records each answer in history (a SideEffect, a version marker), so
// that a later fix to the engine never changes a running job's history
// and a history replays as it was recorded; Direct answers at once.
type World interface {
	// First is the nominal time of the first occurrence of the rule def
	// planned at c; nil when it has none.
	First(def recurrence.Definition, c time.Time) (*time.Time, error)
	// Plan lists the occurrences of the rule def planned at c from
	// nominal up to now, and the ones after (PlanOf).
	Plan(def recurrence.Definition, c, nominal, now time.Time) (Planned, error)
	// Has reports whether the workflow runs with behaviour b: one whose
	// history was recorded before b was made keeps the behaviour it had.
	Has(b Behaviour) bool
}

// Behaviour is a change of what the machine does that a running job's
// history may predate.
type Behaviour int

const (
	// DisabledHoldsBuffered: a job disabled while an occurrence is
	// buffered postpones it rather than run it.
	DisabledHoldsBuffered Behaviour = iota
	// PacedBackfill: backfill occurrences start a pace apart.
	PacedBackfill
	// FinishedReruns: a completed or faulted job runs the re-runs asked
	// of it, and keeps them waiting while its collection is disabled.
	FinishedReruns
)

const (
	// planAhead is how many occurrences one plan lists after the next one.
	planAhead = MaxOccurrencesPerRun
	// maxListed bounds the Postponed rows of one catch-up; the rest are
	// counted in the message of the last listed one.
	maxListed = 50
	// maxCatchUpSteps bounds the walk over missed occurrences.
	maxCatchUpSteps = 1_000_000
)

// CatchUp is what fell due between an occurrence and now.
type CatchUp struct {
	// Passed are the occurrences whose time has passed, from the
	// occurrence on, at most maxListed; the last is the most recent. (Due
	// in the plans recorded in histories.)
	Passed  []time.Time `json:"Due"`
	Skipped int         // missed occurrences between Passed's last two, not listed
	// LastSkipped is the latest of those, for the job's lastMissedTime.
	LastSkipped *time.Time `json:",omitempty"`
	Next        *time.Time // the first occurrence after now; nil when none is left
}

// add adds an occurrence that fell due: listed while there is room, else
// counted, the most recent always listed last.
func (p *CatchUp) add(t time.Time) {
	if len(p.Passed) < maxListed {
		p.Passed = append(p.Passed, t)
		return
	}
	p.Skipped++
	skipped := p.Passed[len(p.Passed)-1]
	p.LastSkipped = &skipped
	p.Passed[len(p.Passed)-1] = t
}

// Ahead is the occurrences planned after the job's next one.
type Ahead struct {
	Times []time.Time // in order
	End   bool        // the rule has no occurrence after the last of Times
}

// covers reports whether the plan ahead knows the first occurrence after
// now, or that there is none.
func (a Ahead) covers(now time.Time) bool {
	return a.End || len(a.Times) > 0 && a.Times[len(a.Times)-1].After(now)
}

// Planned is what World.Plan answers: the catch-up, and the occurrences
// after its next one.
type Planned struct {
	Plan  CatchUp
	Ahead Ahead
}

// FirstOf is World.First's answer for a compiled rule (nil when the rule
// no longer compiles: it has no occurrence).
func FirstOf(r *recurrence.Rule, c time.Time) *time.Time {
	if r == nil {
		return nil
	}
	if t, ok := r.First(c); ok {
		return &t
	}
	return nil
}

// PlanOf is World.Plan's answer for a compiled rule (nil when it no
// longer compiles: the schedule ends): the occurrences from nominal up to
// now, the first after now, and up to planAhead after that.
func PlanOf(r *recurrence.Rule, nominal, now time.Time) Planned {
	out := Planned{Plan: CatchUp{Passed: []time.Time{nominal}}, Ahead: Ahead{End: true}}
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
}

// Compile compiles the rule def planned at c; nil when it does not
// compile (validated at every write, a rule that stops compiling, by an
// engine change, ends the schedule rather than the workflow).
func Compile(def recurrence.Definition, c time.Time) *recurrence.Rule {
	rule, err := recurrence.Compile(def, c)
	if err != nil {
		return nil
	}
	return rule
}

// Direct is the World that answers at once, with every behaviour: the
// API's, for a new job's first state, and the model test's.
type Direct struct{}

func (Direct) First(def recurrence.Definition, c time.Time) (*time.Time, error) {
	return FirstOf(Compile(def, c), c), nil
}

func (Direct) Plan(def recurrence.Definition, c, nominal, now time.Time) (Planned, error) {
	return PlanOf(Compile(def, c), nominal, now), nil
}

func (Direct) Has(Behaviour) bool { return true }
