// Package lifecycletest is the model of a job that the state machine's
// tests share: sequences of events decoded from bytes (a fuzz input), run
// through the machine alone (Simulate), and checked against what must
// hold whatever the events and their order (Outcome.Check). The job
// workflow's model test runs the same sequences through the real
// workflow, in Temporal's test environment, and checks that it ends where
// the machine ends.
package lifecycletest

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// Key is the model job's.
var Key = jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}

// Start is when a model sequence starts: the first PUT.
var Start = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// Config is the job a sequence drives: the first bytes of the input.
type Config struct {
	Overlap string // Skip, BufferOne or AllowAll
	Limit   int    // maxConcurrentRuns with AllowAll, 0 for none
	Count   int    // the recurrence's count, 0 for none
	Seed    byte   // picks each run's length and outcome
	// Failing says which runs fail (their main action, after its one
	// attempt): none, one in three, or every one.
	Failing byte
	// DisableAfter is disableAfterFailures, MaxFaults
	// maxConsecutiveFaults; 0 for none.
	DisableAfter, MaxFaults int
}

// Event is one event of a sequence: what happens, after how long.
type Event struct {
	Kind  Kind
	After time.Duration // since the event before
}

// Kind is what an event does.
type Kind byte

const (
	Enable             Kind = iota // a PUT of the definition, enabled
	Disable                        // a PUT of the definition, disabled
	CollectionDisabled             // the job's collection is disabled
	CollectionEnabled              // and enabled again
	RunNow                         // POST .../run
	Backfill                       // POST .../backfill of three minutes, five minutes ago
	Delete                         // the sequence's last event: the events after it are dropped
	Complete                       // a PUT of the definition, completed (as an import writes a job that ran elsewhere)
	Rerun                          // POST .../failures/{id}/run of the newest failure, if there is one
	kinds
)

func (k Kind) String() string {
	return [...]string{"enable", "disable", "collection disabled", "collection enabled", "run now", "backfill", "delete", "complete", "rerun"}[k]
}

func (e Event) String() string { return fmt.Sprintf("%s after %s", e.Kind, e.After) }

// MaxEvents bounds a sequence.
const MaxEvents = 24

// Input is a fuzz input that a decoder reads a byte at a time: the model
// tests' sequences (this package's and the admission model's) are both
// decoded from one.
type Input []byte

// Next takes the next byte, 0 past the input's end.
func (in *Input) Next() byte {
	if len(*in) == 0 {
		return 0
	}
	b := (*in)[0]
	*in = (*in)[1:]
	return b
}

// Decode reads a configuration and at most MaxEvents events from data.
// Events come 7 s to 150 s apart.
func Decode(data []byte) (Config, []Event) {
	in := Input(data)
	next := in.Next
	c := Config{Seed: next()}
	switch o := next() % 4; o {
	case 0:
		c.Overlap = jobs.OverlapSkip
	case 1:
		c.Overlap = jobs.OverlapBufferOne
	case 2:
		c.Overlap = jobs.OverlapAllowAll
	default:
		c.Overlap, c.Limit = jobs.OverlapAllowAll, 2
	}
	if n := next() % 8; n >= 2 {
		c.Count = int(n)
	}
	f := next()
	c.Failing = f % 3
	c.DisableAfter = int(f/3) % 3 // 0, 1 or 2
	c.MaxFaults = int(f/9) % 3
	var events []Event
	for len(in) >= 2 && len(events) < MaxEvents {
		kind, gap := Kind(next()%byte(kinds)), next()
		events = append(events, Event{Kind: kind, After: time.Duration(7+2*int(gap%72)) * time.Second})
		if kind == Delete {
			break
		}
	}
	return c, events
}

