// Package worker registers recur's workflows and activities under their
// stable names on a Temporal worker.
package worker

import (
	"sync"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/workflows"
)

// Worker is recur's worker: one SDK worker per task queue of recur's,
// each with the options' pollers and limits.
type Worker struct {
	workers []sdkworker.Worker
}

// New returns the workers of jobs.TaskQueue and jobs.RunTaskQueue with
// every workflow and activity registered on both: runs started before
// runs had a queue of their own still finish on the jobs' queue. The
// caller starts and stops it.
func New(c client.Client, acts *activities.Activities, opts sdkworker.Options) *Worker {
	w := &Worker{}
	for _, q := range []string{jobs.TaskQueue, jobs.RunTaskQueue} {
		sw := sdkworker.New(c, q, opts)
		Register(sw, acts)
		w.workers = append(w.workers, sw)
	}
	return w
}

// Start starts polling every task queue; when one fails to start, it
// stops the ones it started.
func (w *Worker) Start() error {
	for i, sw := range w.workers {
		if err := sw.Start(); err != nil {
			for _, started := range w.workers[:i] {
				started.Stop()
			}
			return err
		}
	}
	return nil
}

// Stop stops polling and waits for the tasks in flight, up to the
// options' stop timeout.
func (w *Worker) Stop() {
	var wg sync.WaitGroup
	for _, sw := range w.workers {
		wg.Go(sw.Stop)
	}
	wg.Wait()
}

// Register registers recur's workflows and activities on r under the
// names of package jobs: names are a wire contract.
func Register(r sdkworker.Registry, acts *activities.Activities) {
	r.RegisterWorkflowWithOptions(workflows.Collection, workflow.RegisterOptions{Name: jobs.CollectionWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.Job, workflow.RegisterOptions{Name: jobs.JobWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.Run, workflow.RegisterOptions{Name: jobs.RunWorkflowName})
	r.RegisterActivityWithOptions(acts.HTTP, activity.RegisterOptions{Name: jobs.HTTPActivityName})
	r.RegisterActivityWithOptions(acts.StorageQueue, activity.RegisterOptions{Name: jobs.StorageQueueActivity})
	r.RegisterActivityWithOptions(acts.ServiceBus, activity.RegisterOptions{Name: jobs.ServiceBusActivity})
	r.RegisterActivityWithOptions(acts.StartWorkflow, activity.RegisterOptions{Name: jobs.StartWorkflowActivity})
	r.RegisterActivityWithOptions(acts.FinishedJobRetention, activity.RegisterOptions{Name: jobs.FinishedRetentionActivity})
}
