package workflows_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// attributeLog records the job's search attribute upserts, each with the
// workflow time it happened at.
type attributeLog struct {
	h       *harness
	upserts []attributeUpsert
}

type attributeUpsert struct {
	at time.Time
	sa temporal.SearchAttributes
}

func recordAttributes(h *harness) *attributeLog {
	l := &attributeLog{h: h}
	h.env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		l.upserts = append(l.upserts, attributeUpsert{at: h.env.Now().UTC(), sa: args.Get(0).(temporal.SearchAttributes)})
	})
	return l
}

// of returns the upserts that name key: each value set, "unset" for a
// removal, with the time of the upsert.
func (l *attributeLog) of(key temporal.SearchAttributeKey) []string {
	var out []string
	for _, u := range l.upserts {
		if slices.Contains(unsetNames(l.h.t, u.sa), key.GetName()) {
			out = append(out, "unset@"+u.at.Format("15:04"))
			continue
		}
		if !u.sa.ContainsKey(key) {
			continue
		}
		switch v := u.sa.GetUntypedValues()[key].(type) {
		case time.Time:
			out = append(out, v.UTC().Format(time.RFC3339)+"@"+u.at.Format("15:04"))
		default:
			out = append(out, v.(string)+"@"+u.at.Format("15:04"))
		}
	}
	return out
}

// unsetNames returns the names of the attributes an upsert removes. The
// SDK keeps them as nil values that every getter of SearchAttributes
// hides, so they are read from its unexported map; a change of that map
// fails here rather than hiding removals.
func unsetNames(t *testing.T, sa temporal.SearchAttributes) []string {
	values := reflect.ValueOf(sa).FieldByName("untypedValue")
	require.Equal(t, reflect.Map, values.Kind(), "the SDK's SearchAttributes keeps its values in untypedValue")
	var out []string
	for it := values.MapRange(); it.Next(); {
		if it.Value().IsNil() {
			name := it.Key().Elem().FieldByName("baseSearchAttributeKey").FieldByName("name")
			require.Equal(t, reflect.String, name.Kind(), "a search attribute key keeps its name in baseSearchAttributeKey.name")
			out = append(out, name.String())
		}
	}
	return out
}

// statusAt records the job's status at each offset of workflow time.
func statusAt(h *harness, offsets ...time.Duration) []jobs.Status {
	out := make([]jobs.Status, len(offsets))
	for i, d := range offsets {
		h.at(d, func() { out[i] = *h.view().Properties.Status })
	}
	return out
}

// TestAFailureStreakIsCountedAndEndedByASuccess: each run whose main
// action fails for good lengthens the streak, a success ends it;
// RecurFailingSince is set by the run that starts a streak and unset by
// the success, never upserted by the runs between.
func TestAFailureStreakIsCountedAndEndedByASuccess(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	attrs := recordAttributes(h)
	outcomes := map[string]bool{"12:00": true, "13:00": false, "14:00": false, "15:00": false, "16:00": true, "17:00": false}
	h.answer = func(in jobs.HTTPRequestInput, n int) (jobs.HTTPResponse, error) {
		if !outcomes[in.Nominal.UTC().Format("15:04")] {
			return failing(in, n)
		}
		return jobs.HTTPResponse{StatusCode: 200, Status: "200 OK"}, nil
	}
	j := job(now, &recurrence.Recurrence{Frequency: "Hour", Count: intp(6)})
	j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "None"}
	h.at(0, func() { h.put(j) })
	st := statusAt(h, 30*time.Minute, 90*time.Minute, 210*time.Minute, 270*time.Minute, 330*time.Minute)
	h.run(7*time.Hour, jobs.JobInput{Key: key})

	streak := make([]int, len(st))
	for i, s := range st {
		streak[i] = s.ConsecutiveFailures
	}
	require.Equal(t, []int{0, 1, 3, 0, 1}, streak, "after 12:00 ok, 13:00 failed, 15:00 the third failure, 16:00 ok, 17:00 failed")
	require.Equal(t, now, *st[2].LastSuccessTime, "12:00 was the last success while failing")
	require.Equal(t, now.Add(4*time.Hour), *st[4].LastSuccessTime)
	require.Equal(t, 4, st[4].FaultedCount, "Azure's faultedCount goes on counting")
	require.Equal(t, []string{"2026-06-01T13:00:00Z@13:00", "unset@16:00", "2026-06-01T17:00:00Z@17:00"},
		attrs.of(jobs.AttrFailingSince))
	require.Empty(t, attrs.of(jobs.AttrLateness), "every run started on time")
	require.Empty(t, attrs.of(jobs.AttrLastMissed))
}