// Encode writes c and events as Decode reads them back: seed corpora are
// written this way, to be read.
func Encode(c Config, events ...Event) []byte {
	overlap := map[string]byte{jobs.OverlapSkip: 0, jobs.OverlapBufferOne: 1, jobs.OverlapAllowAll: 2}[c.Overlap]
	if c.Limit > 0 {
		overlap = 3
	}
	out := []byte{c.Seed, overlap, byte(c.Count), c.Failing + 3*byte(c.DisableAfter) + 9*byte(c.MaxFaults)}
	for _, e := range events {
		out = append(out, byte(e.Kind), byte((e.After/time.Second-7)/2))
	}
	return out
}

// Definition is the job c describes, an every-minute HTTP job from Start
// whose action makes one attempt.
func Definition(c Config) jobs.Job {
	p := jobs.Properties{
		StartTime:  recurrence.At(Start),
		Recurrence: &recurrence.Recurrence{Frequency: "Minute"},
		Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http",
			Request:     &jobs.HTTPRequest{URI: "https://example.com/", Method: "POST"},
			RetryPolicy: &jobs.RetryPolicy{RetryType: "None"}}},
		OverlapPolicy:        c.Overlap,
		MaxConcurrentRuns:    c.Limit,
		DisableAfterFailures: c.DisableAfter,
		MaxConsecutiveFaults: c.MaxFaults,
	}
	if c.Count > 0 {
		count := c.Count
		p.Recurrence.Count = &count
	}
	return jobs.Job{Properties: p}
}

// Length is how long the run of occurrence id takes: 0 to 160 s, and a
// fraction of a second of its own (1 ms to 999 ms, in microseconds), so
// that no run ends at the instant another run ends, an occurrence comes
// or an event happens: which of two things at one instant comes first is
// Temporal's to choose, and the model's not to guess.
func (c Config) Length(id string) time.Duration {
	h := c.hash(id)
	return time.Duration(h%5)*40*time.Second + time.Duration(1000+(h>>12)%998000)*time.Microsecond
}

// Fails reports whether the run of occurrence id fails.
func (c Config) Fails(id string) bool {
	switch c.Failing {
	case 1:
		return c.hash(id)/5%3 == 0
	case 2:
		return true
	}
	return false
}

func (c Config) hash(id string) uint32 {
	f := fnv.New32a()
	f.Write([]byte{c.Seed})
	f.Write([]byte(id))
	return f.Sum32()
}

// BackfillPace is the pace of the model's backfills: 7 ms past a whole
// second, so that its ends meet no event and no occurrence.
const BackfillPace = 30*time.Second + 7*time.Millisecond

// BackfillRange is the range of a backfill asked at t: three minutes, from
// five minutes before t's minute.
func BackfillRange(t time.Time) (from, to time.Time) {
	from = t.Truncate(time.Minute).Add(-5 * time.Minute)
	return from, from.Add(3 * time.Minute)
}

// Times is when a sequence's events happen, from Start: each half a
// second into a second, so that no event shares an instant with an
// occurrence of the every-minute schedule. Stop is when the job is
// disabled at the end, if the sequence does not delete it, and Settled
// when its status is read, once every run has ended.
func Times(events []Event) (at []time.Duration, stop, settled time.Duration) {
	t := 500 * time.Millisecond
	for _, e := range events {
		t += e.After
		at = append(at, t)
	}
	stop = t + 7*time.Second
	return at, stop, stop + 10*time.Minute
}

// Deletes reports whether the sequence ends with a DELETE.
func Deletes(events []Event) bool {
	return len(events) > 0 && events[len(events)-1].Kind == Delete
}

// RunStart is one run as the target saw it.
type RunStart struct {
	ID  string
	At  time.Time
	End time.Time
}

// RunNow reports whether the run was a run now.
func (s RunStart) RunNow() bool { return strings.Contains(s.ID, "/run-now") }

// Nominal is the run's nominal time, from its ID.
func (s RunStart) Nominal() time.Time {
	t, _ := time.Parse(time.RFC3339, s.ID[strings.LastIndexByte(s.ID, '@')+1:])
	return t
}
