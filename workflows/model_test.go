package workflows_test

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// The model test drives a job workflow, in Temporal's test environment,
// through a sequence of events decoded from bytes (a fuzz input): writes
// that enable and disable the job, its collection disabled and enabled,
// runs now, backfills, time passing and a DELETE, against runs that take from no
// time to longer than two occurrences. After the sequence it checks what
// must hold whatever the events and their order:
//
//   - no occurrence of the schedule or of a backfill starts while the job
//     or its collection is disabled (a run now does: it is asked for), nor
//     once the job is deleted;
//   - no such occurrence starts while the job's limit of runs are in
//     flight (a run now counts among them, and is not held back);
//   - no occurrence starts twice, but for each backfill that holds it;
//   - the status counts what ran and what was postponed, as the history
//     rows say;
//   - the same sequence gives the same runs, at the same times.
//
// It checks the workflow as it is, in Temporal's test environment with
// its clock skipping: the job's state machine is the workflow's loop and
// planner. A sequence is one fuzz input (FuzzJobModel); go test runs the
// kept ones (modelSeeds), .ci/run a few thousand more, `task fuzz` as many
// as it has time for.

// modelConfig is the job a sequence drives: the first bytes of the input.
type modelConfig struct {
	overlap string // Skip, BufferOne or AllowAll
	limit   int    // maxConcurrentRuns with AllowAll, 0 for none
	count   int    // the recurrence's count, 0 for none
	seed    byte   // picks each run's length
}

// modelEvent is one event of a sequence: what happens, after how long.
type modelEvent struct {
	kind  modelKind
	after time.Duration // since the event before
}

type modelKind byte

const (
	evEnable modelKind = iota
	evDisable
	evCollectionDisabled
	evCollectionEnabled
	evRunNow
	evBackfill
	evDelete // the sequence's last event: the events after it are dropped
	modelKinds
)

func (k modelKind) String() string {
	return [...]string{"enable", "disable", "collection disabled", "collection enabled", "run now", "backfill", "delete"}[k]
}

// decodeModel reads a configuration and at most 24 events from data.
// Events come 7 s to 150 s apart.
func decodeModel(data []byte) (modelConfig, []modelEvent) {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	c := modelConfig{seed: next()}
	switch o := next() % 4; o {
	case 0:
		c.overlap = jobs.OverlapSkip
	case 1:
		c.overlap = jobs.OverlapBufferOne
	case 2:
		c.overlap = jobs.OverlapAllowAll
	default:
		c.overlap, c.limit = jobs.OverlapAllowAll, 2
	}
	if n := next() % 8; n >= 2 {
		c.count = int(n)
	}
	var events []modelEvent
	for len(data) >= 2 && len(events) < 24 {
		kind, gap := modelKind(next()%byte(modelKinds)), next()
		events = append(events, modelEvent{kind: kind, after: time.Duration(7+2*int(gap%72)) * time.Second})
		if kind == evDelete {
			break
		}
	}
	return c, events
}

// encodeModel writes c and events as decodeModel reads them back: the
// seed corpus is written this way, to be read.
func encodeModel(c modelConfig, events ...modelEvent) []byte {
	overlap := map[string]byte{jobs.OverlapSkip: 0, jobs.OverlapBufferOne: 1, jobs.OverlapAllowAll: 2}[c.overlap]
	if c.limit > 0 {
		overlap = 3
	}
	out := []byte{c.seed, overlap, byte(c.count)}
	for _, e := range events {
		out = append(out, byte(e.kind), byte((e.after/time.Second-7)/2))
	}
	return out
}

// modelStart is one run as the target saw it.
type modelStart struct {
	id  string
	at  time.Time
	end time.Time
}

func (s modelStart) runNow() bool { return strings.Contains(s.id, "/run-now") }

// nominal is the occurrence's nominal time, from its ID.
func (s modelStart) nominal() time.Time {
	t, _ := time.Parse(time.RFC3339, s.id[strings.LastIndexByte(s.id, '@')+1:])
	return t
}

