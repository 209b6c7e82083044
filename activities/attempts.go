package activities

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/tracing"
)

// DefaultActionBudget is how long the local activity of an occurrence's
// first attempt waits for the target's answer before it hands the attempt
// off: long enough for most webhooks, short enough that a write arriving
// meanwhile (it waits for the workflow task the local activity holds open)
// is not kept waiting.
const DefaultActionBudget = 100 * time.Millisecond

// ErrTypeAttemptLost is the failure of an AwaitAttempt that finds no such
// attempt in its process: it expired unawaited, or the process is not the
// one that started it. The workflow takes it as it takes a lost worker.
const ErrTypeAttemptLost = "AttemptLost"

// Attempts is a worker process's registry of the first attempts it
// started in a local activity. An attempt runs in a goroutine of its own,
// not in the local activity's context: when its answer takes longer than
// the budget, the local activity returns, the attempt goes on, and an
// activity on Queue (which only this process polls) waits for its answer.
// An attempt is never cancelled to be sent again: its target may be any
// webhook, which may not honour the idempotency key.
type Attempts struct {
	budget time.Duration
	queue  string

	mu       sync.Mutex
	inFlight map[string]*heldAttempt
}

// heldAttempt is one attempt in flight, or ended and not yet collected.
type heldAttempt struct {
	done   chan struct{} // closed when resp and err are set
	resp   jobs.HTTPResponse
	err    error
	cancel context.CancelFunc
	expiry *time.Timer // drops the attempt if nobody collects it
}

// NewAttempts returns a registry whose local activities wait budget for an
// answer, with a task queue name of its own: the host, the process and a
// random suffix, so that a restarted process never polls its former
// queue (the awaits scheduled there are then found lost).
func NewAttempts(budget time.Duration) *Attempts {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &Attempts{
		budget:   budget,
		queue:    fmt.Sprintf("%s-attempts@%s-%d-%s", jobs.TaskQueue, host, os.Getpid(), hex.EncodeToString(b[:])),
		inFlight: map[string]*heldAttempt{},
	}
}

// Queue is the task queue of the process's awaits: only this process's
// attempts worker polls it (package worker).
func (r *Attempts) Queue() string { return r.queue }

// unclaimed is how long an attempt handed off, once ended, is kept for its
// await: the await is scheduled with the workflow task that took the
// hand-off and starts within jobs.ActionHeartbeatTimeout or is found lost.
const unclaimed = jobs.ActionHeartbeatTimeout + time.Minute

// start starts the attempt id with perform, or joins it when it runs
// already (a workflow task retried on this process runs its local activity
// again: the attempt is not sent twice).
func (r *Attempts) start(ctx context.Context, id string, perform func(context.Context) (jobs.HTTPResponse, error)) *heldAttempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.inFlight[id]; ok {
		if a.expiry != nil {
			a.expiry.Stop()
			a.expiry = nil
		}
		return a
	}
	// The attempt outlives the local activity: it keeps the activity's
	// values (logger, metrics, info), not its cancellation.
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a := &heldAttempt{done: make(chan struct{}), cancel: cancel}
	r.inFlight[id] = a
	go func() {
		defer cancel()
		a.resp, a.err = perform(actx)
		close(a.done)
	}()
	return a
}

// handOff keeps the attempt id for its await, and drops it (cancelled, if
// it still runs) when nobody collects it within unclaimed of its end.
func (r *Attempts) handOff(id string, a *heldAttempt, timeout time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inFlight[id] != a {
		return
	}
	a.expiry = time.AfterFunc(timeout+unclaimed, func() { r.drop(id, a) })
}

// claim returns the attempt id, if the process holds it.
func (r *Attempts) claim(id string) *heldAttempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.inFlight[id]
	if a != nil && a.expiry != nil {
		a.expiry.Stop()
		a.expiry = nil
	}
	return a
}

// drop forgets the attempt id and cancels it if it still runs.
func (r *Attempts) drop(id string, a *heldAttempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inFlight[id] == a {
		delete(r.inFlight, id)
	}
	a.cancel()
}

// running counts the attempts the registry holds.
func (r *Attempts) running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.inFlight)
}

