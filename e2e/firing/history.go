package main

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"
)

// historySample is how many jobs (or schedules) of a phase have their
// histories counted.
const historySample = 20

// eventCount is what the history count of a phase found.
type eventCount struct {
	parent      int // events of the job (schedule) workflows in the window
	children    int // events of the run (started) workflows of the sampled occurrences
	occurrences int // the sampled occurrences due in the window and delivered
	// bytes are the encoded sizes of the parent's and the children's
	// events; sampled the scheduling workflows counted, continued how
	// many times they continued as new in the window.
	parentBytes, childBytes int
	sampled, continued      int
	err                     error
}

// size is the history the sampled occurrences wrote, per occurrence and
// per job (schedule) and hour at one occurrence every every.
func (e eventCount) size(every time.Duration) string {
	if e.err != nil || e.occurrences == 0 {
		return "n/a"
	}
	perOcc := float64(e.parentBytes+e.childBytes) / float64(e.occurrences)
	perHour := float64(time.Hour / every)
	return fmt.Sprintf("%.0f bytes per occurrence (%.0f scheduling workflow + %.0f per-occurrence workflow); per job and hour %.0f events, %.1f KiB",
		perOcc, float64(e.parentBytes)/float64(e.occurrences), float64(e.childBytes)/float64(e.occurrences),
		float64(e.parent+e.children)/float64(e.occurrences)*perHour, perOcc*perHour/1024)
}

// cadence is how often a sampled scheduling workflow continued as new,
// over a window of length window.
func (e eventCount) cadence(window time.Duration) string {
	switch {
	case e.err != nil || e.sampled == 0:
		return "n/a"
	case e.continued == 0:
		return fmt.Sprintf("none in %s across %d sampled", window, e.sampled)
	}
	every := time.Duration(float64(window) * float64(e.sampled) / float64(e.continued))
	return fmt.Sprintf("%d in %s across %d sampled: a run every %s per job", e.continued, window, e.sampled, every.Round(time.Second))
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

// window is what countWindow found.
type window struct {
	events, bytes, continued int
}

// countWindow counts the events of every run of workflow id (following
// continue-as-new from its first run) whose time is in [from, to), their
// size, and the continue-as-new events among them.
func countWindow(ctx context.Context, c client.Client, id string, from, to time.Time) (window, error) {
	var w window
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return w, fmt.Errorf("describe %s: %w", id, err)
	}
	run := d.GetWorkflowExecutionInfo().GetFirstRunId()
	if run == "" {
		run = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	}
	for run != "" {
		it := c.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		next := ""
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				return w, fmt.Errorf("history of %s/%s: %w", id, run, err)
			}
			a := e.GetWorkflowExecutionContinuedAsNewEventAttributes()
			if t := e.GetEventTime().AsTime(); !t.Before(from) && t.Before(to) {
				w.events++
				w.bytes += proto.Size(e)
				if a != nil {
					w.continued++
				}
			}
			if a != nil {
				next = a.GetNewExecutionRunId()
			}
		}
		run = next
	}
	return w, nil
}

// countAll counts the events of the latest run of workflow id, and their
// size.
func countAll(ctx context.Context, c client.Client, id string) (events, bytes int, err error) {
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return 0, 0, fmt.Errorf("history of %s: %w", id, err)
		}
		events, bytes = events+1, bytes+proto.Size(e)
	}
	return events, bytes, nil
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
		w, err := countWindow(ctx, c, parentID(name), from, to)
		if err != nil {
			ec.err = err
			return ec
		}
		ec.parent, ec.parentBytes, ec.continued, ec.sampled = ec.parent+w.events, ec.parentBytes+w.bytes, ec.continued+w.continued, ec.sampled+1
		for key := range keys[name] {
			ec.occurrences++
			if !perOccurrence {
				continue
			}
			n, size, err := countAll(ctx, c, key)
			if err != nil {
				ec.err = err
				return ec
			}
			ec.children, ec.childBytes = ec.children+n, ec.childBytes+size
		}
	}
	return ec
}
