package workflows_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	lt "github.com/recurhq/recur/lifecycle/lifecycletest"
)

// The job workflow's model test runs the sequences of the machine's
// model test (lifecycletest: writes, the collection disabled and enabled,
// runs now, backfills, failing runs, a DELETE) through the real workflow,
// in Temporal's test environment with its clock skipping and its target
// standing in, and checks that it ends where the machine alone ends
// (lifecycletest.Simulate): the same runs at the same times, the same
// state, status and history rows. So the invariants the machine's model
// test checks hold of the workflow too, and a workflow that fed the
// machine a wrong event, or carried out an effect wrongly, fails here.
// go test runs the kept sequences; .ci/run a few hundred more, `task
// fuzz` as many as it has time for.

// runModel runs the sequence against a job workflow and returns what it
// did; the job is deleted once every run has had the time to end.
// errNoWrite marks an event that sends no write, so no late copy.
var errNoWrite = errors.New("no write")

func runModel(t *testing.T, c lt.Config, events []lt.Event) lt.Outcome {
	h := newHarness(t, lt.Start)
	h.slow = func(in jobs.HTTPRequestInput) time.Duration { return c.Length(in.OccurrenceID) }
	ok := h.answer
	h.answer = func(in jobs.HTTPRequestInput, n int) (jobs.HTTPResponse, error) {
		if c.Fails(in.OccurrenceID) {
			return failing(in, n)
		}
		return ok(in, n)
	}
	def := lt.Definition(c)
	h.at(0, func() { h.put(def) })
	at, stop, settled := lt.Times(events)
	revision := 1
	// Each write comes first as a copy taken past its deadline, which the
	// job refuses in every state and which changes nothing the outcome
	// shows (jobs.Deadline).
	lates := make([]error, len(events))
	lateAt := func(i int) jobs.Deadline { return jobs.Deadline{NotAfter: lt.Start.Add(at[i] - time.Second)} }
	for i, e := range events {
		var refused error // the machine's model says which are refused
		late := &lates[i]
		switch e.Kind {
		case lt.Enable, lt.Disable, lt.Complete:
			d := def
			switch e.Kind {
			case lt.Disable:
				d.Properties.State = jobs.Disabled
			case lt.Complete:
				d.Properties.State = jobs.Completed
			}
			h.at(at[i], func() {
				updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: d, Deadline: lateAt(i)}, late)
				updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: d}, &refused)
			})
		case lt.CollectionDisabled, lt.CollectionEnabled:
			enabled := e.Kind == lt.CollectionEnabled
			revision++
			state, terms := jobs.Disabled, jobs.CollectionTerms{Revision: revision, Disabled: !enabled}
			if enabled {
				state = jobs.Enabled
			}
			*late = errNoWrite // the collection's word, not a write with a deadline
			h.at(at[i], func() {
				h.collection.terms = terms
				update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{State: state, Terms: &terms})
			})
		case lt.RunNow:
			h.at(at[i], func() {
				updateAnswer(h, jobs.UpdateRunNow, jobs.RunNowRequest{Deadline: lateAt(i)}, late)
				updateAnswer(h, jobs.UpdateRunNow, jobs.RunNowRequest{}, &refused)
			})
		case lt.Backfill:
			from, to := lt.BackfillRange(lt.Start.Add(at[i]))
			req := jobs.BackfillRequest{StartTime: from, EndTime: to, Pace: lt.BackfillPace}
			lateReq := req
			lateReq.Deadline = lateAt(i)
			h.at(at[i], func() {
				updateAnswer(h, jobs.UpdateBackfill, lateReq, late)
				updateAnswer(h, jobs.UpdateBackfill, req, &refused)
			})
		case lt.Rerun:
			h.at(at[i], func() {
				if fs := h.failures(); len(fs) > 0 {
					updateAnswer(h, jobs.UpdateRerun, jobs.RerunRequest{Failure: fs[len(fs)-1], Deadline: lateAt(i)}, late)
					updateAnswer(h, jobs.UpdateRerun, jobs.RerunRequest{Failure: fs[len(fs)-1]}, &refused)
				} else {
					*late = errNoWrite
				}
			})
		case lt.Delete:
			h.at(at[i], func() {
				updateAnswer(h, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{Deadline: lateAt(i)}, late)
				updateAnswer(h, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{}, &refused)
			})
		default:
			*late = errNoWrite
		}
	}
	out := lt.Outcome{Deleted: lt.Deletes(events)}
	var view jobs.Job
	if !out.Deleted {
		// Last, the job is disabled, so that its schedule stops and the
		// runs in flight end before the model reads its status.
		stopped := def
		stopped.Properties.State = jobs.Disabled
		var refused error // a job that ended refuses it, and runs nothing more anyway
		h.at(stop, func() { updateAnswer(h, jobs.UpdatePutJob, jobs.PutJobRequest{Job: stopped}, &refused) })
		h.at(settled, func() { view = h.view() })
	}
	// A deleted job's workflow ends at its DELETE, its runs cancelled.
	h.run(settled+time.Minute, jobs.JobInput{Key: key})
	for i, err := range lates {
		if errors.Is(err, errNoWrite) {
			continue
		}
		if slices.ContainsFunc(events[:i], func(e lt.Event) bool { return e.Kind == lt.Delete }) {
			break // the workflow has ended: nothing takes the writes after a DELETE
		}
		e, ok := jobs.FromApplicationError(err)
		require.True(t, ok && e.Code == jobs.CodeNotTaken, "%s taken past its deadline: %v", events[i], err)
	}

	for _, a := range h.attempts {
		if a.action == jobs.MainAction {
			out.Starts = append(out.Starts, lt.RunStart{ID: a.id, At: a.at, End: a.at.Add(c.Length(a.id))})
		}
	}
	if !out.Deleted {
		out.State, out.Status = view.Properties.State, *view.Properties.Status
	}
	for _, r := range h.rows("") {
		out.Rows = append(out.Rows, lt.RowOf(r))
	}
	for _, f := range h.failures() {
		out.Failures = append(out.Failures, f.ID)
	}
	return out
}

