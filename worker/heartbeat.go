package worker

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
)

// heartbeats keeps an action's attempt speaking to the server while it
// runs: every half of its heartbeat timeout (jobs.ActionHeartbeatTimeout),
// so that the server takes a worker that died mid-attempt for lost within
// that timeout and runs the attempt again, instead of waiting out the
// attempt's own timeout. An attempt that ends within half the timeout (most
// do) sends nothing.
type heartbeats struct {
	interceptor.WorkerInterceptorBase
}

func (*heartbeats) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &heartbeatsInbound{}
	i.Next = next
	return i
}

type heartbeatsInbound struct {
	interceptor.ActivityInboundInterceptorBase
}

func (i *heartbeatsInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	info := activity.GetInfo(ctx)
	if info.HeartbeatTimeout <= 0 { // a local activity has none
		return i.Next.ExecuteActivity(ctx, in)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(info.HeartbeatTimeout / 2)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	result, err := i.Next.ExecuteActivity(ctx, in)
	return result, cancelled(ctx, err)
}

// errCancelled is the failure of an attempt that a heartbeat found
// cancelled: its job was deleted, so its workflow asked for the
// cancellation or has already ended. Nothing reads it; it is benign, so
// that the SDK logs it at debug level rather than as an error.
var errCancelled = temporal.NewApplicationErrorWithOptions("the action was cancelled: its job was deleted", "Cancelled",
	temporal.ApplicationErrorOptions{NonRetryable: true, Category: temporal.ApplicationErrorCategoryBenign})

// cancelled returns errCancelled for an attempt that failed after the
// server cancelled it (the heartbeat's answer cancels the activity's
// context with the cause), and err otherwise: a worker that stops cancels
// the context too, with a cause of its own, and its attempt must be
// retried.
func cancelled(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	cause := context.Cause(ctx)
	var notFound *serviceerror.NotFound
	if temporal.IsCanceledError(cause) || errors.As(cause, &notFound) {
		return errCancelled
	}
	return err
}
