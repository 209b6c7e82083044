package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"

	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/jobs"
)

// maxDiagnosed bounds the missed occurrences whose run workflow is looked
// up in Temporal.
const maxDiagnosed = 1000

// diagnose tells, for each missed occurrence, what became of it in
// Temporal: its run workflow (ID = occurrence ID) was never started, is
// still running, or ran and recorded why nothing was sent (Postponed).
// It returns the occurrences grouped by that explanation.
func (s *soak) diagnose(ctx context.Context, missed []occurrence) (map[string][]occurrence, error) {
	// recur dev encrypts its payloads (history rows included) with the
	// key file it keeps in its data directory.
	keys, err := codec.Load(filepath.Join(s.proc.DataDir, "encryption-keys.json"))
	if err != nil {
		return nil, fmt.Errorf("read recur's payload keys: %w", err)
	}
	dc := codec.DataConverter(keys)
	c, err := client.DialContext(ctx, client.Options{HostPort: s.proc.Temporal, Namespace: "default",
		DataConverter: dc,
		Logger:        sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", s.proc.Temporal, err)
	}
	defer c.Close()
	next := map[string]*time.Time{} // job -> nextExecutionTime, read once
	why := map[string][]occurrence{}
	for _, o := range missed[:min(len(missed), maxDiagnosed)] {
		reason := s.explain(ctx, c, dc, o, next)
		why[reason] = append(why[reason], o)
	}
	return why, nil
}

// explain returns what became of the run workflow of o.
func (s *soak) explain(ctx context.Context, c client.Client, dc converter.DataConverter, o occurrence, next map[string]*time.Time) string {
	id := jobs.OccurrenceID(jobKey(o.job).JobWorkflowID(), o.nominal)
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(dctx, id, "")
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
		return s.neverStarted(ctx, o, next)
	case err != nil:
		return "describe failed: " + err.Error()
	}
	info := d.GetWorkflowExecutionInfo()
	status := info.GetStatus().String()
	if status == "Running" {
		var pending []string
		for _, a := range d.GetPendingActivities() {
			failure := a.GetLastFailure()
			converter.DecodeCommonFailureAttributes(dc, failure) // encrypted by recur's workers
			pending = append(pending, fmt.Sprintf("%s %s attempt %d %s", a.GetActivityType().GetName(), a.GetState(),
				a.GetAttempt(), failure.GetMessage()))
		}
		return fmt.Sprintf("run workflow still running (pending: %s)", strings.Join(pending, "; "))
	}
	var rows []jobs.HistoryRow
	if p, ok := info.GetMemo().GetFields()[jobs.MemoHistory]; ok {
		if err := dc.FromPayload(p, &rows); err != nil {
			return "history rows unreadable: " + err.Error()
		}
	}
	for _, r := range rows {
		if r.Status == jobs.Postponed {
			return "Postponed: " + r.Message
		}
	}
	return fmt.Sprintf("run workflow %s with %d history rows, but nothing arrived", status, len(rows))
}

// neverStarted tells whether the job has yet to reach o (its planned next
// run is at or before o: the job workflow lags) or passed it without
// starting a run.
func (s *soak) neverStarted(ctx context.Context, o occurrence, next map[string]*time.Time) string {
	t, ok := next[o.job]
	if !ok {
		v, err := s.api.getJob(ctx, o.job)
		if err != nil {
			return "no run workflow; job unreadable: " + err.Error()
		}
		t = v.Properties.Status.NextExecutionTime
		next[o.job] = t
	}
	switch {
	case t == nil:
		return "no run workflow; the job plans no next run"
	case !t.After(o.nominal):
		return "no run workflow yet: the job workflow has not reached it (its nextExecutionTime is not later)"
	default:
		return "no run workflow, and the job has moved past it: lost"
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
	fmt.Printf("what became of the missed occurrences (%d of %d looked up in Temporal):\n", diagnosed, missed)
	keys := slices.SortedFunc(maps.Keys(grouped), func(a, b string) int { return cmp.Compare(len(grouped[b]), len(grouped[a])) })
	for _, k := range keys {
		fmt.Printf("  %5d  %s\n", len(grouped[k]), k)
		slices.Sort(grouped[k])
		for _, ex := range grouped[k][:min(3, len(grouped[k]))] {
			fmt.Printf("           e.g. %s\n", ex)
		}
	}
}
