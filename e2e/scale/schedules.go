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
}

func scheduleID(i int) string { return fmt.Sprintf("sched-%05d", i) }

func (*schedules) name() string { return "Schedules" }

func (*schedules) prepare(context.Context, int) error { return nil }

// define creates schedule i, or replaces its spec and action when it
// exists: hourly, first due at start.
func (s *schedules) define(ctx context.Context, i int, start time.Time) error {
	id := scheduleID(i)
	spec := client.ScheduleSpec{
		Intervals: []client.ScheduleIntervalSpec{{Every: time.Hour, Offset: start.Sub(start.Truncate(time.Hour))}},
		StartAt:   start.Add(-time.Second),
	}
	action := peer.Action(id, s.sink.target(i))
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

// remove deletes the n schedules; one already gone is not an error.
func (s *schedules) remove(ctx context.Context, n int) error {
	failed := make([]error, n)
	each(ctx, s.workers, 0, n, func(i int) { failed[i] = peer.DeleteSchedule(ctx, s.temporal, scheduleID(i)) })
	return errors.Join(failed...)
}
