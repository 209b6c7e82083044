package activities

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/jobs"
)

// tellsInFlight bounds the updates TellJobs has in flight. Each takes a
// workflow task of its job, queued on the worker's task queue ahead of
// the collection's own tasks: more in flight tell no faster on a busy
// server (the updates' writes queue in its database) and make the
// collection's next write wait behind them.
const tellsInFlight = 4

// lowerTimeout bounds the call that sets a job's priority back after it
// was told.
const lowerTimeout = 10 * time.Second

// tellPause is the first pause before a job's update is sent again after
// the server aborted it (its workflow was closing, or continuing as new).
const tellPause = 25 * time.Millisecond

// TellJobs is an activity of the collection workflow: it tells each of
// its jobs what the collection did, as an update of the job's workflow
// (jobs.UpdateCollectionChanged), and returns once every job shows the
// change, in its memo too: the update completes in the workflow task that
// writes it. A job whose workflow has ended is gone and skipped. It asks
// Temporal through the worker's own client: the job workflows are in the
// worker's namespace, whatever Temporal client Workflow actions are given.
func (a *Activities) TellJobs(ctx context.Context, req jobs.TellJobsRequest) error {
	c := activity.GetClient(ctx)
	return fanOut(len(req.Jobs), tellsInFlight, func(i int) error {
		k := req.Collection
		k.Job = req.Jobs[i]
		return tellJob(ctx, c, k.JobWorkflowID(), req)
	})
}

// fanOut calls f(i) for each i below n, at most limit at once, and joins
// their errors: the collection's activities ask Temporal about, or tell,
// each of many jobs.
func fanOut(n, limit int, f func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = f(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// tellJob sends one job the change; a job whose workflow has ended is
// gone. The job runs at jobs.PriorityWrite while it is told: the
// collection's operation waits for every job's workflow task, which
// would otherwise queue behind those of the jobs a burst has made due,
// and a collection whose operations wait that long refuses the next
// (Temporal takes a few updates in flight on one workflow). It costs the
// job two calls and two history events a tell; the raise failing only
// leaves the tell at the default priority.
func tellJob(ctx context.Context, c client.Client, workflowID string, req jobs.TellJobsRequest) error {
	ns := activity.GetInfo(ctx).WorkflowNamespace
	if jobs.SetPriority(ctx, c.WorkflowService(), ns, workflowID, "", jobs.PriorityWrite) == nil {
		defer func() {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lowerTimeout)
			defer cancel()
			_ = jobs.SetPriority(lctx, c.WorkflowService(), ns, workflowID, "", 0)
		}()
	}
	opts := client.UpdateWorkflowOptions{WorkflowID: workflowID, UpdateID: req.UpdateID,
		UpdateName: jobs.UpdateCollectionChanged, Args: []any{req.Change},
		WaitForStage: client.WorkflowUpdateStageCompleted}
	err := jobs.Send(ctx, func(ctx context.Context) error {
		return untilReady(ctx, func() error {
			h, err := c.UpdateWorkflow(ctx, opts)
			if err == nil {
				err = h.Get(ctx, nil)
			}
			return err
		})
	})
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return nil
	}
	return err
}

// untilReady sends an update (send) again while the server aborts it: it
// went to a run that was closing, and the next run takes it.
func untilReady(ctx context.Context, send func() error) error {
	for pause := tellPause; ; pause = min(2*pause, time.Second) {
		err := send()
		var notReady *serviceerror.WorkflowNotReady
		if !errors.As(err, &notReady) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}
