package worker

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
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
	if info.HeartbeatTimeout <= 0 || info.IsLocalActivity {
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
	return i.Next.ExecuteActivity(ctx, in)
}
