package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/internal/peer"
)

// schedules is the subject of the peer's phase: native Temporal
// Schedules, through the Temporal client, each
// starting the peer's workflow (internal/peer) hourly. What a user of
// Schedules does for each of recur's operations: create or update for
// PUT, describe for GET, a page of ListSchedules for a job list, and a
// page of the schedule's started workflows (TemporalScheduledById) for
// history.
type schedules struct {
	temporal  client.Client
	namespace string
	sink      *sink
	workers   int // for remove
	writes    int // the writes' own schedules, for remove
}

func scheduleID(i int) string { return fmt.Sprintf("sched-%05d", i) }

func (*schedules) name() string { return "Schedules" }

func (*schedules) prepare(context.Context, int) error { return nil }

// define creates schedule i, or replaces its spec and action when it
// exists: hourly, first due at start.
func (s *schedules) define(ctx context.Context, i int, start time.Time) error {
	return s.put(ctx, scheduleID(i), s.sink.target(i), start)
}

// put creates schedule id, or replaces its spec and action when it
// exists: hourly, first due at start, posting to target.
func (s *schedules) put(ctx context.Context, id, target string, start time.Time) error {
	spec := client.ScheduleSpec{
		Intervals: []client.ScheduleIntervalSpec{{Every: time.Hour, Offset: start.Sub(start.Truncate(time.Hour))}},
		StartAt:   start.Add(-time.Second),
	}
	action := peer.Action(id, target)
	_, err := s.temporal.ScheduleClient().Create(ctx, client.ScheduleOptions{ID: id, Spec: spec, Action: action})
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return err
	}
	return s.temporal.ScheduleClient().GetHandle(ctx, id).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			sched := in.Description.Schedule
			sched.Spec, sched.Action = &spec, action
			return &client.ScheduleUpdate{Schedule: &sched}, nil
		},
	})
}

func (s *schedules) get(ctx context.Context, i int) error {
	_, err := s.temporal.ScheduleClient().GetHandle(ctx, scheduleID(i)).Describe(ctx)
	return err
}

// listFirst reads the first page of the namespace's schedules: they are
// in no collection.
func (s *schedules) listFirst(ctx context.Context, _ int) error {
	_, err := s.listPage(ctx, nil)
	return err
}

func (s *schedules) listPage(ctx context.Context, token []byte) (*workflowservice.ListSchedulesResponse, error) {
	return s.temporal.WorkflowService().ListSchedules(ctx, &workflowservice.ListSchedulesRequest{
		Namespace: s.namespace, MaximumPageSize: pageSize, NextPageToken: token})
}

func (s *schedules) history(ctx context.Context, i int) error {
	_, err := s.temporal.WorkflowService().ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: s.namespace, PageSize: pageSize,
		Query: fmt.Sprintf("TemporalScheduledById = '%s'", scheduleID(i))})
	return err
}

// listPages lists the first perCollection schedules, a page at a time.
func (s *schedules) listPages(ctx context.Context, rec *recorder) (pages, items int) {
	var token []byte
	for items < perCollection && ctx.Err() == nil {
		var page *workflowservice.ListSchedulesResponse
		if err := rec.timed(func() (err error) { page, err = s.listPage(ctx, token); return err }); err != nil {
			break
		}
		pages++
		items += len(page.Schedules)
		if token = page.NextPageToken; len(token) == 0 {
			break
		}
	}
	return pages, items
}

// remove deletes the n schedules and the writes' own; one already gone is
// not an error.
func (s *schedules) remove(ctx context.Context, n int) error {
	failed := make([]error, n+s.writes)
	each(ctx, s.workers, 0, n+s.writes, func(i int) {
		id := scheduleID(i)
		if i >= n {
			id = writeID(i - n)
		}
		failed[i] = peer.DeleteSchedule(ctx, s.temporal, id)
	})
	return errors.Join(failed...)
}

// writeID is the ID of the writes' schedule k; it posts to the sink under
// that name, which the sink counts apart from the burst's.
func writeID(k int) string { return fmt.Sprintf("w-%03d", k) }

func (s *schedules) prepareWrites(ctx context.Context, n int, start time.Time) error {
	s.writes = n
	for k := range n {
		if err := s.redefineW(ctx, k, start); err != nil {
			return err
		}
	}
	return nil
}

func (s *schedules) redefineW(ctx context.Context, k int, start time.Time) error {
	return s.put(ctx, writeID(k), s.sink.Target(writeID(k)), start)
}

func (s *schedules) deleteW(ctx context.Context, k int) error {
	return s.temporal.ScheduleClient().GetHandle(ctx, writeID(k)).Delete(ctx)
}

func (s *schedules) pauseW(ctx context.Context, k int, paused bool) error {
	h := s.temporal.ScheduleClient().GetHandle(ctx, writeID(k))
	if paused {
		return h.Pause(ctx, client.SchedulePauseOptions{})
	}
	return h.Unpause(ctx, client.ScheduleUnpauseOptions{})
}

func (s *schedules) runW(ctx context.Context, k int) error {
	return s.temporal.ScheduleClient().GetHandle(ctx, writeID(k)).Trigger(ctx, client.ScheduleTriggerOptions{})
}

// disableGroup has no counterpart: Schedules are in no collection, and
// pausing a hundred of them is a hundred of pauseW.
func (s *schedules) disableGroup(context.Context, bool) error { return errNoCounterpart }

// listAcross is a page of the namespace's schedules, as listFirst.
func (s *schedules) listAcross(ctx context.Context) error { return s.listFirst(ctx, 0) }
