package activities

import (
	"context"

	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

// StorageQueue puts a storageQueue action's message on its queue.
func (a *Activities) StorageQueue(ctx context.Context, in jobs.ActionInput) (jobs.HTTPResponse, error) {
	return jobs.HTTPResponse{Attempt: 1}, temporal.NewNonRetryableApplicationError("storage queue actions are not supported yet", ErrTypeInvalidAction, nil)
}
