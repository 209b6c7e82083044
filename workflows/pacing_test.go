package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// pacingNow is when the pacing tests start: half past, an hour before the
// next run of their hourly jobs, which begin 60 days back.
var pacingNow = time.Date(2026, 6, 1, 12, 30, 0, 0, time.UTC)

// pacedJob is an hourly job whose range of past hours holds far more
// than a backfill takes.
func pacedJob() jobs.Job {
	return job(pacingNow.Add(-60*24*time.Hour), &recurrence.Recurrence{Frequency: "Hour"})
}

// hoursBack is a backfill of the n hours up to an hour before pacingNow,
// at pace.
func hoursBack(n int, pace time.Duration) jobs.BackfillRequest {
	end := pacingNow.Add(-time.Hour)
	return jobs.BackfillRequest{StartTime: end.Add(-time.Duration(n-1) * time.Hour), EndTime: end, Pace: pace}
}

// requirePaced fails unless consecutive starts are at least pace apart.
func requirePaced(t *testing.T, attempts []attempt, pace time.Duration) {
	t.Helper()
	for i := 1; i < len(attempts); i++ {
		require.GreaterOrEqual(t, attempts[i].at.Sub(attempts[i-1].at), pace, "backfill occurrences %d and %d", i-1, i)
	}
}

// TestABackfillRunsAtItsPace: a backfill of 1000 occurrences starts them
// one pace apart, in order, and its answer says when the last will start;
// a second backfill queued behind it is paced with it, and its answer
// counts what the job still holds.
func TestABackfillRunsAtItsPace(t *testing.T) {
	const pace = 2 * time.Second
	h := newHarness(t, pacingNow)
	h.at(0, func() { h.put(pacedJob()) })
	first := hoursBack(jobs.MaxBackfill, pace)
	more := jobs.BackfillRequest{StartTime: first.StartTime.Add(-3 * time.Hour), EndTime: first.StartTime.Add(-time.Hour), Pace: pace}
	var res, moreRes jobs.BackfillResult
	var err, moreErr error
	h.at(time.Second, func() { h.backfillAt(first, &res, &err, nil) })
	// By then five have started, at 1, 3, 5, 7 and 9 s; the sixth may at 11 s.
	h.at(10*time.Second, func() { h.backfillAt(more, &moreRes, &moreErr, nil) })
	h.run(2*time.Hour, jobs.JobInput{Key: key})

	require.NoError(t, err)
	require.NoError(t, moreErr)
	require.Equal(t, jobs.MaxBackfill, res.Queued)
	require.Equal(t, 3, moreRes.Queued)
	require.NotNil(t, res.LastRunTime)
	require.Equal(t, pacingNow.Add(time.Second+(jobs.MaxBackfill-1)*pace), *res.LastRunTime)
	require.NotNil(t, moreRes.LastRunTime)
	require.Equal(t, pacingNow.Add(11*time.Second+(jobs.MaxBackfill-5+3-1)*pace), *moreRes.LastRunTime)

	backfilled := h.backfilled(pacingNow)
	require.Len(t, backfilled, jobs.MaxBackfill+3)
	for i, a := range backfilled[:jobs.MaxBackfill] {
		require.Equal(t, jobs.OccurrenceID(key.JobWorkflowID(), first.StartTime.Add(time.Duration(i)*time.Hour)), a.id)
	}
	requirePaced(t, backfilled, pace)
	require.Equal(t, *moreRes.LastRunTime, backfilled[len(backfilled)-1].at, "nothing else took the slot: the last started when the answer said")
}

// TestABackfillWithoutAPaceHasTheDefault: a request without a pace (an
// API that sends none) is paced at jobs.DefaultBackfillPace.
func TestABackfillWithoutAPaceHasTheDefault(t *testing.T) {
	h := newHarness(t, pacingNow)
	h.at(0, func() { h.put(pacedJob()) })
	var res jobs.BackfillResult
	var err error
	h.at(time.Second, func() { h.backfillAt(hoursBack(5, 0), &res, &err, nil) })
	h.run(time.Hour, jobs.JobInput{Key: key})
	require.NoError(t, err)
	backfilled := h.backfilled(pacingNow)
	require.Len(t, backfilled, 5)
	requirePaced(t, backfilled, jobs.DefaultBackfillPace)
	require.NotNil(t, res.LastRunTime)
	require.Equal(t, pacingNow.Add(time.Second+4*jobs.DefaultBackfillPace), *res.LastRunTime)
}

// TestAPacedBackfillKeepsTheJobsRunLimit: paced backfill occurrences that
// run longer than the pace still run no more at once than the job's
// overlap policy or maxConcurrentRuns let runs run, its schedule's
// included, and never closer than the pace.
func TestAPacedBackfillKeepsTheJobsRunLimit(t *testing.T) {
	const runFor = 5 * time.Second
	for _, tc := range []struct {
		name  string
		limit int
		set   func(*jobs.Properties)
	}{
		{"maxConcurrentRuns 3", 3, func(p *jobs.Properties) { p.MaxConcurrentRuns = 3 }},
		{"overlap Skip", 1, func(p *jobs.Properties) { p.OverlapPolicy = jobs.OverlapSkip }},
		{"overlap BufferOne", 1, func(p *jobs.Properties) { p.OverlapPolicy = jobs.OverlapBufferOne }},
		{"overlap AllowAll", 1, func(p *jobs.Properties) { p.OverlapPolicy = jobs.OverlapAllowAll }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, pacingNow)
			h.slow = func(jobs.HTTPRequestInput) time.Duration { return runFor }
			j := pacedJob()
			tc.set(&j.Properties)
			h.at(0, func() { h.put(j) })
			var res jobs.BackfillResult
			var err error
			h.at(time.Second, func() { h.backfillAt(hoursBack(30, time.Second), &res, &err, nil) })
			h.run(2*time.Hour, jobs.JobInput{Key: key})
			require.NoError(t, err)
			backfilled := h.backfilled(pacingNow)
			require.Len(t, backfilled, 30)
			requirePaced(t, backfilled, time.Second)
			h.mu.Lock()
			all := h.attempts
			h.mu.Unlock()
			for _, a := range all {
				running := 0
				for _, b := range all {
					if !b.at.After(a.at) && b.at.Add(runFor).After(a.at) {
						running++
					}
				}
				require.LessOrEqual(t, running, tc.limit, "runs at once when %s started at %v", a.id, a.at)
			}
		})
	}
}

