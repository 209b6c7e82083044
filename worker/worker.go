// Package worker registers recur's workflows and activities under their
// stable names on a Temporal worker.
package worker

import (
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/workflows"
)

// New returns the worker of jobs.TaskQueue with every workflow and
// activity registered. It polls for workflow and activity tasks: an
// occurrence's actions are activities of its job's workflow on that queue
// (workflows/occurrence.go), which the server may hand back with the
// workflow task that scheduled them (eager execution, unless opts disable
// it). With acts.Attempts, it also polls that registry's queue, where
// the first attempts this process started and handed off are awaited. The
// caller starts and stops it.
func New(c client.Client, acts *activities.Activities, opts sdkworker.Options) sdkworker.Worker {
	w := sdkworker.New(c, jobs.TaskQueue, Options(opts))
	Register(w, acts)
	if acts.Attempts == nil {
		return w
	}
	return &pair{Worker: w, attempts: Attempts(c, acts, opts)}
}

// Attempts returns the worker of acts.Attempts's queue: activities only,
// polled by this process alone.
func Attempts(c client.Client, acts *activities.Activities, opts sdkworker.Options) sdkworker.Worker {
	opts = Options(opts)
	opts.DisableWorkflowWorker = true
	w := sdkworker.New(c, acts.Attempts.Queue(), opts)
	w.RegisterActivity(acts)
	return w
}

// pair is the worker of jobs.TaskQueue and that of its process's attempts,
// started and stopped together.
type pair struct {
	sdkworker.Worker
	attempts sdkworker.Worker
}

func (p *pair) Start() error {
	if err := p.attempts.Start(); err != nil {
		return err
	}
	if err := p.Worker.Start(); err != nil {
		p.attempts.Stop()
		return err
	}
	return nil
}

func (p *pair) Run(interruptCh <-chan any) error {
	if err := p.Start(); err != nil {
		return err
	}
	<-interruptCh
	p.Stop()
	return nil
}

// Stop stops the workflow worker first: it starts no attempt after the
// attempts worker stopped awaiting them.
func (p *pair) Stop() {
	p.Worker.Stop()
	p.attempts.Stop()
}

// Options returns opts as recur's worker needs them: actions' failure
// messages kept among their encrypted details (failureMessages), and long
// attempts heartbeating (heartbeats), each heartbeat sent when it is made:
// the SDK would otherwise hold one back for up to 80% of the heartbeat
// timeout, leaving a late server too little slack.
func Options(opts sdkworker.Options) sdkworker.Options {
	opts.Interceptors = append(opts.Interceptors, &failureMessages{}, &heartbeats{})
	opts.MaxHeartbeatThrottleInterval = jobs.ActionHeartbeatTimeout / 2
	return opts
}

// Register registers recur's workflows on r under the names of package
// jobs and its activities under their method names: names are a wire
// contract, which the recorded histories of workflows/testdata hold.
func Register(r sdkworker.Registry, acts *activities.Activities) {
	r.RegisterWorkflowWithOptions(workflows.Collection, workflow.RegisterOptions{Name: jobs.CollectionWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.Job, workflow.RegisterOptions{Name: jobs.JobWorkflowName})
	// Under their method names: workflow code names them by methods of a
	// nil *activities.Activities, which the SDK resolves to those names
	// in a worker and in a replayer alike (a replayer knows no aliases).
	r.RegisterActivity(acts)
}
