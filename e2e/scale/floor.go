package main

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// floor measures, with -floor, the least a durable write costs on the
// phase's server while the burst runs, two ways:
//
//   - a signal to a workflow whose task queue no worker polls, which
//     Temporal answers once the signal is stored, with no workflow task to
//     wait for: a write to a job needs at least as much (its update is
//     stored too, then waits for the job's task), so no design of recur's
//     writes answers faster than this at the same moment;
//   - an update to a workflow of a worker of this process, which nothing
//     else keeps busy and whose handler answers at once: the least an
//     update costs on that server at that moment. A write to a job waits
//     for a task of recur's worker, busy with the burst: what it costs
//     above this is the worker's (its slots, its sticky queue), the rest
//     the server's.
type floor struct {
	temporal client.Client
	worker   sdkworker.Worker // runs the updates' workflows; nil until start
}

// floorQueue is the task queue of the signals' workflows: nothing polls
// it, so their first workflow task waits there and the signals only
// append to their histories. floorPolledQueue is the one of the updates'
// workflows, which the floor's own worker polls.
const (
	floorQueue       = "scale-floor-unpolled"
	floorPolledQueue = "scale-floor-polled"
)

const (
	floorWorkflowName = "scale-floor-updated"
	floorUpdateName   = "floor"
)

func floorID(k int) string       { return fmt.Sprintf("scale-floor-%03d", k) }
func floorUpdateID(k int) string { return fmt.Sprintf("scale-floor-updated-%03d", k) }

// floorUpdated is the updates' workflow: it answers every update at once
// and waits for nothing else.
func floorUpdated(ctx workflow.Context) error {
	if err := workflow.SetUpdateHandler(ctx, floorUpdateName, func(workflow.Context) error { return nil }); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return false })
}

// start starts the floor's worker and the n workflows of each kind the
// floor's writes go to.
func (f *floor) start(ctx context.Context, n int) error {
	f.worker = sdkworker.New(f.temporal, floorPolledQueue, sdkworker.Options{})
	f.worker.RegisterWorkflowWithOptions(floorUpdated, workflow.RegisterOptions{Name: floorWorkflowName})
	if err := f.worker.Start(); err != nil {
		return fmt.Errorf("start the floor's worker: %w", err)
	}
	for k := range n {
		_, err := f.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: floorID(k), TaskQueue: floorQueue}, "scale-floor")
		if err != nil {
			return fmt.Errorf("start the floor's workflow %s: %w", floorID(k), err)
		}
		_, err = f.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: floorUpdateID(k), TaskQueue: floorPolledQueue}, floorWorkflowName)
		if err != nil {
			return fmt.Errorf("start the floor's workflow %s: %w", floorUpdateID(k), err)
		}
	}
	return nil
}

// close stops the floor's worker, if it started.
func (f *floor) close() {
	if f.worker != nil {
		f.worker.Stop()
	}
}

func (f *floor) signal(ctx context.Context, k int) error {
	return f.temporal.SignalWorkflow(ctx, floorID(k), "", "floor", nil)
}

func (f *floor) update(ctx context.Context, k int) error {
	h, err := f.temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   floorUpdateID(k),
		UpdateName:   floorUpdateName,
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return err
	}
	return h.Get(ctx, nil)
}
