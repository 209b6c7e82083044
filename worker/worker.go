// Package worker registers recur's workflows and activities under their
// stable names on a Temporal worker.
package worker

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/workflows"
)

// New returns a worker on jobs.TaskQueue with every workflow and activity
// registered. The caller starts and stops it.
func New(c client.Client, acts *activities.Activities, opts sdkworker.Options) sdkworker.Worker {
	w := sdkworker.New(c, jobs.TaskQueue, opts)
	Register(w, acts)
	return w
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
}
