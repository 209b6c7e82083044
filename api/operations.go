package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/recurhq/recur/jobs"
)

const (
	// DefaultOperationWait is how long DELETE, enable and disable of a
	// collection wait for every job to take the change before they answer
	// 202: a collection of a few jobs answers 200, and no write of a
	// collection waits longer than a write of a job much.
	DefaultOperationWait = 150 * time.Millisecond
	// operationPollWait is how long a poll of an operation's Location
	// waits for its end before it answers 202 again: a client that polls
	// soon is answered as soon as the operation ends.
	operationPollWait = 2 * time.Second
	// operationRetryAfter is the Retry-After of an operation's 202, in
	// seconds: a job takes the change in a few milliseconds, so most
	// operations have ended by then. Azure's SDKs wait their own default
	// (30 s) when it is zero.
	operationRetryAfter = "1"
)

// collectionOperation runs one of Azure's long-running operations on a
// collection (delete, enable, disable) as a named update of its workflow.
// The update completes once every job has taken the change (a GET of the
// job shows it), which takes a workflow task of each job: the answer is
// 200 when it completes within the operation wait, and otherwise 202
// with a Location to poll, as ARM's long-running operations do. Refusals
// (a missing collection, a failed If-Match) come from the update's
// validator and answer at once.
func (s *Server) collectionOperation(ctx context.Context, c *gin.Context, k jobs.Key, name string, arg any) error {
	id := k.CollectionWorkflowID()
	if err := s.admissions.flush(ctx, s, k); err != nil {
		return err
	}
	leave, err := s.updates.enter(ctx, id)
	if err != nil {
		return err
	}
	defer leave()
	opts := client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: name, Args: []any{arg},
		WaitForStage: client.WorkflowUpdateStageAccepted}
	var h client.WorkflowUpdateHandle
	if err := retrying(ctx, aborted, func() (err error) {
		h, err = s.temporal.UpdateWorkflow(ctx, opts)
		return err
	}); err != nil {
		return notFoundAs(err, collectionNamed(k))
	}
	return notFoundAs(s.answerOperation(ctx, c, k, h, s.operationWait), collectionNamed(k))
}

// getOperation answers the Location of a 202: 202 again while the
// operation runs, and once it has ended what the operation would have
// answered had it ended in time.
func (s *Server) getOperation(ctx context.Context, c *gin.Context, k jobs.Key) error {
	op := c.Param("operationId")
	runID, updateID, ok := parseOperationID(op)
	if !ok {
		return jobs.NotFound("operation " + op)
	}
	h := s.temporal.GetWorkflowUpdateHandle(client.GetWorkflowUpdateHandleOptions{
		WorkflowID: k.CollectionWorkflowID(), RunID: runID, UpdateID: updateID})
	return notFoundAs(s.answerOperation(ctx, c, k, h, operationPollWait), "operation "+op)
}

// answerOperation waits up to d for an accepted update to complete: 200
// when it did, its error when it failed, 202 with the operation's
// Location and Retry-After when it runs on.
func (s *Server) answerOperation(ctx context.Context, c *gin.Context, k jobs.Key, h client.WorkflowUpdateHandle, d time.Duration) error {
	wait, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := h.Get(wait, nil)
	switch {
	case err != nil && ctx.Err() == nil && (wait.Err() != nil || deadlineExceeded(err)):
		// The wait ran out, not the request: the operation runs on. The
		// wait's deadline travels to Temporal with the poll, which may
		// answer that it passed a moment before the wait's own timer
		// does; a Temporal that is down answers the Location's poll.
		c.Header("Location", baseURL(c)+k.CollectionID()+"/operations/"+operationID(h.RunID(), h.UpdateID())+
			"?api-version="+APIVersion)
		c.Header("Retry-After", operationRetryAfter)
		c.Status(http.StatusAccepted)
		return nil
	case err != nil:
		return err
	}
	c.Status(http.StatusOK)
	return nil
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
