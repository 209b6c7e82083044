package main

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// historySample is how many jobs (or schedules) of a phase have their
// histories counted.
const historySample = 20

// eventCount is what the history count of a phase found.
type eventCount struct {
	parent      int // events of the job (schedule) workflows in the window
	children    int // events of the run (started) workflows of the sampled occurrences
	occurrences int // the sampled occurrences due in the window and delivered
	err         error
}

func (e eventCount) perOccurrence() string {
	if e.err != nil {
		return "? (" + e.err.Error() + ")"
	}
	if e.occurrences == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f (%.1f scheduling workflow + %.1f per-occurrence workflow; %d occurrences of %d sampled)",
		float64(e.parent+e.children)/float64(e.occurrences), float64(e.parent)/float64(e.occurrences),
		float64(e.children)/float64(e.occurrences), e.occurrences, historySample)
}

// countWindow counts the events of every run of workflow id (following
// continue-as-new from its first run) whose time is in [from, to).
func countWindow(ctx context.Context, c client.Client, id string, from, to time.Time) (int, error) {
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return 0, fmt.Errorf("describe %s: %w", id, err)
	}
	run := d.GetWorkflowExecutionInfo().GetFirstRunId()
	if run == "" {
		run = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	}
	n := 0
	for run != "" {
		it := c.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		next := ""
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				return 0, fmt.Errorf("history of %s/%s: %w", id, run, err)
			}
			if t := e.GetEventTime().AsTime(); !t.Before(from) && t.Before(to) {
				n++
			}
			if a := e.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
				next = a.GetNewExecutionRunId()
			}
		}
		run = next
	}
	return n, nil
}

// countAll counts the events of the latest run of workflow id.
func countAll(ctx context.Context, c client.Client, id string) (int, error) {
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	n := 0
	for it.HasNext() {
		if _, err := it.Next(); err != nil {
			return 0, fmt.Errorf("history of %s: %w", id, err)
		}
		n++
	}
	return n, nil
}

// countSample counts the histories of a sample of a phase's scheduling
// workflows: parentID maps a name to its job (schedule) workflow ID and,
// with perOccurrence, the deliveries' Idempotency-Keys are the IDs of the
// per-occurrence workflows (a Schedule's; recur runs an occurrence in its
// job's workflow). Only occurrences due in [from, to) count.
func countSample(ctx context.Context, c client.Client, names []string, parentID func(string) string, perOccurrence bool, ds []delivery, from, to time.Time) eventCount {
	var ec eventCount
	if len(names) == 0 {
		return ec
	}
	keys := map[string]map[string]bool{} // name -> keys of its occurrences in the window
	for _, d := range ds {
		if !d.nominal.Before(from) && d.nominal.Before(to) {
			if keys[d.name] == nil {
				keys[d.name] = map[string]bool{}
			}
			keys[d.name][d.key] = true
		}
	}
	for k := range historySample {
		name := names[k*len(names)/historySample]
		if k > 0 && name == names[(k-1)*len(names)/historySample] {
			continue
		}
		n, err := countWindow(ctx, c, parentID(name), from, to)
		if err != nil {
			ec.err = err
			return ec
		}
		ec.parent += n
		for key := range keys[name] {
			ec.occurrences++
			if !perOccurrence {
				continue
			}
			n, err := countAll(ctx, c, key)
			if err != nil {
				ec.err = err
				return ec
			}
			ec.children += n
		}
	}
	return ec
}
