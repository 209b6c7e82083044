package jobs

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"
)

// Send makes send, the calls that send an update to a workflow, in a
// context with ctx's values and deadline (sendBound from now when it has
// none) but not its cancellation, and returns their error, or ctx's once
// ctx is canceled first, the calls going on. Past ctx's deadline it waits
// OutcomeGrace more for their error: send may ask for the outcome of an
// update sent in time, which may have happened. Temporal's history
// service, once it has admitted an update to a workflow whose worker holds
// it, hands the workflow task that delivers it straight to the matching
// service within the same call (a speculative task, written nowhere
// else): a call canceled between the two leaves that task in no queue
// until its sticky schedule-to-start timeout (5 s by default, 5 minutes on
// recur dev), the update admitted, and every later write to the workflow
// and every timer it has due waiting behind it. So a caller that goes away
// (an HTTP client that hangs up, an activity canceled) does not cancel an
// update it has sent: the update, which the server may already hold, runs
// to its end, and only the caller stops waiting for it. What send writes,
// the caller may read once Send has returned nil. The deadline still ends
// the call: it falls in that window only when it comes within the moment
// after the update is sent. A panic of send is its error.
func Send(ctx context.Context, send func(context.Context) error) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(sendBound)
	}
	done := make(chan error, 1)
	go func() {
		defer func() {
			// A panic here would end the process; in the caller's
			// goroutine it was the caller's to recover (the API answers
			// it 500).
			if r := recover(); r != nil {
				done <- fmt.Errorf("sending an update panicked: %v\n%s", r, debug.Stack())
			}
		}()
		sctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
		done <- send(sctx)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		if ctx.Err() != context.DeadlineExceeded {
			return ctx.Err()
		}
	}
	late := time.NewTimer(time.Until(deadline.Add(OutcomeGrace)))
	defer late.Stop()
	select {
	case err := <-done:
		return err
	case <-late.C:
		return ctx.Err()
	}
}

// OutcomeGrace is how long past a caller's deadline the calls Send makes
// may ask for the outcome of an update they sent in time (the store's
// lateOutcome): within the slack the HTTP server's write timeout leaves
// after the API's request timeout.
const OutcomeGrace = 10 * time.Second

// sendBound bounds an update sent for a caller with no deadline.
const sendBound = time.Minute
