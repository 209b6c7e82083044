package api

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/store"
)

// A job list's $filter: Azure's "state eq 'Enabled'", and recur's
// conditions on a job's health (docs/api.md, "Health"), joined by "and",
// read into a store.JobFilter.

// maxFilterFailures bounds consecutiveFailures in a filter, far past any
// streak, so that gt cannot overflow.
const maxFilterFailures = 1_000_000_000

// filterForms lists what $filter takes, for the message of a filter it
// does not.
const filterForms = "state eq '<Enabled, Disabled, Completed or Faulted>', consecutiveFailures ge <n>, " +
	"lastSuccessTime lt <date-time>, lastLateness gt duration'<ISO 8601 duration>', lastMissedTime ge <date-time> " +
	"or unhealthy, joined by and (gt, le and the like as each allows)"

// parseJobFilter reads a job list's $filter at now (for unhealthy). Names
// and operators may come in any letter case; values as Azure's OData
// writes them, quoted or not.
func parseJobFilter(raw string, now time.Time) (store.JobFilter, error) {
	f := store.JobFilter{Now: now}
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
		if err := filterClause(&f, raw, clause); err != nil {
			return f, err
		}
	}
	return f, nil
}

// filterClause reads one condition of the filter raw into f.
func filterClause(f *store.JobFilter, raw string, c []string) error {
	name := strings.ToLower(c[0])
	if name == "unhealthy" {
		if len(c) == 1 || len(c) == 3 && strings.EqualFold(c[1], "eq") && strings.EqualFold(unquote(c[2]), "true") {
			f.Unhealthy = true
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
		f.State = state
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
		f.Failures = n
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
		f.SuccessBefore = &t
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
		f.LateFrom = &d
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
		f.MissedSince = &t
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
