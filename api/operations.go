package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

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
// collection (delete, enable, disable; store.CollectionOperation): the
// answer is 200 when it completes within the operation wait, and
// otherwise 202 with a Location to poll, as ARM's long-running
// operations do.
func (s *Server) collectionOperation(ctx context.Context, c *gin.Context, k jobs.Key, name string, arg any) error {
	op, running, err := s.store.CollectionOperation(ctx, k, name, arg, s.operationWait)
	return answerOperation(c, k, op, running, err)
}

// getOperation answers the Location of a 202: 202 again while the
// operation runs, and once it has ended what the operation would have
// answered had it ended in time.
func (s *Server) getOperation(ctx context.Context, c *gin.Context, k jobs.Key) error {
	op := c.Param("operationId")
	running, err := s.store.AwaitOperation(ctx, k, op, operationPollWait)
	return answerOperation(c, k, op, running, err)
}

// answerOperation answers for the operation op: 200 when it ended, its
// error when it failed, 202 with its Location and Retry-After when it
// runs on.
func answerOperation(c *gin.Context, k jobs.Key, op string, running bool, err error) error {
	switch {
	case err != nil:
		return err
	case running:
		c.Header("Location", baseURL(c)+k.CollectionID()+"/operations/"+op+"?api-version="+APIVersion)
		c.Header("Retry-After", operationRetryAfter)
		c.Status(http.StatusAccepted)
		return nil
	}
	c.Status(http.StatusOK)
	return nil
}