// TestDisablingStopsAPacedBackfill: the occurrences a paced backfill
// holds queued, waiting out their pace, never start once the job is
// disabled, by a PUT or by its collection, or deleted. A job enabled
// again runs the rest, at the pace.
func TestDisablingStopsAPacedBackfill(t *testing.T) {
	const stop = 10*time.Second + 500*time.Millisecond // between the tenth start and the eleventh
	disabled := pacedJob()
	disabled.Properties.State = jobs.Disabled
	for _, tc := range []struct {
		name   string
		stop   func(h *harness)
		enable func(h *harness) // nil: the job stays disabled
	}{
		{"job", func(h *harness) { h.put(disabled) }, func(h *harness) { h.put(pacedJob()) }},
		{"collection", func(h *harness) {
			update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{State: jobs.Disabled,
				Terms: &jobs.CollectionTerms{Revision: 2, Disabled: true}})
		}, func(h *harness) {
			update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{State: jobs.Enabled,
				Terms: &jobs.CollectionTerms{Revision: 3}})
		}},
		{"deleted", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, pacingNow)
			h.at(0, func() { h.put(pacedJob()) })
			var res jobs.BackfillResult
			var err error
			h.at(time.Second, func() { h.backfillAt(hoursBack(jobs.MaxBackfill, 0), &res, &err, nil) })
			end := stop // the harness deletes the job then
			var whileStopped []attempt
			if tc.stop != nil {
				h.at(stop, func() { tc.stop(h) })
				h.at(time.Hour, func() { whileStopped = h.backfilled(pacingNow); tc.enable(h) })
				end = 2 * time.Hour
			}
			h.run(end, jobs.JobInput{Key: key})
			require.NoError(t, err)
			require.Equal(t, jobs.MaxBackfill, res.Queued)
			if tc.stop == nil {
				require.Len(t, h.backfilled(pacingNow), 10, "started at 1 to 10 s; the deleted job ended")
				return
			}
			require.Len(t, whileStopped, 10, "started at 1 to 10 s, none after the disable")
			for _, a := range whileStopped {
				require.True(t, a.at.Before(pacingNow.Add(stop)), "%s started at %v", a.id, a.at)
			}
			after := h.backfilled(pacingNow)
			require.Len(t, after, jobs.MaxBackfill, "the rest ran once enabled")
			require.False(t, after[10].at.Before(pacingNow.Add(time.Hour)), "the eleventh waited for the enable: %v", after[10].at)
			requirePaced(t, after, jobs.DefaultBackfillPace)
		})
	}
}

// TestThePaceOutlastsAContinueAsNew: a run that continues as new carries
// the backfill's queue, pace and next start to the next run, which keeps
// to them.
func TestThePaceOutlastsAContinueAsNew(t *testing.T) {
	h := newHarness(t, pacingNow)
	def := pacedJob()
	created := pacingNow.Add(-time.Hour)
	require.NoError(t, def.Accept(key, created))
	next := pacingNow.Add(time.Hour)
	notBefore := pacingNow.Add(30 * time.Second)
	queued := hoursBack(3, 0)
	state := &jobs.JobState{Job: def, PlannedFrom: created, Next: &next, BackfillPace: 10 * time.Second, BackfillNotBefore: &notBefore,
		Backfill: []time.Time{queued.StartTime, queued.StartTime.Add(time.Hour), queued.EndTime}}
	h.run(time.Hour-time.Minute, jobs.JobInput{Key: key, State: state})
	var starts []time.Duration
	for _, a := range h.backfilled(pacingNow) {
		starts = append(starts, a.at.Sub(pacingNow))
	}
	require.Equal(t, []time.Duration{30 * time.Second, 40 * time.Second, 50 * time.Second}, starts)
}

// TestABackfillPastWhatTheAPICountedIsRefused: a backfill queues no more
// than its budget, the occurrences the API counted and charged for; a
// job whose range holds more (redefined meanwhile) refuses it, and
// nothing of it runs.
func TestABackfillPastWhatTheAPICountedIsRefused(t *testing.T) {
	h := newHarness(t, pacingNow)
	h.at(0, func() { h.put(pacedJob()) })
	over, exact := hoursBack(3, 0), hoursBack(3, 0)
	two, three := 2, 3
	over.Budget, exact.Budget = &two, &three
	var overRes, exactRes jobs.BackfillResult
	var overErr, exactErr error
	h.at(time.Second, func() { h.backfillAt(over, &overRes, &overErr, nil) })
	h.at(time.Minute, func() { h.backfillAt(exact, &exactRes, &exactErr, nil) })
	h.run(time.Hour, jobs.JobInput{Key: key})
	requireConflict(t, overErr, "job j was redefined while its backfill was counted")
	require.NoError(t, exactErr)
	require.Equal(t, 3, exactRes.Queued)
	backfilled := h.backfilled(pacingNow)
	require.Len(t, backfilled, 3, "the refused backfill queued nothing")
	require.False(t, backfilled[0].at.Before(pacingNow.Add(time.Minute)))
}
