package api

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/recurhq/recur/jobs"
)

// A job list's $filter: Azure's "state eq 'Enabled'", and recur's
// conditions on a job's health (docs/api.md, "Health"), joined by "and".
// The search attributes that hold a job's health coarsely narrow the
// visibility query (conditions); the exact values of the memo decide
// (keep), so a page may read more jobs than it shows.

// unhealthyWindow is how recent a missed occurrence makes a job
// unhealthy, and unhealthyLateness how late its last scheduled run must
// have started: the first lateness bucket, so that RecurLateness alone
// selects them.
const (
	unhealthyWindow   = 24 * time.Hour
	unhealthyLateness = time.Minute
)

// maxFilterFailures bounds consecutiveFailures in a filter, far past any
// streak, so that gt cannot overflow.
const maxFilterFailures = 1_000_000_000

// jobFilter is a parsed $filter of a job list: every condition set must
// hold.
type jobFilter struct {
	state string // Enabled, Disabled, Completed or Faulted; "" for any
	// failures: status.consecutiveFailures at least this; 0 for any.
	failures int
	// successBefore: no success since, lastSuccessTime before it or none.
	successBefore *time.Time
	// lateFrom: status.lastLateness this or more.
	lateFrom *time.Duration
	// missedSince: status.lastMissedTime at or after it.
	missedSince *time.Time
	// unhealthy: failing, late by unhealthyLateness or more, or missed an
	// occurrence within unhealthyWindow of now.
	unhealthy bool
	now       time.Time
}

// filterForms lists what $filter takes, for the message of a filter it
// does not.
const filterForms = "state eq '<Enabled, Disabled, Completed or Faulted>', consecutiveFailures ge <n>, " +
	"lastSuccessTime lt <date-time>, lastLateness gt duration'<ISO 8601 duration>', lastMissedTime ge <date-time> " +
	"or unhealthy, joined by and (gt, le and the like as each allows)"

// parseJobFilter reads a job list's $filter at now (for unhealthy). Names
// and operators may come in any letter case; values as Azure's OData
// writes them, quoted or not.
func parseJobFilter(raw string, now time.Time) (jobFilter, error) {
	f := jobFilter{now: now}
	words := strings.Fields(raw)
	seen := map[string]bool{}
	for len(words) > 0 {
		clause := words
		if i := indexFold(words, "and"); i >= 0 {
			clause, words = words[:i], words[i+1:]
			if len(words) == 0 {
				return f, badFilter(raw, "it ends with and")
			}
		} else {
			words = nil
		}
		if len(clause) == 0 {
			return f, badFilter(raw, "and joins two conditions")
		}
		name := strings.ToLower(clause[0])
		if seen[name] {
			return f, badFilter(raw, clause[0]+" is given twice")
		}
		seen[name] = true
		if err := f.clause(raw, clause); err != nil {
			return f, err
		}
	}
	return f, nil
}

// clause reads one condition of the filter raw.
func (f *jobFilter) clause(raw string, c []string) error {
	name := strings.ToLower(c[0])
	if name == "unhealthy" {
		if len(c) == 1 || len(c) == 3 && strings.EqualFold(c[1], "eq") && strings.EqualFold(unquote(c[2]), "true") {
			f.unhealthy = true
			return nil
		}
		return badFilter(raw, "unhealthy stands alone, or as unhealthy eq true")
	}
	if len(c) != 3 {
		return badFilter(raw, "a condition is <name> <operator> <value>")
	}
	op, value := strings.ToLower(c[1]), c[2]
	wrongOp := func(ops string) error {
		return badFilter(raw, fmt.Sprintf("%s takes %s, not %s", c[0], ops, c[1]))
	}
	switch name {
	case "state":
		state, err := parseEqFilter("state eq "+value, "state", jobStates, true)
		if err != nil || op != "eq" {
			return badFilter(raw, "state takes eq and one of "+strings.Join(jobStates, ", "))
		}
		f.state = state
	case "consecutivefailures":
		n, err := strconv.Atoi(unquote(value))
		if err != nil || n < 0 || n > maxFilterFailures {
			return badFilter(raw, fmt.Sprintf("consecutiveFailures is compared with a whole number from 0 to %d, not %s", maxFilterFailures, value))
		}
		switch op {
		case "ge":
		case "gt":
			n++
		default:
			return wrongOp("ge or gt")
		}
		f.failures = n
	case "lastsuccesstime":
		t, err := filterTime(raw, c[0], value)
		if err != nil {
			return err
		}
		switch op {
		case "lt":
		case "le":
			t = t.Add(time.Nanosecond)
		default:
			return wrongOp("lt or le")
		}
		f.successBefore = &t
	case "lastlateness":
		d, err := filterDuration(raw, value)
		if err != nil {
			return err
		}
		switch op {
		case "gt":
			d += time.Nanosecond
		case "ge":
		default:
			return wrongOp("gt or ge")
		}
		f.lateFrom = &d
	case "lastmissedtime":
		t, err := filterTime(raw, c[0], value)
		if err != nil {
			return err
		}
		switch op {
		case "ge":
		case "gt":
			t = t.Add(time.Nanosecond)
		default:
			return wrongOp("ge or gt")
		}
		f.missedSince = &t
	default:
		return badFilter(raw, c[0]+" cannot be filtered on")
	}
	return nil
}