// endsWhereTheMachineEnds returns how the workflow's outcome differs from
// the machine's alone, nil if it does not.
func endsWhereTheMachineEnds(c lt.Config, events []lt.Event, got lt.Outcome) error {
	want, err := lt.Simulate(c, events)
	if err != nil {
		return fmt.Errorf("the machine alone breaks the model's invariants: %w", err)
	}
	if err := got.Check(); err != nil {
		return err
	}
	// The target's stand-in gives an attempt its delay from a listener
	// that runs before the attempt asks its mock for it (harness.slow):
	// of two attempts that start at one instant, each may take the
	// other's. Such a run checks the invariants only.
	for i, s := range got.Starts {
		if slices.ContainsFunc(got.Starts[i+1:], func(o lt.RunStart) bool { return o.At.Equal(s.At) }) {
			return nil
		}
	}
	if closeCall(want.Starts, events) {
		return nil
	}
	// The rows say when each run started, as the workflow's clock read;
	// the target's stand-in reads the test environment's, which may have
	// moved on by then: the runs are compared by their IDs.
	same := func(a, b lt.RunStart) bool { return a.ID == b.ID }
	if !slices.EqualFunc(got.Starts, want.Starts, same) {
		return fmt.Errorf("the workflow ran\n%s\nthe machine alone\n%s", starts(got.Starts), starts(want.Starts))
	}
	got.Starts, want.Starts = nil, nil
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		return fmt.Errorf("the workflow ended\n%+v\nthe machine alone\n%+v", got, want)
	}
	return nil
}

// wallSlop bounds how late in its clock the test environment may deliver
// a run's start or end to the workflow: while an activity runs, it fires
// its next timer (an event of the sequence) once that much wall time has
// passed (autoFireNextTimer), and on a machine starved of CPU the
// activity's goroutine may not have reported by then.
const wallSlop = 500 * time.Millisecond

// closeCall reports whether an event of the sequence comes less than
// wallSlop after a run of the machine's plan starts or ends: the workflow
// may meet the event first. Such a run checks the invariants only.
func closeCall(runs []lt.RunStart, events []lt.Event) bool {
	at, stop, _ := lt.Times(events)
	for _, d := range append(at, stop) {
		e := lt.Start.Add(d)
		if slices.ContainsFunc(runs, func(r lt.RunStart) bool {
			return !e.Before(r.At) && e.Sub(r.At) < wallSlop || !e.Before(r.End) && e.Sub(r.End) < wallSlop
		}) {
			return true
		}
	}
	return false
}

func starts(ss []lt.RunStart) string {
	out := ""
	for _, s := range ss {
		out += fmt.Sprintf("  %s at %s\n", s.ID, s.At.Format("15:04:05.000"))
	}
	return out
}

// TestModelSeeds runs the machine's kept sequences through the workflow.
func TestModelSeeds(t *testing.T) {
	for _, data := range lt.EncodedSeeds() {
		c, events := lt.Decode(data)
		t.Run(fmt.Sprint(events), func(t *testing.T) {
			require.NoError(t, endsWhereTheMachineEnds(c, events, runModel(t, c, events)))
		})
	}
}

// FuzzJobModel runs generated sequences through the workflow and checks
// that it ends where the machine ends, and that the same sequence runs
// the same way twice.
func FuzzJobModel(f *testing.F) {
	for _, data := range lt.EncodedSeeds() {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, events := lt.Decode(data)
		first := runModel(t, c, events)
		if err := endsWhereTheMachineEnds(c, events, first); err != nil {
			t.Fatalf("%v\nconfig %+v, events %v", err, c, events)
		}
	})
}
