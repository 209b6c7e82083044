package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/service/worker/scheduler"
	"google.golang.org/protobuf/proto"

	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/internal/peer"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/workflows"
)

// BenchmarkReplayOfALongRun measures what a job the worker's cache no
// longer holds costs at its next occurrence: the worker reads its run's
// history and replays all of it before the occurrence's own task. Beside
// it, the same for a Schedule, whose scheduler workflow the server's own
// worker caches and replays alike.
//
// Both histories are made long by a backfill of n hourly occurrences
// (actions), which the job runs in one workflow task and the Schedule in
// a few: their events are those an occurrence adds (the job's action
// marker and memo upsert; the Schedule's start of a workflow and its
// watch), without the timer and workflow task events of an occurrence on
// time, which cost little to replay. So ns/occurrence is the figure to
// scale by a run's length: a job continues as new after 100 occurrences,
// a Schedule when the server suggests it (4096 events by default). The
// history's read from the server is not in it. The job's history is
// encrypted, as recur writes it, and replayed with recur's codec.
//
//	go test ./e2e -run '^$' -bench ReplayOfALongRun -benchtime 20x
func BenchmarkReplayOfALongRun(b *testing.B) {
	s := newStack(b)
	target := newJobTarget(func(http.ResponseWriter, *http.Request) {})
	b.Cleanup(target.Close)
	status, body := s.do(b, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(b, http.StatusCreated, status, body)
	tc, err := peer.Dial(context.Background(), s.temporal.GetFrontendHostPort(), s.temporal.GetDefaultNamespace())
	require.NoError(b, err)
	b.Cleanup(tc.Close)
	w, err := peer.StartWorker(tc)
	require.NoError(b, err)
	b.Cleanup(w.Stop)

	dc := codec.DataConverter(s.recur.Keys)
	jobReplayer, err := sdkworker.NewWorkflowReplayerWithOptions(sdkworker.WorkflowReplayerOptions{
		DataConverter: dc, FailureConverter: codec.FailureConverter(dc)})
	require.NoError(b, err)
	jobReplayer.RegisterWorkflowWithOptions(workflows.Job, workflow.RegisterOptions{Name: jobs.JobWorkflowName})
	scheduleReplayer := sdkworker.NewWorkflowReplayer()
	scheduleReplayer.RegisterWorkflowWithOptions(scheduler.SchedulerWorkflow, workflow.RegisterOptions{Name: scheduler.WorkflowType})

	start := time.Now().UTC().Add(-60 * 24 * time.Hour).Truncate(time.Hour)
	for _, n := range []int{100, 1000} {
		job := backfilledJob(b, s, target.URL, start, n)
		schedule := backfilledSchedule(b, tc, target.URL, start, n)
		b.Run(fmt.Sprintf("recur/%d", n), func(b *testing.B) { replayBench(b, jobReplayer, job, n) })
		b.Run(fmt.Sprintf("schedule/%d", n), func(b *testing.B) { replayBench(b, scheduleReplayer, schedule, n) })
	}
}

// replayBench replays h, a history of n occurrences, once an iteration.
func replayBench(b *testing.B, r sdkworker.WorkflowReplayer, h *historypb.History, n int) {
	for b.Loop() {
		// A replay writes the search attributes it upserts into the start
		// event's, where the next replay would find them already set:
		// each replays a copy.
		b.StopTimer()
		fresh := proto.Clone(h).(*historypb.History)
		b.StartTimer()
		require.NoError(b, r.ReplayWorkflowHistory(nil, fresh))
	}
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(per/float64(n), "ns/occurrence")
	b.ReportMetric(per/float64(len(h.Events)), "ns/event")
	b.ReportMetric(float64(len(h.Events))/float64(n), "events/occurrence")
}

// backfilledJob creates an hourly job starting at start, backfills its
// first n occurrences and returns its run's history once all have run.
func backfilledJob(b *testing.B, s *stack, url string, start time.Time, n int) *historypb.History {
	name := fmt.Sprintf("long%d", n)
	job := httpJob(url+"/"+name, map[string]any{"frequency": "Hour"})
	job["properties"].(map[string]any)["startTime"] = start.Format(time.RFC3339)
	jobPath := collectionPath + "/jobs/" + name
	status, body := s.do(b, http.MethodPut, jobPath, job)
	require.Equal(b, http.StatusCreated, status, body)
	status, body = s.do(b, http.MethodPost, jobPath+"/backfill", map[string]any{
		"startTime": start.Format(time.RFC3339), "endTime": start.Add(time.Duration(n-1) * time.Hour).Format(time.RFC3339)})
	require.Equal(b, http.StatusAccepted, status, body)
	require.EqualValues(b, n, body["queued"])
	require.Eventually(b, func() bool {
		_, job := s.do(b, http.MethodGet, jobPath, nil)
		return path(job, "properties", "status", "executionCount") == float64(n)
	}, 10*time.Minute, time.Second, "the backfill of %d ran", n)
	id := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: name}.JobWorkflowID()
	return historyOf(b, s.temporal.GetDefaultClient(), id)
}

// backfilledSchedule creates an hourly Schedule of the peer's action,
// backfills its first n actions from start (all allowed to overlap, as
// the job's backfill runs each) and returns its scheduler workflow's
// history once all have started.
func backfilledSchedule(b *testing.B, c client.Client, url string, start time.Time, n int) *historypb.History {
	ctx := context.Background()
	id := fmt.Sprintf("long%d", n)
	h, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{ID: id,
		Spec:   client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: time.Hour}}},
		Action: peer.Action(id, url+"/"+id)})
	require.NoError(b, err)
	require.NoError(b, h.Backfill(ctx, client.ScheduleBackfillOptions{Backfill: []client.ScheduleBackfill{{
		// A backfill takes the times after its start.
		Start: start.Add(-time.Minute), End: start.Add(time.Duration(n-1) * time.Hour), Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL}}}))
	require.Eventually(b, func() bool {
		d, err := h.Describe(ctx)
		return err == nil && d.Info.NumActions == n
	}, 10*time.Minute, time.Second, "the Schedule's backfill of %d started", n)
	return historyOf(b, c, peer.SchedulerWorkflowPrefix+id)
}

// historyOf reads the history of workflow id's current run.
func historyOf(b *testing.B, c client.Client, id string) *historypb.History {
	h := &historypb.History{}
	iter := c.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(b, err)
		h.Events = append(h.Events, e)
	}
	return h
}
