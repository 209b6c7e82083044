package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/recurhq/recur/jobs"
)

// CollectionOperation runs one of Azure's long-running operations on a
// collection (delete, enable, disable) as a named update of its workflow,
// and waits up to wait for its end. The update completes once every job
// has taken the change (a GET of the job shows it), which takes a
// workflow task of each job: running is true, with the operation's ID
// (AwaitOperation), when it runs on past the wait. Refusals (a missing
// collection, a failed If-Match) come from the update's validator and
// return at once.
func (s *Store) CollectionOperation(ctx context.Context, k jobs.Key, name string, arg any, wait time.Duration) (op string, running bool, err error) {
	id := k.CollectionWorkflowID()
	if err := s.admissions.flush(ctx, s, k); err != nil {
		return "", false, err
	}
	leave, err := s.updates.enter(ctx, id)
	if err != nil {
		return "", false, err
	}
	defer leave()
	defer s.priority.raise(ctx, id)()
	opts := client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: name, Args: []any{arg},
		WaitForStage: client.WorkflowUpdateStageAccepted}
	var h client.WorkflowUpdateHandle
	if err := retrying(ctx, aborted, func() (err error) {
		h, err = s.temporal.UpdateWorkflow(ctx, opts)
		return err
	}); err != nil {
		return "", false, notFoundAs(err, CollectionNamed(k))
	}
	running, err = awaitOperation(ctx, h, wait)
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
	running, err = awaitOperation(ctx, h, wait)
	return running, notFoundAs(err, "operation "+op)
}

// awaitOperation waits up to d for an accepted update to complete: its
// error when it failed, running when it runs on.
func awaitOperation(ctx context.Context, h client.WorkflowUpdateHandle, d time.Duration) (running bool, err error) {
	wait, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err = h.Get(wait, nil)
	if err != nil && ctx.Err() == nil && (wait.Err() != nil || deadlineExceeded(err)) {
		// The wait ran out, not the request: the operation runs on. The
		// wait's deadline travels to Temporal with the poll, which may
		// answer that it passed a moment before the wait's own timer
		// does; a Temporal that is down answers the operation's poll.
		return true, nil
	}
	return false, err
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
