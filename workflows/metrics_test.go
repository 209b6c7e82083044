package workflows_test

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/metrics"
	"github.com/recurhq/recur/recurrence"
	"github.com/recurhq/recur/worker"
	"github.com/recurhq/recur/workflows"
)

// measured returns a harness whose job workflow reports into a metrics
// set, as the worker's does, labelled by collection when label says so.
func measured(t *testing.T, now time.Time, label bool) (*harness, func() map[string]*dto.MetricFamily) {
	set := metrics.New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	env := newEnvWith(t, set.Temporal)
	if label {
		env = newEnvWith(t, set.Temporal, worker.CollectionLabel())
	}
	// The label comes from the workflow's ID, as the API starts it.
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: key.JobWorkflowID()})
	gather := func() map[string]*dto.MetricFamily {
		require.NoError(t, set.Close()) // reports what tally holds back
		families, err := set.Registry.Gather()
		require.NoError(t, err)
		out := map[string]*dto.MetricFamily{}
		for _, f := range families {
			out[f.GetName()] = f
		}
		return out
	}
	return newHarnessOn(t, env, now), gather
}

// total adds the values of the counter name's series whose labels include
// the name-value pairs of want.
func total(families map[string]*dto.MetricFamily, name string, want ...string) float64 {
	var sum float64
series:
	for _, m := range families[name].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(want); i += 2 {
			if labels[want[i]] != want[i+1] {
				continue series
			}
		}
		sum += m.GetCounter().GetValue()
	}
	return sum
}

// TestAnOutageCountsMissedOccurrencesNotPostponedOnes: the three-day
// outage of TestCatchUpAfterAThreeDayOutageRunsOnlyTheMostRecentOccurrence
// misses 71 occurrences (49 rows, the last counting 22 more): all of them
// are missed, none postponed, and the two runs completed.
func TestAnOutageCountsMissedOccurrencesNotPostponedOnes(t *testing.T) {
	now := time.Date(2026, 6, 4, 12, 30, 0, 0, time.UTC)
	h, gather := measured(t, now, false)
	created := now.Add(-72 * time.Hour)
	j := job(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC), &recurrence.Recurrence{Frequency: "Hour"})
	require.NoError(t, j.Accept(key, created))
	next := created.Add(30 * time.Minute)
	h.run(40*time.Minute, jobs.JobInput{Key: key, State: &jobs.JobState{Job: j, PlannedFrom: created, Next: &next}})
	require.Len(t, h.rows(jobs.ExecutionPostponed), 49)

	families := gather()
	require.Equal(t, 71.0, total(families, workflows.MetricMissed))
	require.Equal(t, 0.0, total(families, workflows.MetricPostponed))
	require.Equal(t, 2.0, total(families, workflows.MetricOccurrences))
	require.Equal(t, 2.0, total(families, workflows.MetricRuns, "outcome", workflows.OutcomeCompleted))
	require.Equal(t, 0.0, total(families, workflows.MetricRuns, "outcome", workflows.OutcomeFailed))
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				require.NotEqual(t, jobs.MetricCollectionLabel, l.GetName(), "%s: no collection label unless asked", f.GetName())
			}
		}
	}
}

