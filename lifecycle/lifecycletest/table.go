package lifecycletest

import (
	"fmt"
	"strings"
	"time"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/lifecycle"
)

// The state table says what each event does in each state, as the
// machine does it: Table runs every cell through the machine, and
// docs/architecture.md holds what it writes (the lifecycle package's test
// checks that it still does). Its job runs hourly from Start, BufferOne,
// its runs lasting three hours; it is defined at 14:30:30 (its next
// occurrence 15:00, three past ones to backfill), each state is made from
// there, and each event comes 30 s after.

// tableConfig is the table's job, but for the columns that say
// otherwise.
var tableConfig = Config{Overlap: jobs.OverlapBufferOne}

type tableState struct {
	name   string
	config Config
	make   func(s *sim)
}

type tableEvent struct {
	name string
	do   func(s *sim)
}

var tableStates = []tableState{
	{"enabled", tableConfig, func(*sim) {}},
	{"enabled, a run in flight", tableConfig, func(s *sim) { s.until(15 * time.Hour) }},
	{"enabled, a run in flight and one buffered", tableConfig, func(s *sim) { s.until(16 * time.Hour) }},
	{"enabled, a backfill running and queued", tableConfig, func(s *sim) { s.backfill(at(12), at(14)) }},
	{"disabled, a run in flight", tableConfig, func(s *sim) { s.until(15 * time.Hour); s.event(Event{Kind: Disable}) }},
	{"disabled, a run in flight and one buffered", tableConfig, func(s *sim) { s.until(16 * time.Hour); s.event(Event{Kind: Disable}) }},
	{"disabled", tableConfig, func(s *sim) { s.event(Event{Kind: Disable}) }},
	{"disabled by its collection", tableConfig, func(s *sim) { s.event(Event{Kind: CollectionDisabled}) }},
	{"disabled by its failures (`disableAfterFailures` 1)", Config{Overlap: jobs.OverlapBufferOne, DisableAfter: 1},
		func(s *sim) { s.until(15 * time.Hour); s.endFirst(true) }},
	{"completed (`count` 1)", Config{Overlap: jobs.OverlapBufferOne, Count: 1}, func(s *sim) { s.until(15 * time.Hour); s.endFirst(false) }},
	{"faulted (`maxConsecutiveFaults` 1)", Config{Overlap: jobs.OverlapBufferOne, MaxFaults: 1}, func(s *sim) { s.until(15 * time.Hour); s.endFirst(true) }},
	{"deleted", tableConfig, func(s *sim) { s.event(Event{Kind: Delete}) }},
}

var tableEvents = []tableEvent{
	{"the next occurrence comes", func(s *sim) { s.until(s.now.Sub(at(0)).Truncate(time.Hour) + time.Hour) }},
	{"a run succeeds", func(s *sim) { s.endFirst(false) }},
	{"a run fails for good", func(s *sim) { s.endFirst(true) }},
	{"PUT, enabled", func(s *sim) { s.event(Event{Kind: Enable}) }},
	{"PUT, disabled", func(s *sim) { s.event(Event{Kind: Disable}) }},
	{"PUT, completed", func(s *sim) { s.event(Event{Kind: Complete}) }},
	{"run now", func(s *sim) { s.event(Event{Kind: RunNow}) }},
	{"backfill", func(s *sim) { s.backfill(at(12), at(14)) }},
	{"re-run of a failure", func(s *sim) { s.rerun(*tableFailure(s)) }},
	{"the collection is disabled", func(s *sim) { s.event(Event{Kind: CollectionDisabled}) }},
	{"the collection is enabled", func(s *sim) { s.event(Event{Kind: CollectionEnabled}) }},
	{"DELETE", func(s *sim) { s.event(Event{Kind: Delete}) }},
	{"its retention passes", func(s *sim) {
		s.until(s.now.Sub(at(0)) + jobs.DefaultFinishedRetention + time.Hour)
	}},
}

// tableFailure is the failure the table runs again: 13:00's, scheduled.
func tableFailure(s *sim) *jobs.Failure {
	nominal := at(13)
	run := lifecycle.Run{ID: jobs.OccurrenceID(Key.JobWorkflowID(), nominal), Nominal: nominal, Kind: lifecycle.Scheduled}
	return Failure(run, *s.def.Properties.Action)
}

// at is hour h of Start's day.
func at(h int) time.Time { return Start.Truncate(24 * time.Hour).Add(time.Duration(h) * time.Hour) }

// until moves the simulation to d after Start's day began, ending the
// runs due by then and stepping at each instant something happens.
func (s *sim) until(d time.Duration) {
	t := at(0).Add(d)
	for {
		next := t
		for _, f := range s.inFlight {
			if f.End.Before(next) {
				next = f.End
			}
		}
		if !s.wake.IsZero() && s.wake.Before(next) {
			next = s.wake
		}
		s.now = next
		s.endRuns()
		s.step()
		if !next.Before(t) {
			return
		}
	}
}

