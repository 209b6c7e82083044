package lifecycletest

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/lifecycle"
)

// Outcome is what a sequence did: the runs the target saw and, unless
// the sequence deleted the job, its state and status once every run
// ended, and its history rows.
type Outcome struct {
	Starts  []RunStart
	Deleted bool // by the sequence's last event: its status is not read
	State   jobs.State
	Status  jobs.Status
	Rows    []Row // the history rows, in the order written
	// Failures are the IDs of the failure records, in the order written.
	Failures []string
}

// Row is what the model compares of a history row.
type Row struct {
	Nominal  time.Time
	Started  time.Time // zero for a Postponed row
	Action   string
	Status   jobs.ExecutionStatus
	Backfill bool
	RerunOf  string
	Repeat   int
}

// RowOf is h as the model compares it.
func RowOf(h jobs.HistoryRow) Row {
	r := Row{Nominal: h.ExpectedExecutionTime.UTC(), Action: h.ActionName, Status: h.Status, Backfill: h.Backfill, RerunOf: h.RerunOf, Repeat: h.RepeatCount}
	if h.StartTime != nil {
		r.Started = h.StartTime.UTC()
	}
	return r
}

// Count returns the rows of a main action that ran to its end and the
// Postponed rows.
func (o Outcome) Count() (completed, postponed int) {
	for _, r := range o.Rows {
		switch {
		case r.Status == jobs.ExecutionPostponed:
			postponed++
		case r.Action == jobs.MainAction:
			completed++
		}
	}
	return completed, postponed
}

// sim is the machine with a stand-in for its workflow and its target.
type sim struct {
	c        Config
	def      jobs.Job // the job's definition, as its PUTs send it
	m        *lifecycle.Job
	now      time.Time
	wake     time.Time
	inFlight []flight
	out      Outcome
	rows     []jobs.HistoryRow
	failures []jobs.Failure // the failure records, in the order written
	// What the checks read: the scheduled occurrences accounted for, and
	// whether the job waited for its next occurrence, from each instant
	// on.
	scheduled   []time.Time
	waiting     []waiting
	collEnabled bool
	errs        []error
	// What the state table reads: the kinds of the runs started, and the
	// last message refused.
	kinds   []lifecycle.RunKind
	refused *jobs.Error
	// length is how long a run takes (Config.Length).
	length func(id string) time.Duration
}

type flight struct {
	RunStart
	ended lifecycle.Ended
}

type waiting struct {
	from time.Time
	on   bool
}

// Simulate runs the sequence through the machine alone, as the job
// workflow would (its messages validated as its handlers validate them),
// and returns what it did and what of the invariants it broke along the
// way (Outcome.Check checks the rest).
func Simulate(c Config, events []Event) (Outcome, error) {
	s := newSim(c, Start)
	def := Definition(c)
	s.def = def
	at, stop, settled := Times(events)
	type external struct {
		at time.Duration
		do func()
	}
	todo := []external{{0, func() { s.put(def) }}}
	for i, e := range events {
		todo = append(todo, external{at[i], func() { s.event(e) }})
	}
	s.out.Deleted = Deletes(events)
	if !s.out.Deleted {
		stopped := def
		stopped.Properties.State = jobs.Disabled
		todo = append(todo, external{stop, func() { s.put(stopped) }})
	}
	end := Start.Add(settled)
	for {
		next := end
		if len(todo) > 0 {
			next = Start.Add(todo[0].at)
		}
		for _, f := range s.inFlight {
			if f.End.Before(next) {
				next = f.End
			}
		}
		if !s.wake.IsZero() && s.wake.Before(next) {
			next = s.wake
		}
		if next.After(end) || next.Equal(end) && len(todo) == 0 {
			break
		}
		s.now = next
		// Whatever comes at one instant, in this order; the model's times
		// keep them apart.
		s.endRuns()
		for len(todo) > 0 && Start.Add(todo[0].at).Equal(s.now) {
			todo[0].do()
			todo = todo[1:]
		}
		s.step()
	}
	if !s.out.Deleted {
		view := s.m.View()
		s.out.State, s.out.Status = view.Properties.State, *view.Properties.Status
	}
	for _, r := range s.rows {
		s.out.Rows = append(s.out.Rows, RowOf(r))
	}
	for _, f := range s.failures {
		s.out.Failures = append(s.out.Failures, f.ID)
	}
	s.checkAccounted()
	return s.out, errors.Join(s.errs...)
}