// backfillAsked is a backfill of the sequence, and whether the job took it.
type backfillAsked struct {
	req     jobs.BackfillRequest
	refused *error
}

// backfillsOf counts the backfills the job took whose range holds
// nominal: each runs it again, under its ID.
func backfillsOf(asked []backfillAsked, nominal time.Time) int {
	n := 0
	for _, b := range asked {
		if *b.refused == nil && !nominal.Before(b.req.StartTime) && !nominal.After(b.req.EndTime) {
			n++
		}
	}
	return n
}

// modelRun is what one execution of a sequence did.
type modelRun struct {
	starts    []modelStart
	backfills []backfillAsked
	deleted   bool // by the sequence's last event: its status is not read
	status    jobs.Status
	completed int // history rows of a main action that ran to its end
	postponed int // Postponed history rows
	enabledAt func(time.Time) (enabled, tie bool)
}

// runModel runs the sequence against a job workflow and returns what it
// did; the job is deleted once every run has had the time to end.
func runModel(t *testing.T, c modelConfig, events []modelEvent) modelRun {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	length := func(id string) time.Duration {
		f := fnv.New32a()
		f.Write([]byte{c.seed})
		f.Write([]byte(id))
		return time.Duration(f.Sum32()%5) * 40 * time.Second // 0 to 160 s
	}
	h.slow = func(in jobs.HTTPRequestInput) time.Duration { return length(in.OccurrenceID) }

	def := job(now, &recurrence.Recurrence{Frequency: "Minute"})
	def.Properties.OverlapPolicy = c.overlap
	if c.limit > 0 {
		def.Properties.MaxConcurrentRuns = c.limit
	}
	if c.count > 0 {
		def.Properties.Recurrence.Count = intp(c.count)
	}
	h.at(0, func() { h.put(def) })

	// The model's state: whether the job and its collection are enabled,
	// from each event on.
	type change struct {
		at      time.Duration
		enabled bool
	}
	var changes []change
	var backfills []backfillAsked
	jobEnabled, collEnabled := true, true
	revision := 1
	// Events fall half a second into a second, so that no write shares an
	// instant with an occurrence of the every-minute schedule (or a run's
	// end): which of two things at one instant comes first is Temporal's
	// to choose, and the model's to not guess.
	at := 500 * time.Millisecond
	for _, e := range events {
		at += e.after
		refused := new(error)
		switch e.kind {
		case evEnable, evDisable:
			d := def
			d.Properties.State = jobs.Enabled
			if e.kind == evDisable {
				d.Properties.State = jobs.Disabled
			}
			// A PUT asks the collection again: a disabled one disables
			// the job whatever the PUT says.
			jobEnabled = e.kind == evEnable && collEnabled
			h.at(at, func() { updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: d}, refused) })
		case evCollectionDisabled, evCollectionEnabled:
			// Enabling the collection enables its jobs, and disabling it
			// disables them, whatever they were (Azure's enable and
			// disable of a collection): the collection tells every job.
			enabled := e.kind == evCollectionEnabled
			revision++
			jobEnabled, collEnabled = enabled, enabled
			state, terms := jobs.Disabled, jobs.CollectionTerms{Revision: revision, Disabled: !enabled}
			if enabled {
				state = jobs.Enabled
			}
			h.at(at, func() {
				h.collection.terms = terms
				update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{State: state, Terms: &terms})
			})
		case evRunNow:
			h.at(at, func() { updateAnswer(h, jobs.UpdateRunNow, jobs.RunNowRequest{}, refused) })
		case evBackfill:
			from := now.Add(at).Truncate(time.Minute).Add(-5 * time.Minute)
			req := jobs.BackfillRequest{StartTime: from, EndTime: from.Add(3 * time.Minute)}
			h.at(at, func() { updateAnswer(h, jobs.UpdateBackfill, req, refused) })
			backfills = append(backfills, backfillAsked{req, refused})
		case evDelete:
			h.at(at, func() { updateAnswer(h, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{}, refused) })
			jobEnabled = false
		}
		changes = append(changes, change{at, jobEnabled && collEnabled})
	}
	deleted := len(events) > 0 && events[len(events)-1].kind == evDelete
	var view jobs.Job
	settled := at + 10*time.Minute // every run in flight has ended
	if !deleted {
		// Last, the job is disabled, so that its schedule stops and the
		// runs in flight end before the model reads its status.
		at += 7 * time.Second
		stop := def
		stop.Properties.State = jobs.Disabled
		var refused error // a job that completed refuses it, and runs nothing more anyway
		h.at(at, func() { updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: stop}, &refused) })
		changes = append(changes, change{at, false})
		settled = at + 10*time.Minute
		h.at(settled, func() { view = h.view() })
	}
	// A deleted job's workflow ends at its DELETE, its runs cancelled.
	h.run(settled+time.Minute, jobs.JobInput{Key: key})

	run := modelRun{backfills: backfills, deleted: deleted, enabledAt: func(t time.Time) (bool, bool) {
		enabled := true
		for _, ch := range changes {
			switch d := t.Sub(now); {
			case d == ch.at:
				return enabled, true
			case d > ch.at:
				enabled = ch.enabled
			}
		}
		return enabled, false
	}}
	for _, a := range h.attempts {
		if a.action == jobs.MainAction {
			run.starts = append(run.starts, modelStart{id: a.id, at: a.at, end: a.at.Add(length(a.id))})
		}
	}
	if view.Properties.Status != nil {
		run.status = *view.Properties.Status
	}
	for _, r := range h.rows("") {
		switch {
		case r.Status == jobs.ExecutionPostponed:
			run.postponed++
		case r.ActionName == jobs.MainAction:
			run.completed++
		}
	}
	return run
}