// FirstAttempt is a local activity: it makes the first attempt of an
// occurrence's main action and returns its answer when it comes within the
// budget, the occurrence then costing its workflow a single task. Past the
// budget it returns where the attempt goes on running (the job workflow
// then awaits it with AwaitAttempt), so that the workflow task, and the
// writes that wait for it, are held no longer. Without a registry it
// declines, sending nothing.
func (a *Activities) FirstAttempt(ctx context.Context, in jobs.FirstAttemptInput) (jobs.FirstAttempt, error) {
	var perform func(context.Context) (jobs.HTTPResponse, error)
	var timeout time.Duration
	var occurrence, action string
	var key jobs.Key
	var nominal time.Time
	switch {
	case in.HTTP != nil:
		perform = func(ctx context.Context) (jobs.HTTPResponse, error) { return a.HTTP(ctx, *in.HTTP) }
		timeout, occurrence, action = in.HTTP.Timeout, in.HTTP.OccurrenceID, in.HTTP.ActionName
		key, nominal = in.HTTP.Key, in.HTTP.Nominal
	case in.Action != nil:
		perform, timeout = a.performer(*in.Action), in.Action.Timeout
		occurrence, action = in.Action.OccurrenceID, in.Action.ActionName
		key, nominal = in.Action.Key, in.Action.Nominal
	default:
		return jobs.FirstAttempt{}, temporal.NewNonRetryableApplicationError("first attempt without an action", ErrTypeInvalidAction, nil)
	}
	if a.Tracer != nil {
		// Every occurrence comes here once, whether this worker makes
		// its first attempt or declines: its span is the trace's root,
		// from the time it was due to its first attempt's start or
		// hand-off; its attempts are its children wherever they run.
		span := tracing.StartOccurrence(ctx, a.Tracer, key.JobWorkflowID(), occurrence, nominal)
		defer span.End()
	}
	r := a.Attempts
	if r == nil || r.budget <= 0 {
		return jobs.FirstAttempt{Declined: true}, nil
	}
	info := activity.GetInfo(ctx)
	// The run ID keeps apart two runs of one occurrence ID: a job deleted
	// and created again.
	id := info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID + "/" + occurrence + "/" + action
	at := r.start(ctx, id, perform)
	budget := time.NewTimer(r.budget)
	defer budget.Stop()
	select {
	case <-at.done:
		r.drop(id, at)
		return jobs.FirstAttempt{Response: at.resp}, at.err
	case <-budget.C:
		r.handOff(id, at, timeout)
		return jobs.FirstAttempt{Queue: r.queue, ID: id}, nil
	case <-ctx.Done():
		// The workflow cancelled it (its job was deleted), or the worker
		// stops: the workflow task then fails and is run again elsewhere.
		r.drop(id, at)
		return jobs.FirstAttempt{}, ctx.Err()
	}
}

// performer returns the activity that performs an action other than HTTP.
func (a *Activities) performer(in jobs.ActionInput) func(context.Context) (jobs.HTTPResponse, error) {
	return func(ctx context.Context) (jobs.HTTPResponse, error) {
		if p, ok := PerformerOf(in.Spec.Type); ok {
			return p.perform(a, ctx, in)
		}
		return jobs.HTTPResponse{Attempt: 1}, temporal.NewNonRetryableApplicationError("unknown action type "+in.Spec.Type, "UnknownActionType", nil)
	}
}

// AwaitAttempt waits for the first attempt FirstAttempt handed off and
// returns its answer, as the attempt's activity would have. It runs on the
// queue of the process that holds the attempt; cancelled (its job was
// deleted, or its worker stops past its stop timeout), it cancels the
// attempt.
func (a *Activities) AwaitAttempt(ctx context.Context, in jobs.AwaitAttemptInput) (jobs.HTTPResponse, error) {
	var at *heldAttempt
	if a.Attempts != nil {
		at = a.Attempts.claim(in.ID)
	}
	if at == nil {
		return jobs.HTTPResponse{}, temporal.NewNonRetryableApplicationError("the attempt is not in this worker process", ErrTypeAttemptLost, nil)
	}
	select {
	case <-at.done:
		a.Attempts.drop(in.ID, at)
		return at.resp, at.err
	case <-ctx.Done():
		// Cancelled by the server (its job was deleted: the worker package
		// reports that as such), or its worker stops: the attempt, cut
		// short, gave no answer of the target's, and is lost as with a
		// worker that died.
		a.Attempts.drop(in.ID, at)
		return jobs.HTTPResponse{}, temporal.NewNonRetryableApplicationError("the attempt was cut short: its worker process stops", ErrTypeAttemptLost, ctx.Err())
	}
}