// TestDisableAfterFailuresDisablesTheJobAndEnablingRestartsTheStreak:
// after disableAfterFailures failed runs in a row the job is disabled
// with the last error as its reason and runs no more; a PUT that enables
// it starts the streak anew, and it runs again.
func TestDisableAfterFailuresDisablesTheJobAndEnablingRestartsTheStreak(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	attrs := recordAttributes(h)
	recovered := false
	h.answer = func(in jobs.HTTPRequestInput, n int) (jobs.HTTPResponse, error) {
		if recovered {
			return jobs.HTTPResponse{StatusCode: 200, Status: "200 OK"}, nil
		}
		return failing(in, n)
	}
	j := job(now, &recurrence.Recurrence{Frequency: "Hour"})
	j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "None"}
	j.Properties.DisableAfterFailures = 3
	h.at(0, func() { h.put(j) })
	var disabled jobs.Job
	h.at(5*time.Hour+30*time.Minute, func() { disabled = h.view() })
	var enabled jobs.Job
	h.at(6*time.Hour+10*time.Minute, func() {
		recovered = true
		h.put(j)
	})
	h.at(6*time.Hour+11*time.Minute, func() { enabled = h.view() })
	var ran jobs.Job
	h.at(7*time.Hour+30*time.Minute, func() { ran = h.view() })
	h.run(8*time.Hour, jobs.JobInput{Key: key})

	require.Equal(t, occurrences("2026-06-01T12:00:00Z", "2026-06-01T13:00:00Z", "2026-06-01T14:00:00Z",
		"2026-06-01T19:00:00Z"), h.ids(), "nothing ran while disabled")
	p := disabled.Properties
	require.Equal(t, jobs.Disabled, p.State)
	require.Equal(t, "disabled after 3 consecutive failures: POST https://example.com/: 500 Internal Server Error: boom",
		p.StateReason, "the last error as its history row says it")
	require.Equal(t, h.rows(jobs.ExecutionFailed)[2].Message, strings.TrimPrefix(p.StateReason, "disabled after 3 consecutive failures: "))
	require.Equal(t, 3, p.Status.ConsecutiveFailures)
	require.Equal(t, 3, p.Status.FaultedCount)

	require.Equal(t, jobs.Enabled, enabled.Properties.State)
	require.Empty(t, enabled.Properties.StateReason)
	require.Zero(t, enabled.Properties.Status.ConsecutiveFailures, "enabling restarts the streak")
	require.Equal(t, 3, enabled.Properties.Status.FaultedCount, "Azure's counters stay")
	require.Equal(t, jobs.Enabled, ran.Properties.State)
	require.Equal(t, 4, ran.Properties.Status.ExecutionCount)
	require.Equal(t, now.Add(7*time.Hour), *ran.Properties.Status.LastSuccessTime)

	require.Equal(t, []string{"2026-06-01T12:00:00Z@12:00", "unset@18:10"}, attrs.of(jobs.AttrFailingSince),
		"set by the streak's first run, unset by the enabling")
	require.Equal(t, []string{"Enabled@12:00", "Disabled@14:00", "Enabled@18:10"}, attrs.of(jobs.AttrState))
}

// TestDisableAfterFailuresWithMaxConsecutiveFaults: the two count the
// same failed runs, but enabling the job restarts only its
// consecutiveFailures, so a job disabled after 2 and enabled again faults
// at its next failure when maxConsecutiveFaults is 3; at the run that
// reaches both, maxConsecutiveFaults faults the job, which is final.
func TestDisableAfterFailuresWithMaxConsecutiveFaults(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name              string
		disable, maxFault int
		enableAt          time.Duration
		ids               []string
		state             jobs.State
		reason            string
		streak            int
	}{
		{"the same number", 2, 2, 0, occurrences("2026-06-01T12:00:00Z", "2026-06-01T13:00:00Z"),
			jobs.Faulted, "2 runs in a row failed after their retries (maxConsecutiveFaults)", 2},
		{"disabled first, faulted after the enabling", 2, 3, 150 * time.Minute,
			occurrences("2026-06-01T12:00:00Z", "2026-06-01T13:00:00Z", "2026-06-01T15:00:00Z"),
			jobs.Faulted, "3 runs in a row failed after their retries (maxConsecutiveFaults)", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, now)
			h.answer = failing
			j := job(now, &recurrence.Recurrence{Frequency: "Hour"})
			j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "None"}
			j.Properties.DisableAfterFailures, j.Properties.MaxConsecutiveFaults = tc.disable, tc.maxFault
			h.at(0, func() { h.put(j) })
			if tc.enableAt > 0 {
				h.at(tc.enableAt, func() { h.put(j) })
			}
			var v jobs.Job
			h.at(5*time.Hour, func() { v = h.view() })
			h.run(6*time.Hour, jobs.JobInput{Key: key})
			require.Equal(t, tc.ids, h.ids())
			require.Equal(t, tc.state, v.Properties.State)
			require.Equal(t, tc.reason, v.Properties.StateReason)
			require.Equal(t, tc.streak, v.Properties.Status.ConsecutiveFailures)
		})
	}
}