// newSim returns the simulation of a job of c not yet defined, at now.
func newSim(c Config, now time.Time) *sim {
	return &sim{c: c, now: now, collEnabled: true, length: c.Length,
		m: lifecycle.New(Key, "origin", now.Add(time.Minute), nil, lifecycle.Direct{})}
}

func (s *sim) failf(format string, args ...any) {
	s.errs = append(s.errs, fmt.Errorf("%s: "+format, append([]any{s.now.Format("15:04:05.000")}, args...)...))
}

// event applies one of the sequence's events, as the job workflow's
// handlers do.
func (s *sim) event(e Event) {
	switch e.Kind {
	case Enable, Disable, Complete:
		d := s.def
		switch e.Kind {
		case Disable:
			d.Properties.State = jobs.Disabled
		case Complete:
			d.Properties.State = jobs.Completed
		}
		s.put(d)
	case CollectionDisabled, CollectionEnabled:
		s.collEnabled = e.Kind == CollectionEnabled
		st := s.m.State()
		switch {
		case st == nil || s.m.Deleted():
		case !s.collEnabled && st.Job.Properties.State == jobs.Enabled:
			s.apply(lifecycle.Disabled{Reason: jobs.CollectionDisabledReason(Key)})
		case s.collEnabled && st.Job.Properties.State == jobs.Disabled:
			d := st.Job
			d.Properties.State, d.Properties.StateReason = jobs.Enabled, ""
			s.apply(lifecycle.Defined{Job: d, At: s.now.Truncate(time.Second)})
		case s.collEnabled && st.Job.Properties.State.Final():
			s.apply(lifecycle.CollectionEnabled{})
		}
	case RunNow:
		if s.refuse(s.m.IsDefined()) {
			s.apply(lifecycle.RunNowAsked{At: s.now})
		}
	case Backfill:
		s.backfill(BackfillRange(s.now))
	case Rerun:
		if len(s.failures) > 0 {
			s.rerun(s.failures[len(s.failures)-1])
		}
	case Delete:
		if s.refuse(s.m.IsDefined()) {
			s.apply(lifecycle.Deleted{})
		}
	}
}

// refuse notes err, the machine's refusal of a message, and reports
// whether there is none.
func (s *sim) refuse(err *jobs.Error) bool {
	s.refused = err
	return err == nil
}

// put is a plain PUT of def (jobs.ApplyAlways), refused as the job's
// validator refuses it.
func (s *sim) put(def jobs.Job) {
	c := s.now.Truncate(time.Second)
	if !s.refuse(s.m.Exists()) || def.Accept(Key, c) != nil {
		return
	}
	st := s.m.State()
	same := func() bool { return jobs.SameJob(st.Job, def) }
	writable := func() error {
		if !s.refuse(s.m.Redefinable()) || !s.refuse(s.m.Takes(def)) {
			return s.refused
		}
		return nil
	}
	if jobs.ApplyAlways.Refusal(st != nil, same, writable) != nil {
		return
	}
	s.apply(lifecycle.Defined{Job: def, At: c, CollectionDisabled: !s.collEnabled})
}

// backfill asks for a backfill of [from, to], refused as the job refuses
// it.
func (s *sim) backfill(from, to time.Time) {
	if !s.refuse(s.m.IsDefined()) || !s.refuse(s.m.Redefinable()) || !s.refuse(s.m.Backfillable(0, !s.collEnabled)) {
		return
	}
	st := s.m.State()
	times := jobs.BackfillTimes(lifecycle.Compile(st.Job.Properties.Schedule(), st.PlannedFrom), from, to)
	if !s.refuse(s.m.Backfillable(len(times), !s.collEnabled)) {
		return
	}
	s.apply(lifecycle.BackfillQueued{Times: times, Pace: BackfillPace})
}

