package store

import (
	"context"
	"errors"
	"hash/fnv"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/jobs"
)

// update runs a named update on a running workflow and returns its
// PutResult.
func (s *Store) update(ctx context.Context, workflowID, name string, arg any) (jobs.PutResult, error) {
	var res jobs.PutResult
	err := s.updateInto(ctx, workflowID, name, arg, &res)
	return res, err
}

// Temporal refuses more than a few updates in flight on one workflow
// (history.maxInFlightUpdates, 10 by default) and concurrent ones stall
// each other; a burst of PUTs into one collection would time out. So this
// process lets at most updateSlots updates run on a workflow at once,
// using striped semaphores keyed by workflow ID (bounded memory).
const (
	updateStripes = 256
	updateSlots   = 4
)

// updateSemaphore is the slots: a stripe of updateSlots for the workflow
// IDs of each hash.
type updateSemaphore [updateStripes]chan struct{}

func newUpdateSemaphore() *updateSemaphore {
	var sem updateSemaphore
	for i := range sem {
		sem[i] = make(chan struct{}, updateSlots)
	}
	return &sem
}

// enter waits for a slot on workflowID's stripe; leave gives it back.
func (sem *updateSemaphore) enter(ctx context.Context, workflowID string) (leave func(), err error) {
	h := fnv.New32a()
	h.Write([]byte(workflowID))
	slot := sem[h.Sum32()%updateStripes]
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// updateInto runs a named update and decodes its result into result.
func (s *Store) updateInto(ctx context.Context, workflowID, name string, arg, result any) error {
	opts := updateOptions(name, arg)
	opts.WorkflowID = workflowID
	return s.sending(ctx, workflowID, func(ctx context.Context) error {
		return retrying(ctx, aborted, func() error {
			opts.UpdateID = uuid.NewString()
			err := s.updateRunning(ctx, opts, result)
			return s.lateOutcome(ctx, err, workflowID, opts.UpdateID, result)
		})
	})
}

// sending waits for one of workflowID's update slots, then makes send,
// the calls that send an update to it, with the priority writePriority
// gives a write, in a context the caller's going away does not end
// (jobs.Send): the slot and any raise are held until the calls end, the
// caller gone or not, as the update is in flight until then.
func (s *Store) sending(ctx context.Context, workflowID string, send func(context.Context) error) error {
	leave, err := s.updates.enter(ctx, workflowID)
	if err != nil {
		return err
	}
	err = jobs.Send(ctx, func(ctx context.Context) error {
		defer leave()
		defer s.priority.raise(ctx, workflowID)()
		return send(ctx)
	})
	s.noteSkew(ctx, err)
	return err
}

// updateRunning sends the update to the workflow's current run.
func (s *Store) updateRunning(ctx context.Context, opts client.UpdateWorkflowOptions, result any) error {
	if done, err := s.updateRemembered(ctx, opts, result); done {
		return err
	}
	return s.updateRun(ctx, opts, result)
}

// updateRemembered sends the update to the run of opts.WorkflowID this
// process last saw running (runs.go), if any: an update that names no
// run makes the history service read which run is current from its
// database. It is not done when no run is remembered or that run has
// ended (forgotten then), and the current run is the caller's to update.
// An ended run took none of the update: Temporal refuses updates to a
// closed run, and the job and collection workflows finish every update
// they took before they end.
func (s *Store) updateRemembered(ctx context.Context, opts client.UpdateWorkflowOptions, result any) (done bool, err error) {
	run, ok := s.runs.get(opts.WorkflowID)
	if !ok {
		return false, nil
	}
	opts.RunID = run
	if err := s.updateRun(ctx, opts, result); !WorkflowMissing(err) {
		return true, err
	}
	s.runs.forget(opts.WorkflowID, run)
	return false, nil
}

// updateRun sends the update opts describe and waits for its result.
func (s *Store) updateRun(ctx context.Context, opts client.UpdateWorkflowOptions, result any) error {
	handle, err := s.temporal.UpdateWorkflow(ctx, opts)
	if err != nil {
		return err
	}
	return s.updateResult(ctx, opts.WorkflowID, handle, result)
}

// lateOutcome returns err, the outcome of sending the update updateID to
// workflowID's current run for a request, unless the request's time
// (ctx's deadline) ran out first: the workflow may have taken the update
// before its deadline (jobs.Deadline), and then it happens, even if its
// outcome (a DELETE's, which waits for its word to its collection) comes
// later. Answered 503, its client would be told it had not. So it asks
// for the update's outcome until jobs.OutcomeGrace after that deadline:
// the result of an update taken in time, or the workflow's refusal of one
// it came to past its deadline (jobs.CodeNotTaken). When neither comes,
// or the server never had the update, err stands.
func (s *Store) lateOutcome(ctx context.Context, err error, workflowID, updateID string, result any) error {
	// Temporal may answer that the call's deadline passed a moment before
	// ctx's own timer fires: the error says it, not ctx.
	if !deadlineExceeded(err) {
		return err
	}
	late, cancel := pastDeadline(ctx)
	defer cancel()
	handle := s.temporal.GetWorkflowUpdateHandle(client.GetWorkflowUpdateHandleOptions{
		WorkflowID: workflowID, UpdateID: updateID,
	})
	outcome := s.updateResult(late, workflowID, handle, result)
	if outcome != nil && (Unreachable(outcome) || WorkflowMissing(outcome)) {
		return err
	}
	return outcome
}

// lateAcceptance is lateOutcome for an update whose request waits for its
// acceptance only (a collection's operation, whose update may complete
// long after): it sends the update opts describe again, under its ID,
// until jobs.OutcomeGrace after the request's deadline. Temporal gives
// back the update it has under that ID, accepted or refused; one it never
// had reaches the workflow past its deadline, which refuses it
// (jobs.CodeNotTaken). When the server cannot be reached, or the workflow
// is gone, err stands.
func (s *Store) lateAcceptance(ctx context.Context, err error, opts client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	if !deadlineExceeded(err) {
		return nil, err
	}
	late, cancel := pastDeadline(ctx)
	defer cancel()
	h, again := s.temporal.UpdateWorkflow(late, opts)
	if again != nil && (Unreachable(again) || WorkflowMissing(again)) {
		return nil, err
	}
	return h, again
}

// pastDeadline is a context that ends jobs.OutcomeGrace after ctx's
// deadline (sending's context always has one), for the outcome of an
// update sent before it.
func pastDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, _ := ctx.Deadline()
	return context.WithDeadline(context.WithoutCancel(ctx), deadline.Add(jobs.OutcomeGrace))
}