// TestARunNowCountsInTheStreak: a run now is a run of the main action
// like any other: its failure lengthens the streak and may disable the
// job, its success ends the streak; only scheduled runs have a lateness.
func TestARunNowCountsInTheStreak(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.answer = failing
	j := job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Hour"})
	j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "None"}
	j.Properties.DisableAfterFailures = 2
	h.at(0, func() { h.put(j) })
	h.at(10*time.Minute, func() { update(t, h.env, jobs.UpdateRunNow, jobs.RunNowRequest{}) })
	h.at(20*time.Minute, func() { update(t, h.env, jobs.UpdateRunNow, jobs.RunNowRequest{}) })
	var v jobs.Job
	h.at(30*time.Minute, func() { v = h.view() })
	h.run(3*time.Hour, jobs.JobInput{Key: key})
	require.Len(t, h.ids(), 2, "the job was disabled before its first occurrence")
	require.Equal(t, jobs.Disabled, v.Properties.State)
	require.Equal(t, 2, v.Properties.Status.ConsecutiveFailures)
	require.Nil(t, v.Properties.Status.LastLateness, "no scheduled run")
	for _, r := range h.rows("") {
		require.Nil(t, r.Lateness, "a run now's row has no lateness")
	}
}

// TestLatenessIsTheStartAgainstTheStartAsPlanned: a scheduled run's
// lateness is its start against its nominal time plus its jitter offset,
// on its row and as the status's lastLateness; RecurLateness holds its
// bucket from a minute on and is unset when the job is on time again.
func TestLatenessIsTheStartAgainstTheStartAsPlanned(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	attrs := recordAttributes(h)
	first := jobs.OccurrenceID(key.JobWorkflowID(), now)
	h.slow = func(in jobs.HTTPRequestInput) time.Duration {
		if in.OccurrenceID == first {
			return 150 * time.Second
		}
		return 0
	}
	j := job(now, &recurrence.Recurrence{Frequency: "Minute", Count: intp(4)})
	j.Properties.OverlapPolicy = jobs.OverlapBufferOne
	h.at(0, func() { h.put(j) })
	st := statusAt(h, 151*time.Second, 10*time.Minute)
	h.run(15*time.Minute, jobs.JobInput{Key: key})

	// 12:00 runs 150 s; 12:01, buffered, starts at 12:02:30; 12:02 is
	// postponed (one is buffered already); 12:03 and 12:04 run on time.
	require.Equal(t, occurrences("2026-06-01T12:00:00Z", "2026-06-01T12:01:00Z", "2026-06-01T12:03:00Z", "2026-06-01T12:04:00Z"), h.ids())
	lateness := map[string]string{}
	for _, r := range h.rows(jobs.ExecutionCompleted) {
		require.NotNil(t, r.Lateness, r.ExpectedExecutionTime)
		lateness[r.ExpectedExecutionTime.Format("15:04")] = r.Lateness.String()
	}
	require.Equal(t, map[string]string{"12:00": "PT0S", "12:01": "PT1M30S", "12:03": "PT0S", "12:04": "PT0S"}, lateness)
	require.Equal(t, "PT1M30S", st[0].LastLateness.String(), "12:01 ended last (with 12:00)")
	require.Equal(t, "PT0S", st[1].LastLateness.String())
	require.Equal(t, []string{"PT1M@12:02", "unset@12:03"}, attrs.of(jobs.AttrLateness))
	require.Equal(t, 1, st[1].PostponedCount)
	require.Zero(t, st[1].MissedCount)
	require.Equal(t, now.Add(2*time.Minute), *st[1].LastMissedTime)
	require.Equal(t, []string{"2026-06-01T12:02:00Z@12:02"}, attrs.of(jobs.AttrLastMissed))

	// A jittered job starts each occurrence at its offset: not late.
	h = newHarness(t, now)
	j = job(now, &recurrence.Recurrence{Frequency: "Hour", Count: intp(2)})
	j.Properties.Jitter = "PT30M"
	h.at(0, func() { h.put(j) })
	h.run(3*time.Hour, jobs.JobInput{Key: key})
	rows := h.rows(jobs.ExecutionCompleted)
	require.Len(t, rows, 2)
	for _, r := range rows {
		require.Equal(t, "PT0S", r.Lateness.String(), "%v started %v", r.ExpectedExecutionTime, r.StartTime)
		require.True(t, r.StartTime.After(r.ExpectedExecutionTime) || r.StartTime.Equal(r.ExpectedExecutionTime))
	}
}

