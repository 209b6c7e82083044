package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

// A job's health (jobs.Status's extensions) changes where its counters
// do, when a run ends (countHealth) or an occurrence is not run
// (countNotRun), and is written with them, in the memo upsert the
// occurrence makes anyway. Its search attributes change only when the
// job's health does (healthAttributes), so that a healthy job's
// occurrence upserts none.

// countHealth applies a run that ended to the job's health: its failure
// streak, its last success and, for a scheduled run, its lateness. A
// streak that reaches disableAfterFailures disables an enabled job.
func (j *job) countHealth(e ended) {
	st := j.status()
	if e.kind == scheduled {
		st.LastLateness = jobs.DurationOf(e.lateness())
	}
	if !e.result.Faulted {
		started := e.started
		st.LastSuccessTime = &started
		j.restartStreak()
		return
	}
	st.ConsecutiveFailures++
	if j.state.FailingSince == nil {
		since := e.started.UTC().Truncate(time.Second)
		j.state.FailingSince = &since
	}
	p := &j.state.Job.Properties
	if n := p.DisableAfterFailures; n > 0 && st.ConsecutiveFailures >= n && p.State == jobs.Enabled {
		j.disable(jobs.FailuresReason(st.ConsecutiveFailures, e.result.Message))
	}
}

// restartStreak ends the job's failure streak: a run succeeded, or the
// job was enabled.
func (j *job) restartStreak() {
	j.status().ConsecutiveFailures = 0
	j.state.FailingSince = nil
}

// countNotRun counts an occurrence recorded as Postponed, for why, and
// keeps the latest such occurrence's nominal time.
func (j *job) countNotRun(nominal time.Time, why notRun) {
	st := j.status()
	if why == missed {
		st.MissedCount++
	} else {
		st.PostponedCount++
	}
	j.notRunAt(nominal)
}

// countSkipped counts the n missed occurrences a catch-up does not list,
// the latest at last (nil in a plan recorded before it was kept).
func (j *job) countSkipped(n int, last *time.Time) {
	j.status().MissedCount += n
	if last != nil {
		j.notRunAt(*last)
	}
}

// notRunAt keeps the nominal time of the latest occurrence not run.
func (j *job) notRunAt(nominal time.Time) {
	if st := j.status(); st.LastMissedTime == nil || nominal.After(*st.LastMissedTime) {
		st.LastMissedTime = &nominal
	}
}

// healthAttributes returns the updates that bring the job's health
// attributes, as current holds them, to its health: RecurFailingSince set
// while it has a failure streak, RecurLateness its last scheduled run's
// lateness bucket, RecurLastMissed its last occurrence not run once that
// is jobs.LastMissedLag past the attribute's. Each changes only with a
// change of the job's health, never at every occurrence.
func (j *job) healthAttributes(current temporal.SearchAttributes) []temporal.SearchAttributeUpdate {
	var updates []temporal.SearchAttributeUpdate
	since, ok := current.GetTime(jobs.AttrFailingSince)
	switch want := j.state.FailingSince; {
	case want == nil && ok:
		updates = append(updates, jobs.AttrFailingSince.ValueUnset())
	case want != nil && (!ok || !since.Equal(*want)):
		updates = append(updates, jobs.AttrFailingSince.ValueSet(*want))
	}
	st := j.status()
	bucket := ""
	if st.LastLateness != nil {
		bucket = jobs.LatenessBucket(time.Duration(*st.LastLateness))
	}
	switch held, ok := current.GetKeyword(jobs.AttrLateness); {
	case bucket == "" && ok:
		updates = append(updates, jobs.AttrLateness.ValueUnset())
	case bucket != "" && held != bucket:
		updates = append(updates, jobs.AttrLateness.ValueSet(bucket))
	}
	if m := st.LastMissedTime; m != nil {
		if held, ok := current.GetTime(jobs.AttrLastMissed); !ok || m.Sub(held) >= jobs.LastMissedLag {
			updates = append(updates, jobs.AttrLastMissed.ValueSet(m.UTC().Truncate(time.Second)))
		}
	}
	return updates
}
