package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/recurhq/recur/jobs"
)

// healthFlags are recur jobs list's filters on a job's health: each is a
// condition of the API's $filter of the same meaning (docs/api.md,
// "Health").
type healthFlags struct {
	failing                           int
	noSuccessSince, late, missedSince string
	unhealthy                         bool
}

func (h *healthFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&h.failing, "failing", 0, "list only jobs whose last `N` runs or more failed in a row (consecutiveFailures ge N)")
	fs.StringVar(&h.noSuccessSince, "no-success-since", "", "list only jobs with no success since `T`, an RFC 3339 time or a duration ago such as 24h (lastSuccessTime lt T)")
	fs.StringVar(&h.late, "late", "", "list only jobs whose last scheduled run started late by more than `D`, such as 5m or PT5M (lastLateness gt D)")
	fs.StringVar(&h.missedSince, "missed-since", "", "list only jobs that missed or postponed an occurrence due since `T`, an RFC 3339 time or a duration ago such as 24h (lastMissedTime ge T)")
	fs.BoolVar(&h.unhealthy, "unhealthy", false, "list only jobs failing, late by a minute or more, or that missed an occurrence in the last day (unhealthy)")
}

func (h healthFlags) any() bool {
	return h.failing != 0 || h.noSuccessSince != "" || h.late != "" || h.missedSince != "" || h.unhealthy
}

// conditions returns the $filter conditions of the flags set; durations
// ago count from now.
func (h healthFlags) conditions(now time.Time) ([]string, error) {
	var conds []string
	if h.failing < 0 {
		return nil, fmt.Errorf("--failing %d: want a number of runs, 1 or more", h.failing)
	}
	if h.failing > 0 {
		conds = append(conds, "consecutiveFailures ge "+strconv.Itoa(h.failing))
	}
	for _, c := range []struct{ flag, value, cond string }{
		{"no-success-since", h.noSuccessSince, "lastSuccessTime lt "},
		{"missed-since", h.missedSince, "lastMissedTime ge "},
	} {
		if c.value == "" {
			continue
		}
		t, err := sinceFlag(c.flag, c.value, now)
		if err != nil {
			return nil, err
		}
		conds = append(conds, c.cond+t.UTC().Format(time.RFC3339Nano))
	}
	if h.late != "" {
		d, err := durationFlag(h.late)
		if err != nil {
			return nil, fmt.Errorf("--late %q: want a duration such as 5m or PT5M", h.late)
		}
		conds = append(conds, "lastLateness gt duration'"+jobs.Duration(d).String()+"'")
	}
	if h.unhealthy {
		conds = append(conds, "unhealthy")
	}
	return conds, nil
}

// sinceFlag reads a time flag: an RFC 3339 time, or a duration before now.
func sinceFlag(name, value string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, value); err == nil {
		return t, nil
	}
	d, err := durationFlag(value)
	if err != nil {
		return time.Time{}, fmt.Errorf("--%s %q: want an RFC 3339 time such as 2026-11-21T00:00:00Z or a duration ago such as 24h", name, value)
	}
	return now.Add(-d), nil
}

// durationFlag reads a duration as Go writes one (90m) or as the API does
// (PT90M, 01:30:00).
func durationFlag(value string) (time.Duration, error) {
	if d, err := time.ParseDuration(value); err == nil && d >= 0 {
		return d, nil
	}
	return jobs.ParseInterval(value)
}

// jobsListPath is the path of recur jobs list: a collection's jobs, or,
// without a collection, those of the resource group or the subscription
// (recur's extension).
func jobsListPath(a address) string {
	if a.collection != "" {
		return a.jobsPath()
	}
	p := "/recur/v1/subscriptions/" + url.PathEscape(a.subscription)
	if a.resourceGroup != "" {
		p += "/resourceGroups/" + url.PathEscape(a.resourceGroup)
	}
	return p + "/jobs"
}

// checkJobsListAddress wants a resource group with a collection.
func checkJobsListAddress(a address) error {
	if a.collection != "" {
		return a.require(collectionParts, false)
	}
	return nil
}

// jobsListKind shows a list of jobs across collections, or filtered on
// their health, with their health; a collection's other lists as the
// other job commands do.
func jobsListKind(o clientOptions) *kind {
	if o.addr.collection == "" || o.health.any() {
		return &jobHealthKind
	}
	return &jobKind
}

var jobHealthKind = kind{plural: "jobs", row: jobHealthRow,
	columns: []string{"NAME", "RESOURCE GROUP", "STATE", "FAILING", "LAST SUCCESS", "LATENESS", "MISSED", "POSTPONED", "LAST MISSED"}}

// jobHealthRow is a job's row with its health: its name with its
// collection's, as the API writes it, since the list may span
// collections.
func jobHealthRow(data json.RawMessage) ([]string, error) {
	var j struct {
		ID         string `json:"id"`
		Name       string `json:"name"`
		Properties struct {
			State  string `json:"state"`
			Status struct {
				LastSuccessTime     *time.Time `json:"lastSuccessTime"`
				ConsecutiveFailures int        `json:"consecutiveFailures"`
				LastLateness        string     `json:"lastLateness"`
				PostponedCount      int        `json:"postponedCount"`
				MissedCount         int        `json:"missedCount"`
				LastMissedTime      *time.Time `json:"lastMissedTime"`
			} `json:"status"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, err
	}
	st := j.Properties.Status
	return []string{j.Name, resourceGroupOf(j.ID), j.Properties.State, strconv.Itoa(st.ConsecutiveFailures),
		timeCell(st.LastSuccessTime), st.LastLateness, strconv.Itoa(st.MissedCount), strconv.Itoa(st.PostponedCount),
		timeCell(st.LastMissedTime)}, nil
}
