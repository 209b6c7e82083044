package activities

import (
	"context"

	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

// ServiceBus sends a serviceBusQueue or serviceBusTopic action's message.
func (a *Activities) ServiceBus(ctx context.Context, in jobs.ActionInput) (jobs.HTTPResponse, error) {
	return jobs.HTTPResponse{Attempt: 1}, temporal.NewNonRetryableApplicationError("service bus actions are not supported yet", ErrTypeInvalidAction, nil)
}
