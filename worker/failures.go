package worker

import (
	"context"
	"errors"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

// failureMessages moves the message of an action's failure into its
// details: Temporal records an activity's failure with its message in
// clear, whatever the failure converter, while details are payloads that
// recur's codec encrypts. The error keeps its type, so that retries and
// the workflow's reading of it are unchanged; its message becomes the
// type.
type failureMessages struct {
	interceptor.WorkerInterceptorBase
}

func (*failureMessages) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &failureMessagesInbound{}
	i.Next = next
	return i
}

type failureMessagesInbound struct {
	interceptor.ActivityInboundInterceptorBase
}

func (i *failureMessagesInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	result, err := i.Next.ExecuteActivity(ctx, in)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		return result, err
	}
	var resp jobs.HTTPResponse
	if appErr.HasDetails() && appErr.Details(&resp) != nil {
		return result, err // not an action's failure
	}
	resp.Message = appErr.Message()
	return result, temporal.NewApplicationErrorWithOptions(appErr.Type(), appErr.Type(), temporal.ApplicationErrorOptions{
		NonRetryable:   appErr.NonRetryable(),
		Details:        []any{resp},
		NextRetryDelay: appErr.NextRetryDelay(),
		Category:       appErr.Category(),
	})
}
