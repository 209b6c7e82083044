package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

// A job's health (jobs.Status's extensions) changes where its counters
// do (lifecycle), and is written with them, in the memo upsert the
// occurrence makes anyway. Its search attributes change only when the
// job's health does (healthAttributes), so that a healthy job's
// occurrence upserts none.

// healthAttributes returns the updates that bring the job's health
// attributes, as current holds them, to its health: RecurFailingSince set
// while it has a failure streak, RecurLateness its last scheduled run's
// lateness bucket, RecurLastMissed its last occurrence not run once that
// is jobs.LastMissedLag past the attribute's. Each changes only with a
// change of the job's health, never at every occurrence.
func (j *job) healthAttributes(current temporal.SearchAttributes) []temporal.SearchAttributeUpdate {
	var updates []temporal.SearchAttributeUpdate
	since, ok := current.GetTime(jobs.AttrFailingSince)
	st := j.state().Job.Properties.Status
	if st == nil {
		st = &jobs.Status{}
	}
	switch want := j.state().FailingSince; {
	case want == nil && ok:
		updates = append(updates, jobs.AttrFailingSince.ValueUnset())
	case want != nil && (!ok || !since.Equal(*want)):
		updates = append(updates, jobs.AttrFailingSince.ValueSet(*want))
	}
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