// TestPostponedAndMissedAreToldApart: an occurrence due while the
// previous run runs is postponed; one missed while recur was down is
// missed, the ones a catch-up does not list included; lastMissedTime is
// the latest of either.
func TestPostponedAndMissedAreToldApart(t *testing.T) {
	// As TestCatchUpAfterAThreeDayOutageRunsOnlyTheMostRecentOccurrence:
	// the workflow resumes three days after its next occurrence.
	now := time.Date(2026, 6, 4, 12, 30, 0, 0, time.UTC)
	h := newHarness(t, now)
	attrs := recordAttributes(h)
	created := now.Add(-72 * time.Hour)
	j := job(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC), &recurrence.Recurrence{Frequency: "Hour"})
	require.NoError(t, j.Accept(key, created))
	next := created.Add(30 * time.Minute) // 2026-06-01T13:00Z
	j.Properties.Status = &jobs.Status{NextExecutionTime: &next}
	var v jobs.Job
	h.at(time.Minute, func() { v = h.view() })
	h.run(40*time.Minute, jobs.JobInput{Key: key, State: &jobs.JobState{Job: j, PlannedFrom: created, Next: &next}})
	require.Len(t, h.rows(jobs.ExecutionPostponed), 49)
	st := v.Properties.Status
	require.Equal(t, 71, st.MissedCount, "72 fell due, the most recent ran: 49 listed, 22 counted in the last row's message")
	require.Zero(t, st.PostponedCount)
	require.Equal(t, time.Date(2026, 6, 4, 11, 0, 0, 0, time.UTC), *st.LastMissedTime, "the latest not listed")
	require.Equal(t, []string{"2026-06-04T11:00:00Z@12:30"}, attrs.of(jobs.AttrLastMissed))
	require.Equal(t, "PT30M", st.LastLateness.String(), "the most recent ran half an hour late")
	require.Equal(t, []string{"PT10M@12:30", "unset@13:00"}, attrs.of(jobs.AttrLateness), "13:00 ran on time")

	h = newHarness(t, time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	j = slowFirstRun(h, h.env.Now().UTC(), 3)
	h.at(0, func() { h.put(j) })
	h.at(10*time.Minute, func() { v = h.view() })
	h.run(15*time.Minute, jobs.JobInput{Key: key})
	st = v.Properties.Status
	require.Equal(t, 1, st.PostponedCount, "12:01, while 12:00 ran (overlapPolicy Skip)")
	require.Zero(t, st.MissedCount)
	require.Equal(t, time.Date(2026, 6, 1, 12, 1, 0, 0, time.UTC), *st.LastMissedTime)
}

// TestRecurLastMissedMovesOncePerLag: a job that postpones every other
// occurrence counts each, and moves RecurLastMissed only once the
// occurrence it missed is jobs.LastMissedLag past the one the attribute
// holds: a few upserts over hours, not one an occurrence.
func TestRecurLastMissedMovesOncePerLag(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	attrs := recordAttributes(h)
	h.slow = func(jobs.HTTPRequestInput) time.Duration { return 75 * time.Second }
	h.at(0, func() { h.put(job(now, &recurrence.Recurrence{Frequency: "Minute"})) })
	var v jobs.Job
	// Short of 100 occurrences, after which the workflow continues as new.
	h.at(95*time.Minute+30*time.Second, func() { v = h.view() })
	h.run(96*time.Minute, jobs.JobInput{Key: key})
	st := v.Properties.Status
	require.Equal(t, 48, st.PostponedCount, "every odd minute of 96")
	require.Len(t, h.rows(jobs.ExecutionPostponed), 48)
	require.Equal(t, now.Add(95*time.Minute), *st.LastMissedTime)
	require.Equal(t, []string{"2026-06-01T12:01:00Z@12:01", "2026-06-01T13:01:00Z@13:01"}, attrs.of(jobs.AttrLastMissed))
}

// TestContinueAsNewCarriesTheHealth: the streak, its start and the counts
// go on in the next run of the workflow.
func TestContinueAsNewCarriesTheHealth(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.answer = failing
	j := job(now, &recurrence.Recurrence{Frequency: "Minute"})
	j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "None"}
	h.at(0, func() { h.put(j) })
	h.env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key})
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, h.env.GetWorkflowError(), &can)
	var in jobs.JobInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &in))
	require.Equal(t, 100, in.State.Job.Properties.Status.ConsecutiveFailures)
	require.Equal(t, now, *in.State.FailingSince)
}
