package lifecycle

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

var (
	plannerKey = jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	t0         = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
)

func at(d time.Duration) *time.Time {
	t := t0.Add(d)
	return &t
}

// planned returns a job in state st whose workflow started at t0.
func planned(st *jobs.JobState) *Job {
	return New(plannerKey, "origin", t0.Add(time.Minute), st, Direct{})
}

// enabled returns the state of an enabled job whose next occurrence is
// next.
func enabled(next *time.Time) *jobs.JobState {
	return &jobs.JobState{Job: jobs.Job{Properties: jobs.Properties{State: jobs.Enabled}}, Next: next}
}

// finishedIn returns a job finished in state st, which knows r of its
// retention.
func finishedIn(st jobs.State, r retention) *Job {
	j := planned(enabled(nil))
	j.state.Job.Properties.State = st
	j.local.retention = r
	return j
}

// TestThePlannerSaysWhatIsDueAndWhenToWake: the one planner, read
// directly over the job states the loop meets.
func TestThePlannerSaysWhatIsDueAndWhenToWake(t *testing.T) {
	now := t0.Add(10 * time.Minute)
	jittered := enabled(at(20 * time.Minute))
	jittered.Job.Properties.Jitter = "PT5M"
	jitteredStart := jittered.Job.Properties.StartOf(plannerKey.JobWorkflowID(), *jittered.Next)
	for _, tc := range []struct {
		name string
		job  func() *Job
		m    Moment
		want Plan
	}{
		{name: "enabled, its next occurrence to come: wake at its start",
			job:  func() *Job { return planned(enabled(at(20 * time.Minute))) },
			want: Plan{Wake: *at(20 * time.Minute)}},
		{name: "with a jitter: wake at the jittered start",
			job:  func() *Job { return planned(jittered) },
			want: Plan{Wake: jitteredStart}},
		{name: "its next occurrence has passed: due",
			job:  func() *Job { return planned(enabled(at(10 * time.Minute))) },
			want: Plan{TakeNext: true}},
		{name: "over (continue-as-new suggested): the next occurrence is the next run's",
			job:  func() *Job { return planned(enabled(at(5 * time.Minute))) },
			m:    Moment{ContinueAsNew: true},
			want: Plan{}},
		{name: "over (the run fired its share): no wake-up",
			job: func() *Job {
				j := planned(enabled(at(20 * time.Minute)))
				j.local.fired = MaxOccurrencesPerRun
				return j
			},
			want: Plan{}},
		{name: "disabled: no wake-up",
			job: func() *Job {
				st := enabled(at(5 * time.Minute))
				st.Job.Properties.State = jobs.Disabled
				return planned(st)
			},
			want: Plan{}},
		{name: "enabled with nothing left to run: it completes",
			job:  func() *Job { return planned(enabled(nil)) },
			want: Plan{Settle: true}},
		{name: "a buffered occurrence and a free slot: it starts",
			job: func() *Job {
				st := enabled(at(20 * time.Minute))
				st.Buffered = at(-time.Minute)
				return planned(st)
			},
			want: Plan{StartBuffered: true, Wake: *at(20 * time.Minute)}},
		{name: "a buffered occurrence behind a run: it waits",
			job: func() *Job {
				st := enabled(at(20 * time.Minute))
				st.Buffered = at(-time.Minute)
				j := planned(st)
				j.running = 1
				return j
			},
			want: Plan{Wake: *at(20 * time.Minute)}},
		{name: "a backfill queued: it starts, one at a time",
			job: func() *Job {
				st := enabled(at(20 * time.Minute))
				st.Backfill = []time.Time{*at(-time.Hour)}
				return planned(st)
			},
			want: Plan{StartBackfill: true, Wake: *at(20 * time.Minute)}},
		{name: "a backfill queued of a disabled job: it waits",
			job: func() *Job {
				st := enabled(at(20 * time.Minute))
				st.Job.Properties.State = jobs.Disabled
				st.Backfill = []time.Time{*at(-time.Hour)}
				return planned(st)
			},
			want: Plan{}},
		{name: "finished, its retention not asked yet",
			job:  func() *Job { return finishedIn(jobs.Completed, retention{}) },
			want: Plan{Retain: true}},
		{name: "finished, kept: wake when its retention ends",
			job:  func() *Job { return finishedIn(jobs.Faulted, retention{known: true, until: *at(time.Hour)}) },
			want: Plan{Wake: *at(time.Hour)}},
		{name: "finished, its retention passed: it expires",
			job:  func() *Job { return finishedIn(jobs.Completed, retention{known: true, until: now}) },
			want: Plan{Expire: true}},
		{name: "finished and kept for good: no wake-up",
			job:  func() *Job { return finishedIn(jobs.Completed, retention{known: true}) },
			want: Plan{}},
		{name: "deleted and held: wake when the hold ends",
			job: func() *Job {
				j := planned(enabled(at(5 * time.Minute)))
				j.local.deleted, j.local.holdUntil = true, *at(15 * time.Minute)
				return j
			},
			want: Plan{Wake: *at(15 * time.Minute)}},
		{name: "deleted, its hold ended: nothing",
			job: func() *Job {
				j := planned(enabled(at(5 * time.Minute)))
				j.local.deleted, j.local.holdUntil = true, now
				return j
			},
			want: Plan{}},
		{name: "never defined, within its grace: wake when it ends",
			job:  func() *Job { return planned(nil) },
			m:    Moment{Now: t0.Add(30 * time.Second)},
			want: Plan{Wake: t0.Add(time.Minute)}},
		{name: "never defined, past its grace: it gives up its name",
			job:  func() *Job { return planned(nil) },
			m:    Moment{HandlersFinished: true},
			want: Plan{Abandon: true}},
		{name: "never defined, past its grace, a PUT still waiting: its end wakes the loop",
			job:  func() *Job { return planned(nil) },
			want: Plan{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.m.Now.IsZero() {
				tc.m.Now = now
			}
			require.Equal(t, tc.want, tc.job().Plan(tc.m))
		})
	}
}

