package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/internal/peer"
)

// createSchedules creates one schedule per name, every -every, firing at
// the offset of its index past each period, like recur's jobs, from the
// first minute on if there is one. It returns the names it created.
func (f *firing) createSchedules(ctx context.Context, names []string, first time.Time) ([]string, error) {
	return parallel(names, func(i int, name string) error {
		_, err := f.temporal.ScheduleClient().Create(ctx, client.ScheduleOptions{
			ID: name,
			Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{
				{Every: f.cfg.every, Offset: offset(i, len(names), f.cfg.every)},
			}, StartAt: first},
			Action: peer.Action(name, f.sink.target("peer", name)),
		})
		if err != nil {
			return fmt.Errorf("create schedule %s: %w", name, err)
		}
		return nil
	})
}

// deleteSchedules deletes the schedules; one already gone is not an error.
func (f *firing) deleteSchedules(ctx context.Context, names []string) error {
	_, err := parallel(names, func(_ int, name string) error { return peer.DeleteSchedule(ctx, f.temporal, name) })
	return err
}

// creators is how many jobs or schedules are created at once.
const creators = 8

// parallel calls do for every name, creators at a time, and returns the
// names for which it succeeded, in order, and the first error.
func parallel(names []string, do func(i int, name string) error) ([]string, error) {
	var wg sync.WaitGroup
	failed := make([]error, len(names))
	next := make(chan int)
	for range creators {
		wg.Go(func() {
			for i := range next {
				failed[i] = do(i, names[i])
			}
		})
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	var ok []string
	var first error
	for i, err := range failed {
		if err == nil {
			ok = append(ok, names[i])
		} else if first == nil {
			first = err
		}
	}
	return ok, first
}