// updateResult decodes the update's result into result and remembers the
// run that took it, which runs: it has just answered. A handle made from
// an update's ID (lateOutcome) may not know its run.
func (s *Store) updateResult(ctx context.Context, workflowID string, handle client.WorkflowUpdateHandle, result any) error {
	if err := handle.Get(ctx, result); err != nil {
		return err
	}
	if run := handle.RunID(); run != "" {
		s.runs.put(workflowID, run)
	}
	changed(ctx, workflowID, handle.RunID())
	return nil
}

// retryPause is the pause between two tries of a call retrying repeats.
const retryPause = 25 * time.Millisecond

// retrying calls f until it succeeds, fails otherwise than again says,
// or ctx ends, retryPause between tries; it returns f's last error.
func retrying(ctx context.Context, again func(error) bool, f func() error) error {
	return backingOff(ctx, again, retryPause, retryPause, f)
}

// retryingTransient calls f, a raw call of Temporal's WorkflowService (one
// the SDK has no method for), with the retries the SDK gives its own
// calls: while Temporal is unavailable or refuses for a moment, again after
// a pause that doubles from 50 ms up to a second, until ctx ends.
func retryingTransient(ctx context.Context, f func() error) error {
	return backingOff(ctx, transient, 50*time.Millisecond, time.Second, f)
}

// backingOff calls f until it succeeds, fails otherwise than again says,
// or ctx ends, with a pause between tries that doubles from first up to
// most; it returns f's last error.
func backingOff(ctx context.Context, again func(error) bool, first, most time.Duration, f func() error) error {
	for pause := first; ; pause = min(2*pause, most) {
		err := f()
		if err == nil || !again(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// aborted reports whether the server aborted an update it had handed to a
// workflow task that then failed: typically the workflow tried to close
// while more messages arrived (UnhandledCommand). The update did not
// happen; sending it again is safe.
func aborted(err error) bool {
	var notReady *serviceerror.WorkflowNotReady
	return errors.As(err, &notReady)
}

// updateOptions are those of a named update whose caller waits for its
// result.
func updateOptions(name string, arg any) client.UpdateWorkflowOptions {
	return client.UpdateWorkflowOptions{UpdateName: name, Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted}
}

// updateWithStart runs a named update on a workflow, starting it first if
// it is not running, and returns a PutResult.
func (s *Store) updateWithStart(ctx context.Context, start client.StartWorkflowOptions, workflow string, input any, name string, arg any) (jobs.PutResult, error) {
	var res jobs.PutResult
	err := s.updateWithStartInto(ctx, start, workflow, input, name, arg, &res)
	return res, err
}

// updateWithStartInto is updateWithStart for any result type. While the
// run it last saw runs, it updates that run alone: update-with-start,
// too, makes the history service read the current run.
func (s *Store) updateWithStartInto(ctx context.Context, start client.StartWorkflowOptions, workflow string, input any, name string, arg, result any) error {
	start.TaskQueue = jobs.TaskQueue
	start.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
	update := updateOptions(name, arg)
	update.WorkflowID = start.ID
	return s.sending(ctx, start.ID, func(ctx context.Context) error {
		return retrying(ctx, aborted, func() error {
			update.UpdateID = uuid.NewString()
			err := s.updateOrStart(ctx, start, workflow, input, update, result)
			return s.lateOutcome(ctx, err, start.ID, update.UpdateID, result)
		})
	})
}

// updateOrStart sends update to the run of start.ID this process last saw
// running, or else with start, and waits for its result.
func (s *Store) updateOrStart(ctx context.Context, start client.StartWorkflowOptions, workflow string, input any, update client.UpdateWorkflowOptions, result any) error {
	if done, err := s.updateRemembered(ctx, update, result); done {
		return err
	}
	op := s.temporal.NewWithStartWorkflowOperation(start, workflow, input)
	handle, err := s.temporal.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions:          update,
	})
	if err != nil {
		return err
	}
	return s.updateResult(ctx, start.ID, handle, result)
}
