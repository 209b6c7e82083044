package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/recurhq/recur/jobs"
)

// CollectionOperation runs one of Azure's long-running operations on a
// collection (delete, enable, disable) as a named update of its workflow,
// and waits up to wait for its end. It ends once every job has taken the
// change (a GET of the job shows it), which takes a workflow task of each
// job: a delete's update completes then, an enable's or a disable's in the
// task that takes it, naming the message to the jobs it waits for
// (jobs.OperationResult). running is true, with the operation's ID
// (AwaitOperation), when it runs on past the wait. Refusals (a missing
// collection, a failed If-Match) come from the update's validator and
// return at once. An update the workflow accepted in time whose
// acceptance comes back past the request's deadline is the operation's
// all the same (lateAcceptance).
func (s *Store) CollectionOperation(ctx context.Context, k jobs.Key, name string, arg any, wait time.Duration) (op string, running bool, err error) {
	id := k.CollectionWorkflowID()
	if err := s.admissions.flush(ctx, s, k); err != nil {
		return "", false, err
	}
	opts := client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: name, Args: []any{arg},
		WaitForStage: client.WorkflowUpdateStageAccepted}
	var h client.WorkflowUpdateHandle
	if err := s.sending(ctx, id, func(ctx context.Context) error {
		return retrying(ctx, aborted, func() (err error) {
			opts.UpdateID = uuid.NewString()
			if h, err = s.temporal.UpdateWorkflow(ctx, opts); err != nil {
				h, err = s.lateAcceptance(ctx, err, opts)
			}
			return err
		})
	}); err != nil {
		return "", false, notFoundAs(err, CollectionNamed(k))
	}
	if ctx.Err() != nil {
		// Accepted, with the request's time over (lateAcceptance): the
		// operation runs, and its client asks after it.
		return operationID(h.RunID(), h.UpdateID()), true, nil
	}
	running, err = s.awaitOperation(ctx, h, wait)
	return operationID(h.RunID(), h.UpdateID()), running, notFoundAs(err, CollectionNamed(k))
}

// AwaitOperation waits up to wait for the end of k's collection's
// operation op (CollectionOperation's ID): running is true when it runs
// on, and its error is the operation's when it failed.
func (s *Store) AwaitOperation(ctx context.Context, k jobs.Key, op string, wait time.Duration) (running bool, err error) {
	runID, updateID, ok := parseOperationID(op)
	if !ok {
		return false, jobs.NotFound("operation " + op)
	}
	h := s.temporal.GetWorkflowUpdateHandle(client.GetWorkflowUpdateHandleOptions{
		WorkflowID: k.CollectionWorkflowID(), RunID: runID, UpdateID: updateID})
	running, err = s.awaitOperation(ctx, h, wait)
	return running, notFoundAs(err, "operation "+op)
}

// awaitOperation waits up to d for the end of the operation of an
// accepted update: its update's completion, and then the delivery of the
// message to the jobs it names. Its error is the update's when it failed;
// running when it runs on.
func (s *Store) awaitOperation(ctx context.Context, h client.WorkflowUpdateHandle, d time.Duration) (running bool, err error) {
	deadline := time.Now().Add(d)
	var res jobs.OperationResult
	if running, err = awaitUpdate(ctx, h, d, &res); running || err != nil || res.Tell == 0 {
		return running, err
	}
	return s.awaitTold(ctx, h.WorkflowID(), h.RunID(), res.Tell, time.Until(deadline))
}

// awaitUpdate waits up to d for an accepted update to complete, its result
// decoded into result: its error when it failed, running when it runs on.
func awaitUpdate(ctx context.Context, h client.WorkflowUpdateHandle, d time.Duration, result any) (running bool, err error) {
	wait, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err = h.Get(wait, result)
	if err != nil && ctx.Err() == nil && (wait.Err() != nil || deadlineExceeded(err)) {
		// The wait ran out, not the request: the operation runs on. The
		// wait's deadline travels to Temporal with the poll, which may
		// answer that it passed a moment before the wait's own timer
		// does; a Temporal that is down answers the operation's poll.
		return true, nil
	}
	return false, err
}

// The delivery of a collection's message to its jobs is read from the
// run's memo (jobs.MemoTold), which no call waits on: awaitTold asks
// again after a pause that doubles from toldFirstPause to toldMaxPause, so
// that an operation on a few jobs, told within milliseconds, answers 200
// within DefaultOperationWait, and a poll of a long one asks a few times
// a second.
const (
	toldFirstPause = 10 * time.Millisecond
	toldMaxPause   = 250 * time.Millisecond
)

// awaitTold waits up to d until the run of the collection's workflow
// workflowID has delivered its message n to the jobs, or has closed (its
// messages all delivered): running when it has not by then.
func (s *Store) awaitTold(ctx context.Context, workflowID, run string, n int, d time.Duration) (running bool, err error) {
	wait, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for pause := toldFirstPause; ; pause = min(2*pause, toldMaxPause) {
		told, err := s.told(wait, workflowID, run, n)
		switch {
		case err != nil && ctx.Err() == nil && (wait.Err() != nil || deadlineExceeded(err)):
			return true, nil
		case err != nil || told:
			return false, err
		}
		select {
		case <-wait.Done():
			return ctx.Err() == nil, ctx.Err()
		case <-time.After(pause):
		}
	}
}

// told reports whether the run of the collection's workflow workflowID
// has delivered its message n to the jobs.
func (s *Store) told(ctx context.Context, workflowID, run string, n int) (bool, error) {
	resp, err := s.temporal.DescribeWorkflowExecution(ctx, workflowID, run)
	if err != nil {
		return false, err
	}
	info := resp.GetWorkflowExecutionInfo()
	switch st := info.GetStatus(); st {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return true, nil
	default:
		// Terminated, say: its jobs may not all have been told.
		return false, fmt.Errorf("the collection's workflow %s ended (%s) before it told its jobs", workflowID, st)
	}
	p, ok := info.GetMemo().GetFields()[jobs.MemoTold]
	if !ok {
		return false, nil
	}
	var told int
	if err := s.dataConverter().FromPayload(p, &told); err != nil {
		return false, err
	}
	return told >= n, nil
}

// deadlineExceeded reports whether err says a deadline passed: the
// context's, or Temporal's answer that the call's deadline did.
func deadlineExceeded(err error) bool {
	var deadline *serviceerror.DeadlineExceeded
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &deadline) ||
		grpcstatus.Code(err) == codes.DeadlineExceeded
}

// An operation's ID names the update and the run of the collection's
// workflow it went to: a collection deleted and created again is another
// run, and the ID must not reach the new one.
func operationID(runID, updateID string) string { return runID + "." + updateID }

// parseOperationID splits an operation ID; anything but two UUIDs is none
// recur made.
func parseOperationID(op string) (runID, updateID string, ok bool) {
	runID, updateID, ok = strings.Cut(op, ".")
	if !ok || uuid.Validate(runID) != nil || uuid.Validate(updateID) != nil {
		return "", "", false
	}
	return runID, updateID, true
}
