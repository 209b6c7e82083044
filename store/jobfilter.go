package store

import (
	"strings"
	"time"

	"github.com/recurhq/recur/jobs"
)

// A job list's filter: a state, and conditions on a job's health
// (docs/api.md, "Health"), which the API reads from $filter. The search
// attributes that hold a job's health coarsely narrow the visibility
// query (Conditions); the exact values of the memo decide (Keep), so a
// page may read more jobs than it shows.

// unhealthyWindow is how recent a missed occurrence makes a job
// unhealthy, and unhealthyLateness how late its last scheduled run must
// have started: the first lateness bucket, so that RecurLateness alone
// selects them.
const (
	unhealthyWindow   = 24 * time.Hour
	unhealthyLateness = time.Minute
)

// JobFilter selects the jobs of a list: every condition set must hold.
type JobFilter struct {
	State string // Enabled, Disabled, Completed or Faulted; "" for any
	// Failures: status.consecutiveFailures at least this; 0 for any.
	Failures int
	// SuccessBefore: no success since, lastSuccessTime before it or none.
	SuccessBefore *time.Time
	// LateFrom: status.lastLateness this or more.
	LateFrom *time.Duration
	// MissedSince: status.lastMissedTime at or after it.
	MissedSince *time.Time
	// Unhealthy: failing, late by unhealthyLateness or more, or missed an
	// occurrence within unhealthyWindow of Now.
	Unhealthy bool
	Now       time.Time
}

// Conditions are the visibility query's conditions that narrow the jobs
// to those the filter may keep: the state, and each health condition's
// search attribute, coarser than the memo's value. A condition no
// attribute narrows (lastSuccessTime) adds none.
func (f JobFilter) Conditions() []string {
	var conds []string
	if f.State != "" {
		conds = append(conds, jobs.AttrState.GetName()+" = "+jobs.Quote(f.State))
	}
	if f.Failures > 0 {
		conds = append(conds, failingCondition())
	}
	if f.LateFrom != nil {
		if buckets, ok := jobs.LatenessBucketsFrom(*f.LateFrom); ok {
			conds = append(conds, latenessCondition(buckets))
		}
	}
	if f.MissedSince != nil {
		conds = append(conds, missedCondition(*f.MissedSince))
	}
	if f.Unhealthy {
		late, _ := jobs.LatenessBucketsFrom(unhealthyLateness)
		conds = append(conds, "("+failingCondition()+" OR "+latenessCondition(late)+" OR "+
			missedCondition(f.Now.Add(-unhealthyWindow))+")")
	}
	return conds
}

// Narrows reports whether the visibility query leaves out jobs that are
// not in the list: a job the store does not show is then not read
// otherwise.
func (f JobFilter) Narrows() bool { return len(f.Conditions()) > 0 }

func failingCondition() string { return jobs.AttrFailingSince.GetName() + " IS NOT NULL" }

func latenessCondition(buckets []string) string {
	quoted := make([]string, len(buckets))
	for i, b := range buckets {
		quoted[i] = jobs.Quote(b)
	}
	return jobs.AttrLateness.GetName() + " IN (" + strings.Join(quoted, ", ") + ")"
}

// missedCondition selects the jobs that may have missed an occurrence due
// at or after t: RecurLastMissed trails lastMissedTime.
func missedCondition(t time.Time) string {
	return jobs.AttrLastMissed.GetName() + " >= " + jobs.Quote(t.Add(-jobs.LastMissedLag).UTC().Format(time.RFC3339Nano))
}

// Keep reports whether the job's view meets the filter, by the exact
// values of its memo.
func (f JobFilter) Keep(v jobs.JobView) bool {
	p := v.Job.Properties
	if f.State != "" && string(p.State) != f.State {
		return false
	}
	var st jobs.Status
	if p.Status != nil {
		st = *p.Status
	}
	switch {
	case f.Failures > 0 && st.ConsecutiveFailures < f.Failures,
		f.SuccessBefore != nil && st.LastSuccessTime != nil && !st.LastSuccessTime.Before(*f.SuccessBefore),
		f.LateFrom != nil && !lateFrom(st, *f.LateFrom),
		f.MissedSince != nil && !missedSince(st, *f.MissedSince),
		f.Unhealthy && st.ConsecutiveFailures == 0 && !lateFrom(st, unhealthyLateness) &&
			!missedSince(st, f.Now.Add(-unhealthyWindow)):
		return false
	}
	return true
}

func lateFrom(st jobs.Status, d time.Duration) bool {
	return st.LastLateness != nil && time.Duration(*st.LastLateness) >= d
}

func missedSince(st jobs.Status, t time.Time) bool {
	return st.LastMissedTime != nil && !st.LastMissedTime.Before(t)
}