// check returns what of the model's invariants run breaks, nil if none.
func (run modelRun) check(c modelConfig) error {
	var errs []error
	limit := 1
	if c.overlap == jobs.OverlapAllowAll {
		limit = c.limit
	}
	started := map[string]int{}
	for i, s := range run.starts {
		started[s.id]++
		if n := started[s.id]; n > 1+backfillsOf(run.backfills, s.nominal()) {
			errs = append(errs, fmt.Errorf("%s started %d times, and backfills hold it %d times", s.id, n, backfillsOf(run.backfills, s.nominal())))
		}
		if s.runNow() {
			continue
		}
		if enabled, tie := run.enabledAt(s.at); !enabled && !tie {
			errs = append(errs, fmt.Errorf("%s started at %s while its job or collection was disabled", s.id, s.at.Format(time.TimeOnly)))
		}
		// The runs started before it (in the order they started: two may
		// start at one instant, the first ending at once) that have not
		// ended.
		inFlight := 0
		for _, o := range run.starts[:i] {
			if o.end.After(s.at) {
				inFlight++
			}
		}
		if limit > 0 && inFlight >= limit {
			errs = append(errs, fmt.Errorf("%s started at %s with %d runs in flight, at most %d allowed", s.id, s.at.Format(time.TimeOnly), inFlight, limit))
		}
	}
	if run.deleted {
		return errors.Join(errs...)
	}
	if got := run.status.ExecutionCount; got != len(run.starts) {
		errs = append(errs, fmt.Errorf("executionCount %d, %d runs started", got, len(run.starts)))
	}
	if got := run.completed; got != len(run.starts) {
		errs = append(errs, fmt.Errorf("%d history rows of runs, %d runs started", got, len(run.starts)))
	}
	if got := run.status.PostponedCount + run.status.MissedCount; got != run.postponed {
		errs = append(errs, fmt.Errorf("postponedCount+missedCount %d, %d Postponed rows", got, run.postponed))
	}
	return errors.Join(errs...)
}