// rerun asks for failure f to run again, refused as the job refuses it.
func (s *sim) rerun(f jobs.Failure) {
	if !s.refuse(s.m.IsDefined()) || !s.refuse(s.m.Rerunnable(f.ID, !s.collEnabled)) {
		return
	}
	s.apply(lifecycle.RerunAsked{Failure: f})
}

// endRuns tells the machine of the runs that end now.
func (s *sim) endRuns() {
	s.inFlight = slices.DeleteFunc(s.inFlight, func(f flight) bool {
		if !f.End.Equal(s.now) {
			return false
		}
		s.apply(lifecycle.RunEnded{Ended: f.ended})
		return true
	})
}

func (s *sim) step() {
	s.apply(lifecycle.Step{Moment: s.moment()})
	st := s.m.State()
	on := st != nil && !s.m.Deleted() && st.Job.Properties.State == jobs.Enabled && st.Next != nil
	if n := len(s.waiting); n == 0 || s.waiting[n-1].on != on {
		s.waiting = append(s.waiting, waiting{s.now, on})
	}
	if st != nil && !s.m.Deleted() && st.Job.Properties.State == jobs.Enabled && st.Next == nil &&
		(s.c.Count == 0 || st.Runs < s.c.Count) {
		s.failf("enabled with no next occurrence, %d runs of a count of %d", st.Runs, s.c.Count)
	}
}

func (s *sim) moment() lifecycle.Moment {
	return lifecycle.Moment{Now: s.now, HandlersFinished: true, CollectionDisabled: !s.collEnabled}
}

// apply has the machine apply e and carries out its effects as the job
// workflow does, checking each.
func (s *sim) apply(e lifecycle.Event) {
	effects, err := s.m.Apply(e)
	if err != nil {
		s.failf("%T: %v", e, err)
		return
	}
	for _, f := range effects {
		switch f := f.(type) {
		case lifecycle.Start:
			s.start(f.Run, f.Action)
		case lifecycle.CancelRuns:
			for _, r := range s.inFlight {
				if _, err := s.m.Apply(lifecycle.RunEnded{Ended: lifecycle.Ended{Run: r.ended.Run, Cancelled: true}}); err != nil {
					s.failf("cancel: %v", err)
				}
			}
			s.inFlight = nil
		case lifecycle.Record:
			s.rows = append(s.rows, f.Rows...)
			if f.Failure != nil {
				s.failures = append(s.failures, *f.Failure)
			}
			for _, r := range f.Rows {
				if r.Status == jobs.ExecutionPostponed {
					s.account(r.ExpectedExecutionTime, "postponed")
				}
			}
		case lifecycle.AskRetention:
			s.apply(lifecycle.RetentionKnown{Moment: s.moment(), Keep: jobs.DefaultFinishedRetention})
		case lifecycle.Wake:
			if !f.At.IsZero() && !f.At.After(s.now) {
				s.failf("wakes at %s, not after now", f.At.Format("15:04:05.000"))
			}
			s.wake = f.At
		}
	}
}

// start starts a run: the target sees it now, and it ends Length later,
// failed if Fails says.
func (s *sim) start(r lifecycle.Run, action jobs.Action) {
	st := s.m.State()
	if r.Kind != lifecycle.RunNow {
		// A re-run is asked for too, and a final job runs it.
		runs := st.Job.Properties.State == jobs.Enabled || r.Kind == lifecycle.Rerun && st.Job.Properties.State.Final()
		if !runs || s.m.Deleted() || !s.collEnabled {
			s.failf("%s started while its job is %s (deleted %t, collection enabled %t)", r.ID, st.Job.Properties.State, s.m.Deleted(), s.collEnabled)
		}
		if limit := st.Job.Properties.RunLimit(); limit > 0 && len(s.inFlight) >= limit {
			s.failf("%s started with %d runs in flight, at most %d allowed", r.ID, len(s.inFlight), limit)
		}
	}
	if r.Kind == lifecycle.Scheduled {
		s.account(r.Nominal, "started")
	}
	start := RunStart{ID: r.ID, At: s.now, End: s.now.Add(s.length(r.ID))}
	s.kinds = append(s.kinds, r.Kind)
	result := jobs.RunResult{Status: jobs.ExecutionCompleted, Attempts: 1}
	if s.c.Fails(r.ID) {
		result = jobs.RunResult{Status: jobs.ExecutionFailed, Faulted: true, FailedAttempts: 1, Attempts: 1, Message: "500"}
	}
	started := s.now
	row := jobs.HistoryRow{StartTime: &started, ExpectedExecutionTime: r.Nominal, ActionName: jobs.MainAction, Status: result.Status,
		RepeatCount: r.Repeat, Backfill: r.Kind == lifecycle.Backfill, RerunOf: r.RerunOf}
	ended := lifecycle.Ended{Run: r, Result: result, Rows: []jobs.HistoryRow{row}}
	if result.Faulted {
		ended.Failure = Failure(r, action)
	}
	s.out.Starts = append(s.out.Starts, start)
	s.inFlight = append(s.inFlight, flight{start, ended})
}