// TestThePlannersWakeUpIsAlwaysToCome: over many job states and moments,
// the wake-up the planner names is after the moment (what is at or
// before it is due instead), and waking at it the planner names another:
// the loop never sleeps on a deadline that has passed, nor wakes twice
// for one.
func TestThePlannersWakeUpIsAlwaysToCome(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 5))
	minutes := func() time.Duration { return time.Duration(r.IntN(121)-60) * time.Minute }
	maybe := func() *time.Time {
		if r.IntN(4) == 0 {
			return nil
		}
		return at(minutes())
	}
	states := []jobs.State{jobs.Enabled, jobs.Disabled, jobs.Completed, jobs.Faulted}
	for i := range 20_000 {
		j := planned(nil)
		if r.IntN(5) > 0 {
			st := enabled(maybe())
			p := &st.Job.Properties
			p.State = states[r.IntN(len(states))]
			if r.IntN(2) == 0 {
				p.Jitter = "PT10M"
			}
			p.MaxConcurrentRuns = r.IntN(3)
			if r.IntN(3) == 0 {
				st.Buffered = at(minutes())
			}
			for range r.IntN(3) {
				st.Backfill = append(st.Backfill, *at(minutes()))
			}
			j.state = st
		}
		j.running = r.IntN(3)
		j.local.fired = MaxOccurrencesPerRun - r.IntN(3)
		j.local.deleted = r.IntN(4) == 0
		if r.IntN(2) == 0 {
			j.local.holdUntil = *at(minutes())
		}
		j.local.retention = retention{known: r.IntN(3) > 0}
		if j.local.retention.known && r.IntN(3) > 0 {
			j.local.retention.until = *at(minutes())
		}
		m := Moment{Now: t0.Add(minutes()), ContinueAsNew: r.IntN(6) == 0, HandlersFinished: r.IntN(2) == 0}

		p := j.Plan(m)
		if p.Wake.IsZero() {
			continue
		}
		require.True(t, p.Wake.After(m.Now), "case %d: %+v wakes at %s, not after %s", i, p, p.Wake, m.Now)
		m.Now = p.Wake
		require.NotEqual(t, p.Wake, j.Plan(m).Wake, "case %d: the loop woke at %s and plans to wake then again", i, p.Wake)
	}
}
