package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/recurhq/recur/jobs"
)

// maxDiagnosed bounds the missed occurrences looked up in their jobs'
// histories.
const maxDiagnosed = 1000

// diagnose tells, for each missed occurrence, what became of it by the
// job's history (read through the REST API, from the job workflow's own
// history): it ran and nothing arrived, it was recorded as Postponed, or
// the job never reached it. It returns the occurrences grouped by that
// explanation.
func (s *soak) diagnose(ctx context.Context, missed []occurrence) (map[string][]occurrence, error) {
	rows := map[string][]jobs.HistoryRow{} // job -> its newest rows, read once
	next := map[string]*time.Time{}        // job -> nextExecutionTime, read once
	why := map[string][]occurrence{}
	for _, o := range missed[:min(len(missed), maxDiagnosed)] {
		reason := s.explain(ctx, o, rows, next)
		why[reason] = append(why[reason], o)
	}
	return why, nil
}

// explain returns what the job's history says of o.
func (s *soak) explain(ctx context.Context, o occurrence, rows map[string][]jobs.HistoryRow, next map[string]*time.Time) string {
	jobRows, ok := rows[o.job]
	if !ok {
		var err error
		if jobRows, err = s.api.history(ctx, o.job); err != nil {
			return "history unreadable: " + err.Error()
		}
		rows[o.job] = jobRows
	}
	for _, r := range jobRows {
		if !r.ExpectedExecutionTime.Equal(o.nominal) || r.ActionName != jobs.MainAction {
			continue
		}
		if r.Status == jobs.ExecutionPostponed {
			return "Postponed: " + r.Message
		}
		return fmt.Sprintf("ran (%s: %s), but nothing arrived", r.Status, r.Message)
	}
	return s.neverStarted(ctx, o, next)
}

// neverStarted tells whether the job has yet to reach o (its planned next
// run is at or before o: the job workflow lags) or passed it without
// running or recording it.
func (s *soak) neverStarted(ctx context.Context, o occurrence, next map[string]*time.Time) string {
	t, ok := next[o.job]
	if !ok {
		v, err := s.api.getJob(ctx, o.job)
		if err != nil {
			return "not in the job's history; job unreadable: " + err.Error()
		}
		t = v.Properties.Status.NextExecutionTime
		next[o.job] = t
	}
	switch {
	case t == nil:
		return "not in the job's history; the job plans no next run"
	case !t.After(o.nominal):
		return "not in the job's history yet: the job workflow has not reached it (its nextExecutionTime is not later)"
	default:
		return "not in the job's history, and the job has moved past it: lost"
	}
}

// durations matches the numbers in reasons, so that reasons that differ
// only by how late they were group together.
var durations = regexp.MustCompile(`[0-9][0-9.]*(ns|µs|ms|h|m|s)?([0-9.]+(ms|m|s))*`)

// printDiagnosis prints the groups of missed occurrences, largest first,
// with a few examples of each.
func printDiagnosis(missed int, why map[string][]occurrence) {
	grouped := map[string][]string{}
	for reason, occs := range why {
		g := durations.ReplaceAllString(reason, "N")
		for _, o := range occs {
			grouped[g] = append(grouped[g], o.String()+": "+reason)
		}
	}
	diagnosed := 0
	for _, v := range grouped {
		diagnosed += len(v)
	}
	fmt.Printf("what became of the missed occurrences (%d of %d looked up in their jobs' histories):\n", diagnosed, missed)
	keys := slices.SortedFunc(maps.Keys(grouped), func(a, b string) int { return cmp.Compare(len(grouped[b]), len(grouped[a])) })
	for _, k := range keys {
		fmt.Printf("  %5d  %s\n", len(grouped[k]), k)
		slices.Sort(grouped[k])
		for _, ex := range grouped[k][:min(3, len(grouped[k]))] {
			fmt.Printf("           e.g. %s\n", ex)
		}
	}
}
