package main

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"
)

// floor measures, with -floor, the least a durable write costs on the
// phase's server while the burst runs: a signal to a workflow whose task
// queue no worker polls, which Temporal answers once the signal is stored,
// with no workflow task to wait for. A write to a job needs at least as
// much (its update is stored too, then waits for the job's task), so no
// design of recur's writes answers faster than this at the same moment.
type floor struct {
	temporal client.Client
}

// floorQueue is the task queue of the floor's workflows: nothing polls it,
// so their first workflow task waits there and the signals only append to
// their histories.
const floorQueue = "scale-floor-unpolled"

func floorID(k int) string { return fmt.Sprintf("scale-floor-%03d", k) }

// start starts the n workflows the floor's signals go to.
func (f *floor) start(ctx context.Context, n int) error {
	for k := range n {
		_, err := f.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: floorID(k), TaskQueue: floorQueue}, "scale-floor")
		if err != nil {
			return fmt.Errorf("start the floor's workflow %s: %w", floorID(k), err)
		}
	}
	return nil
}

func (f *floor) signal(ctx context.Context, k int) error {
	return f.temporal.SignalWorkflow(ctx, floorID(k), "", "floor", nil)
}