// Failure is the failure record of run r of action, as the workflow
// writes it (what the model compares of it).
func Failure(r lifecycle.Run, action jobs.Action) *jobs.Failure {
	kind := r.Kind.Name()
	return &jobs.Failure{ID: jobs.FailureID(r.Nominal, kind, r.ID), Nominal: r.Nominal, Kind: kind, OccurrenceID: r.ID,
		SignedAs: r.SignedAs, RerunOf: r.RerunOf, Action: action}
}

// account notes a scheduled occurrence handled: started or postponed,
// once.
func (s *sim) account(nominal time.Time, how string) {
	if slices.ContainsFunc(s.scheduled, nominal.Equal) {
		s.failf("occurrence %s %s, handled before", nominal.Format(time.TimeOnly), how)
	}
	s.scheduled = append(s.scheduled, nominal)
}

// checkAccounted checks that every occurrence of the schedule that came
// while the job waited for it was handled (run, buffered then run or
// postponed, or postponed), and no other: none lost, none twice
// (account).
func (s *sim) checkAccounted() {
	last := s.now
	for i, w := range s.waiting {
		if !w.on {
			continue
		}
		until := last
		if i+1 < len(s.waiting) {
			until = s.waiting[i+1].from
		}
		// The occurrences after w.from: one at w.from was the step's own.
		for t := w.from.Truncate(time.Minute).Add(time.Minute); t.Before(until); t = t.Add(time.Minute) {
			if !slices.ContainsFunc(s.scheduled, t.Equal) {
				if b := s.m.State().Buffered; b == nil || !b.Equal(t) {
					s.failf("occurrence %s came while the job waited for it and was neither run nor postponed", t.Format(time.TimeOnly))
				}
			}
		}
	}
}

// Check returns what of the invariants the outcome breaks: each run
// started at most once, but for each backfill that holds it (none but the
// machine's own can be told apart here: a run now has its own ID), and
// the status counts what ran and what was postponed, as the rows say.
func (o Outcome) Check() error {
	var errs []error
	started := map[string]int{}
	for _, s := range o.Starts {
		started[s.ID]++
		if n := started[s.ID]; n > 1 && s.RunNow() {
			errs = append(errs, fmt.Errorf("%s started %d times", s.ID, n))
		}
	}
	if o.Deleted {
		return errors.Join(errs...)
	}
	if got := o.Status.ExecutionCount; got != len(o.Starts) {
		errs = append(errs, fmt.Errorf("executionCount %d, %d runs started", got, len(o.Starts)))
	}
	completed, postponed := o.Count()
	if completed != len(o.Starts) {
		errs = append(errs, fmt.Errorf("%d history rows of runs, %d runs started", completed, len(o.Starts)))
	}
	if got := o.Status.PostponedCount + o.Status.MissedCount; got != postponed {
		errs = append(errs, fmt.Errorf("postponedCount+missedCount %d, %d Postponed rows", got, postponed))
	}
	if o.Status.FaultedCount > o.Status.ExecutionCount || o.Status.FailureCount != o.Status.FaultedCount {
		errs = append(errs, fmt.Errorf("faultedCount %d and failureCount %d of %d runs of one attempt each", o.Status.FaultedCount, o.Status.FailureCount, o.Status.ExecutionCount))
	}
	return errors.Join(errs...)
}
