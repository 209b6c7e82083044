package jobs

import (
	"context"
	"time"
)

// Send makes send, the call that sends an update to a workflow, in a
// context with ctx's values and deadline (sendBound from now when it has
// none) but not its cancellation, and returns what it returns, or ctx's
// error once ctx ends first, the call going on. Temporal's history service, once it has admitted an update
// to a workflow whose worker holds it, hands the workflow task that
// delivers it straight to the matching service within the same call (a
// speculative task, written nowhere else): a call canceled between the two
// leaves that task in no queue until its sticky schedule-to-start timeout
// (5 s by default, 5 minutes on recur dev), the update admitted, and
// every later write to the workflow and every timer it has due waiting
// behind it. So a caller that goes away (an HTTP client that hangs up, an
// activity canceled) does not cancel an update it has sent: the update,
// which the server may already hold, runs to its end, and only the caller
// stops waiting for it. The deadline still ends the call: it falls in that
// window only when it comes within the moment after the update is sent.
func Send[T any](ctx context.Context, send func(context.Context) (T, error)) (T, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(sendBound)
	}
	type result struct {
		value T
		err   error
	}
	done := make(chan result, 1)
	go func() {
		sctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
		v, err := send(sctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.value, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// sendBound bounds an update sent for a caller with no deadline.
const sendBound = time.Minute