// endFirst ends the first run in flight now, failed for good or not, and
// steps.
func (s *sim) endFirst(fails bool) {
	if len(s.inFlight) == 0 {
		return
	}
	f := &s.inFlight[0]
	if fails {
		f.ended.Result = jobs.RunResult{Status: jobs.ExecutionFailed, Faulted: true, FailedAttempts: 1, Attempts: 1, Message: "500"}
		f.ended.Rows[0].Status = jobs.ExecutionFailed
	}
	f.End = s.now
	s.endRuns()
	s.step()
}

// tableSnapshot is what a cell compares before and after its event.
type tableSnapshot struct {
	state    jobs.State
	deleted  bool
	running  int
	buffered *time.Time
	queued   int
	reruns   int
	starts   int
	rows     int
	revision int
	next     *time.Time
}

func (s *sim) tableSnapshot() tableSnapshot {
	n := tableSnapshot{deleted: s.m.Deleted(), running: s.m.Running(), starts: len(s.out.Starts), rows: len(s.rows)}
	if st := s.m.State(); st != nil {
		n.state, n.buffered, n.queued, n.revision, n.next = st.Job.Properties.State, st.Buffered, len(st.Backfill), st.Revision, st.Next
		n.reruns = len(st.Reruns)
	}
	return n
}

// cell does event to a job in state and says what the machine did.
func cell(state tableState, event tableEvent) string {
	s := newSim(state.config, at(14).Add(30*time.Minute+30*time.Second))
	s.length = func(string) time.Duration { return 3 * time.Hour }
	def := Definition(state.config)
	def.Properties.Recurrence.Frequency = "Hour"
	s.def = def
	s.put(def)
	s.step()
	state.make(s)
	s.step()
	s.now = s.now.Add(30 * time.Second)
	before := s.tableSnapshot()
	if strings.HasPrefix(event.name, "a run") && len(s.inFlight) == 0 {
		return "—" // no run in flight
	}
	if finished := before.state.Final(); strings.HasPrefix(event.name, "its retention") && (!finished || before.deleted) {
		return "—" // only a finished job has a retention
	}
	s.refused = nil
	event.do(s)
	s.step()
	after := s.tableSnapshot()

	var says []string
	if e := s.refused; e != nil {
		return "refused: " + refusalStatus[e.Code]
	}
	if after.deleted && !before.deleted {
		says = append(says, "deleted")
	}
	if after.state != before.state {
		says = append(says, strings.ToLower(string(after.state)))
	} else if after.revision != before.revision {
		says = append(says, "redefined, planned from now")
	}
	for i := before.starts; i < len(s.out.Starts); i++ {
		switch st := s.out.Starts[i]; {
		case s.kinds[i] == lifecycle.RunNow:
			says = append(says, "starts a run now")
		case s.kinds[i] == lifecycle.Backfill:
			says = append(says, "starts a backfill occurrence")
		case s.kinds[i] == lifecycle.Rerun:
			says = append(says, "starts a re-run")
		case before.buffered != nil && st.Nominal().Equal(*before.buffered):
			says = append(says, "starts the buffered occurrence")
		default:
			says = append(says, "starts its occurrence")
		}
	}
	counted := 0
	for _, r := range s.rows[before.rows:] {
		switch {
		case r.Status != jobs.ExecutionPostponed:
			counted++
		case before.buffered != nil && r.ExpectedExecutionTime.Equal(*before.buffered):
			says = append(says, "postpones the buffered occurrence (a row)")
		default:
			says = append(says, "postpones its occurrence (a row)")
		}
	}
	if counted > 0 {
		says = append(says, "counts the run")
	}
	if after.running < before.running && counted == 0 {
		says = append(says, "cancels its runs")
	}
	if after.buffered != nil && before.buffered == nil {
		says = append(says, "buffers its occurrence")
	}
	if after.queued > before.queued {
		says = append(says, fmt.Sprintf("queues %d backfill occurrences", after.queued-before.queued))
	}
	if after.reruns > before.reruns {
		says = append(says, "queues the re-run")
	}
	if len(says) == 0 {
		return "nothing"
	}
	return strings.Join(says, "; ")
}

// refusalStatus is the HTTP status of the machine's refusals.
var refusalStatus = map[string]string{jobs.CodeNotFound: "404", jobs.CodeConflict: "409"}

// Table is the state table in Markdown: the events down, the states
// across.
func Table() string {
	var b strings.Builder
	b.WriteString("| event |")
	for _, st := range tableStates {
		b.WriteString(" " + st.name + " |")
	}
	b.WriteString("\n|---|")
	for range tableStates {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, ev := range tableEvents {
		b.WriteString("| " + ev.name + " |")
		for _, st := range tableStates {
			b.WriteString(" " + cell(st, ev) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}