// TestOverlapCountsPostponedAndAFailingJobFailedRuns: an occurrence due
// while the run before still runs is postponed, not missed; a job whose
// target answers 500 counts failed runs. With the collection label, the
// series carry the job's collection, never its name.
func TestOverlapCountsPostponedAndAFailingJobFailedRuns(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h, gather := measured(t, now, true)
	j := slowFirstRun(h, now, 3)
	j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: jobs.RetryNone}
	h.answer = func(in jobs.HTTPRequestInput, n int) (jobs.HTTPResponse, error) {
		if in.OccurrenceID == jobs.OccurrenceID(key.JobWorkflowID(), now) {
			return jobs.HTTPResponse{StatusCode: 200, Status: "200 OK"}, nil
		}
		return failing(in, n)
	}
	h.at(0, func() { h.put(j) })
	h.run(15*time.Minute, jobs.JobInput{Key: key})
	require.Len(t, h.rows(jobs.ExecutionPostponed), 1)

	families := gather()
	c := key.MetricCollection()
	require.Equal(t, 1.0, total(families, workflows.MetricPostponed, jobs.MetricCollectionLabel, c))
	require.Equal(t, 0.0, total(families, workflows.MetricMissed))
	require.Equal(t, 1.0, total(families, workflows.MetricRuns, "outcome", workflows.OutcomeCompleted, jobs.MetricCollectionLabel, c))
	require.Equal(t, 2.0, total(families, workflows.MetricRuns, "outcome", workflows.OutcomeFailed, jobs.MetricCollectionLabel, c))
	require.Equal(t, 2.0, total(families, workflows.MetricFaults, jobs.MetricCollectionLabel, c))
	lateness := families[workflows.MetricLateness].GetMetric()
	require.Len(t, lateness, 1)
	for _, l := range lateness[0].GetLabel() {
		require.NotContains(t, l.GetValue(), "job:", "no label names the job")
		if l.GetName() == jobs.MetricCollectionLabel {
			require.Equal(t, "s__rg__c", l.GetValue())
		}
	}
	require.Equal(t, uint64(3), lateness[0].GetHistogram().GetSampleCount())
	var bounds []float64
	for _, b := range lateness[0].GetHistogram().GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	require.Equal(t, metrics.Buckets, bounds, "lateness is a histogram of the shared buckets, which histogram_quantile reads")
}

// TestLatenessCountsFromTheJitteredStartAndLeavesBackfillsOut: a job with
// a 10-minute jitter starts each run at its own offset, which is on time;
// a backfill of a past hour runs it hours after its nominal time on
// purpose. Neither is late: p99 alerts must not fire on them.
func TestLatenessCountsFromTheJitteredStartAndLeavesBackfillsOut(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h, gather := measured(t, now, false)
	j := job(now.Add(-4*time.Hour), &recurrence.Recurrence{Frequency: "Hour", Count: intp(2)})
	j.Properties.Jitter = "PT10M"
	h.at(0, func() { h.put(j) })
	h.at(time.Second, func() {
		updates++
		h.env.UpdateWorkflow(jobs.UpdateBackfill, fmt.Sprintf("backfill-%d", updates), &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("backfill rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, jobs.BackfillRequest{StartTime: now.Add(-3*time.Hour - 30*time.Minute), EndTime: now.Add(-2*time.Hour - 30*time.Minute)})
	})
	h.run(4*time.Hour, jobs.JobInput{Key: key})
	require.Len(t, h.attempts, 3, "a backfilled hour and two jittered ones")
	var jittered time.Duration // the scheduled runs' starts after their nominal times
	for _, a := range h.attempts[1:] {
		_, at, _ := strings.Cut(a.id, "@")
		nominal, err := time.Parse(time.RFC3339, at)
		require.NoError(t, err)
		jittered += a.at.Sub(nominal)
	}
	require.Greater(t, jittered, time.Minute, "the jitter delays the scheduled runs")

	families := gather()
	require.Equal(t, 3.0, total(families, workflows.MetricOccurrences))
	lateness := families[workflows.MetricLateness].GetMetric()
	require.Len(t, lateness, 1)
	require.Equal(t, uint64(2), lateness[0].GetHistogram().GetSampleCount(), "the two scheduled runs")
	require.Less(t, lateness[0].GetHistogram().GetSampleSum(), 1.0, "both started on their jittered time")
}

// TestLatenessLeavesRerunsOut: a re-run runs a failed occurrence of the
// past on purpose: it is not late.
func TestLatenessLeavesRerunsOut(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h, gather := measured(t, now, false)
	h.answer = failing
	j := job(now, &recurrence.Recurrence{Frequency: "Hour"})
	j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "None"}
	h.at(0, func() { h.put(j) })
	h.at(30*time.Minute, func() {
		update(h.t, h.env, jobs.UpdateRerun, jobs.RerunRequest{Failure: h.failures()[0]})
	})
	h.run(50*time.Minute, jobs.JobInput{Key: key})
	require.Len(t, h.attempts, 2, "12:00 and its re-run at 12:30")

	families := gather()
	require.Equal(t, 2.0, total(families, workflows.MetricOccurrences))
	lateness := families[workflows.MetricLateness].GetMetric()
	require.Len(t, lateness, 1)
	require.Equal(t, uint64(1), lateness[0].GetHistogram().GetSampleCount(), "the scheduled run alone")
	require.Less(t, lateness[0].GetHistogram().GetSampleSum(), 1.0)
}