// modelSeeds are sequences worth keeping: each runs in every go test.
var modelSeeds = []struct {
	name   string
	config modelConfig
	events []modelEvent
}{
	// A BufferOne job disabled while its next occurrence waits for a long
	// run: on d38070e the buffered occurrence started once the run ended.
	{"disabled while buffered", modelConfig{overlap: jobs.OverlapBufferOne, seed: 0}, // 12:00 runs 160 s
		[]modelEvent{{evDisable, 65 * time.Second}, {evEnable, 149 * time.Second}}},
	{"collection disabled while buffered", modelConfig{overlap: jobs.OverlapBufferOne, seed: 0},
		[]modelEvent{{evCollectionDisabled, 65 * time.Second}, {evCollectionEnabled, 149 * time.Second}}},
	{"backfill then disable", modelConfig{overlap: jobs.OverlapSkip, seed: 1},
		[]modelEvent{{evBackfill, 7 * time.Second}, {evDisable, 9 * time.Second}, {evEnable, 61 * time.Second}}},
	{"runs now beside a limit", modelConfig{overlap: jobs.OverlapAllowAll, limit: 2, count: 5, seed: 3},
		[]modelEvent{{evRunNow, 7 * time.Second}, {evRunNow, 7 * time.Second}, {evBackfill, 11 * time.Second}, {evCollectionDisabled, 75 * time.Second}, {evRunNow, 7 * time.Second}, {evCollectionEnabled, 99 * time.Second}}},
	{"a PUT while the collection is disabled", modelConfig{overlap: jobs.OverlapBufferOne, count: 4, seed: 4},
		[]modelEvent{{evCollectionDisabled, 31 * time.Second}, {evEnable, 45 * time.Second}, {evBackfill, 7 * time.Second}, {evCollectionEnabled, 91 * time.Second}}},
	{"deleted amid a backfill and a long run", modelConfig{overlap: jobs.OverlapAllowAll, limit: 2, seed: 0},
		[]modelEvent{{evBackfill, 65 * time.Second}, {evRunNow, 7 * time.Second}, {evDelete, 9 * time.Second}}},
}

// TestModelSeeds runs the kept sequences, each encoded and decoded as a
// fuzz input is, and checks that the first one holds the occurrence the
// invariants are there to catch: 12:01, buffered behind 12:00's run when
// the job is disabled, does not start.
func TestModelSeeds(t *testing.T) {
	for _, s := range modelSeeds {
		t.Run(s.name, func(t *testing.T) {
			c, events := decodeModel(encodeModel(s.config, s.events...))
			require.Equal(t, s.config, c, "the seed encodes as decodeModel reads it")
			require.Equal(t, s.events, events)
			run := runModel(t, c, events)
			require.NoError(t, run.check(c))
		})
	}
	run := runModel(t, modelSeeds[0].config, modelSeeds[0].events)
	var ids []string
	for _, s := range run.starts {
		ids = append(ids, s.id)
	}
	require.Contains(t, ids, occurrences("2026-06-01T12:00:00Z")[0])
	require.NotContains(t, ids, occurrences("2026-06-01T12:01:00Z")[0], "the buffered occurrence is the one a disabled job would start")
}

// FuzzJobModel runs generated sequences and checks the model's
// invariants after each, and that the same sequence runs the same way
// twice. go test runs the seeds; `task fuzz` searches further.
func FuzzJobModel(f *testing.F) {
	for _, s := range modelSeeds {
		f.Add(encodeModel(s.config, s.events...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, events := decodeModel(data)
		first := runModel(t, c, events)
		if err := first.check(c); err != nil {
			t.Fatalf("%v\nconfig %+v, events %v", err, c, events)
		}
		again := runModel(t, c, events)
		if !slices.EqualFunc(first.starts, again.starts, func(a, b modelStart) bool { return a.id == b.id && a.at.Equal(b.at) }) {
			t.Fatalf("the same sequence ran differently:\n%v\n%v", first.starts, again.starts)
		}
	})
}

func (e modelEvent) String() string { return fmt.Sprintf("%s after %s", e.kind, e.after) }