// filterTime reads a date-time of a filter: RFC 3339, as OData writes it
// (bare) or quoted.
func filterTime(raw, name, value string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, unquote(value))
	if err != nil {
		return t.UTC(), badFilter(raw, fmt.Sprintf("%s is compared with an RFC 3339 date-time such as 2026-11-21T00:00:00Z, not %s", name, clipValue(value)))
	}
	return t.UTC(), nil
}

// filterDuration reads a duration of a filter: OData's duration'PT5M', or
// an ISO 8601 duration or a TimeSpan, quoted or not.
func filterDuration(raw, value string) (time.Duration, error) {
	v := value
	if len(v) > len("duration") && strings.EqualFold(v[:len("duration")], "duration") {
		v = v[len("duration"):]
	}
	d, err := jobs.ParseInterval(unquote(v))
	if err != nil {
		return 0, badFilter(raw, fmt.Sprintf("lastLateness is compared with a duration such as duration'PT5M', not %s", clipValue(value)))
	}
	return d, nil
}

// unquote drops the single quotes around an OData string literal.
func unquote(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return v[1 : len(v)-1]
	}
	return v
}

func indexFold(words []string, w string) int {
	for i, x := range words {
		if strings.EqualFold(x, w) {
			return i
		}
	}
	return -1
}

func badFilter(raw, why string) error {
	return &apiError{status: http.StatusBadRequest, code: codeInvalidFilter, target: "$filter",
		message: fmt.Sprintf("$filter %q is not supported: %s; use %s", clipValue(raw), why, filterForms)}
}

// health reports whether the filter has a condition on the job's health.
func (f jobFilter) health() bool {
	return f.failures > 0 || f.successBefore != nil || f.lateFrom != nil || f.missedSince != nil || f.unhealthy
}

// conditions are the visibility query's conditions that narrow the jobs
// to those the filter may keep: the state, and each health condition's
// search attribute, coarser than the memo's value. A condition no
// attribute narrows (lastSuccessTime) adds none.
func (f jobFilter) conditions() []string {
	var conds []string
	if f.state != "" {
		conds = append(conds, jobs.AttrState.GetName()+" = "+jobs.Quote(f.state))
	}
	if f.failures > 0 {
		conds = append(conds, failingCondition())
	}
	if f.lateFrom != nil {
		if buckets, ok := jobs.LatenessBucketsFrom(*f.lateFrom); ok {
			conds = append(conds, latenessCondition(buckets))
		}
	}
	if f.missedSince != nil {
		conds = append(conds, missedCondition(*f.missedSince))
	}
	if f.unhealthy {
		late, _ := jobs.LatenessBucketsFrom(unhealthyLateness)
		conds = append(conds, "("+failingCondition()+" OR "+latenessCondition(late)+" OR "+
			missedCondition(f.now.Add(-unhealthyWindow))+")")
	}
	return conds
}

// narrows reports whether the visibility query leaves out jobs that are
// not in the list: a job the store does not show is then not read
// otherwise.
func (f jobFilter) narrows() bool { return len(f.conditions()) > 0 }

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

// keep reports whether the job's view meets the filter, by the exact
// values of its memo.
func (f jobFilter) keep(v jobs.JobView) bool {
	p := v.Job.Properties
	if f.state != "" && string(p.State) != f.state {
		return false
	}
	var st jobs.Status
	if p.Status != nil {
		st = *p.Status
	}
	switch {
	case f.failures > 0 && st.ConsecutiveFailures < f.failures,
		f.successBefore != nil && st.LastSuccessTime != nil && !st.LastSuccessTime.Before(*f.successBefore),
		f.lateFrom != nil && !lateFrom(st, *f.lateFrom),
		f.missedSince != nil && !missedSince(st, *f.missedSince),
		f.unhealthy && st.ConsecutiveFailures == 0 && !lateFrom(st, unhealthyLateness) &&
			!missedSince(st, f.now.Add(-unhealthyWindow)):
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
