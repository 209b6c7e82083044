// Package workflows holds recur's Temporal workflows: one per job
// collection and one per job (docs/architecture.md, "The Temporal model").
//
// Running workflows replay their histories on every worker restart, so a
// change to the commands a workflow issues (their order, kind or number)
// must keep the old path for old histories: guard it with
// workflow.GetVersion and a dated change ID ("2026-12-01-overlap") declared
// in versions.go, record new histories with `go run ./e2e/recordhistories
// -tag <name>` and keep the old files in testdata, which
// TestRecordedHistoriesReplay replays; TestEveryVersionHasARecordedHistory
// fails until a recording has the new ID in effect.
package workflows

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/collectionstate"
	"github.com/recurhq/recur/jobs"
)

// maxCollectionUpdates bounds a collection workflow's history: after that
// many updates it continues as new.
const maxCollectionUpdates = 500

// Collection is the workflow that owns a job collection: its definition
// and the names of its jobs. Every definition of a job is admitted by it,
// ahead of a new job's PUT (LeaseRequest, lease.go and reservation.go) or at the job's
// request (MembershipRequest), one at a time, so quota checks are atomic
// under concurrent PUTs.
//
// Its state is a collectionstate.Ledger, which alone changes it: a
// message's handler, its validator passed, hands apply an edit, and apply
// has the ledger make it and carries out the effects it returns (the memo,
// the messages to the jobs, the search attribute of the state). The
// coroutines that carry those out (tell the jobs, write the names, look at
// the reservations and the leases, answer the admissions) keep their own
// plumbing and change the ledger only through apply too.
func Collection(ctx workflow.Context, in jobs.CollectionInput) error {
	c := &collection{}
	c.ledger = collectionstate.New(in, workflow.GetInfo(ctx).FirstRunID, &c.world)
	return c.run(ctx)
}

type collection struct {
	ledger *collectionstate.Ledger // the collection's state, which only its Apply changes
	world  ledgerWorld             // what ledger asks while it applies an edit

	// The plumbing of the run, each part written by the code that owns it.
	updates    int                     // messages taken, toward continuing as new
	membership workflow.ReceiveChannel // its jobs' MembershipRequests
	answering  int                     // admissions whose answer is on its way
	published  []byte                  // the public view last written to the memo (memo.go)
	// namesChanged holds the memo keys (jobs.JobNamesKey) whose names
	// changed since they were last written (publishNames), each once: a
	// slice, since a workflow must not range over a map.
	namesChanged []string
	// tells are the messages to every job not yet delivered, oldest
	// first: one coroutine sends them in turn, so that a disable and the
	// enable after it reach each job in that order. queued numbers them
	// in the run, from 1.
	tells  []*tell
	queued int
	// checkNow wakes checkReservations before its time: a job never
	// defined left while its name's reservation was due, or jobs found on
	// a lease were taken in (collectionstate.LookNow).
	checkNow bool
	checking bool // checkReservations waits for its activity
	holding  int  // holds of a deleted collection's reservations on their way (hold)
	// leaseEdits counts the changes of the leases, so that checkLeases
	// wakes for one.
	leaseEdits int
}

// tell is the run's message n, one change to tell the jobs named; told is
// set (through done) once each shows it, or its workflow has ended. An
// operation waits for it when awaited: its delivery is written to the
// memo (MemoTold).
type tell struct {
	n       int
	names   []string
	change  jobs.CollectionChange
	told    workflow.Future
	done    workflow.Settable
	awaited bool
}

func (c *collection) run(ctx workflow.Context) error {
	if err := c.register(ctx); err != nil {
		return err
	}
	err := workflow.Await(ctx, func() bool {
		return c.ledger.Deleted() || c.updates >= maxCollectionUpdates || workflow.GetInfo(ctx).GetContinueAsNewSuggested()
	})
	if err != nil {
		return err
	}
	// Requests received but not yet handled, and messages to the jobs not
	// yet delivered, would be lost with this run: a deleted collection
	// refuses the requests, others carry on. Answering one may let more
	// arrive.
	for {
		var req jobs.MembershipRequest
		for c.membership.ReceiveAsync(&req) {
			c.handle(ctx, req)
		}
		if err := workflow.Await(ctx, func() bool {
			// A deleted collection ends once its leases are given back or
			// looked at: a job started on one is told of the deletion.
			return workflow.AllHandlersFinished(ctx) && c.answering == 0 && len(c.tells) == 0 && len(c.namesChanged) == 0 && c.holding == 0 &&
				(!c.ledger.Deleted() || !c.ledger.Leasing())
		}); err != nil {
			return err
		}
		if c.membership.Len() == 0 {
			break
		}
	}
	if c.ledger.Deleted() {
		return nil
	}
	return workflow.NewContinueAsNewError(ctx, jobs.CollectionWorkflowName, c.ledger.Input())
}

// register sets the collection's message handlers and starts its
// coroutines. The SDK runs the updates that came with the run's first
// task as soon as their handler is set (SetUpdateHandler yields to them),
// before register goes on: what a handler reads, the membership channel
// included (admitEach), is set before the first of them.
func (c *collection) register(ctx workflow.Context) error {
	c.membership = workflow.GetSignalChannel(ctx, jobs.SignalMembership)
	if err := workflow.SetQueryHandler(ctx, jobs.QueryCollection, func() (jobs.CollectionView, error) {
		if !c.ledger.Exists() {
			return jobs.CollectionView{}, jobs.NotFound("job collection " + c.ledger.Key().Collection).ToApplicationError()
		}
		return jobs.CollectionView{Collection: c.ledger.Collection(), Jobs: c.ledger.Jobs()}, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdatePutCollection, c.put,
		workflow.UpdateHandlerOptions{Validator: inTime(c.validatePut)}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdateCollectionState, c.setState,
		workflow.UpdateHandlerOptions{Validator: inTime(c.validateSetState)}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdateDeleteCollection, c.delete,
		workflow.UpdateHandlerOptions{Validator: inTime(c.validateExists)}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdateLease, c.exchange,
		workflow.UpdateHandlerOptions{Validator: c.validateLease}); err != nil {
		return err
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			// Each turn takes one request, waiting for it.
			var req jobs.MembershipRequest
			c.membership.Receive(ctx, &req)
			c.handle(ctx, req)
		}
	})
	workflow.Go(ctx, c.sendTells)
	workflow.Go(ctx, c.publishNames)
	workflow.Go(ctx, c.checkReservations)
	workflow.Go(ctx, c.checkLeases)
	return nil
}

// handle admits or forgets a job, and answers an admission.
func (c *collection) handle(ctx workflow.Context, req jobs.MembershipRequest) {
	c.updates++
	if req.Leave {
		c.apply(ctx, collectionstate.Forget{Member: req})
		return
	}
	answer := jobs.AdmitAnswer{Seq: req.Seq, Error: c.apply(ctx, collectionstate.Admit{Member: req}).Refused}
	if answer.Error == nil {
		answer.Terms = c.ledger.Terms()
	}
	k := c.ledger.Key()
	k.Job = req.Job
	c.answering++
	f := workflow.SignalExternalWorkflow(ctx, k.JobWorkflowID(), "", jobs.SignalAdmitted, answer)
	workflow.Go(ctx, func(ctx workflow.Context) {
		if err := f.Get(ctx, nil); err != nil {
			// The job's workflow waits for the answer; it can only be
			// gone if it was terminated.
			workflow.GetLogger(ctx).Warn("answer a job's admission", "job", req.Job, "error", err)
		}
		c.answering--
	})
}

// validatePut refuses a PUT that reaches a deleted collection whose
// workflow has not ended yet. It cannot tell a PUT, which may create the
// collection again, from a PATCH, which may not: the API retries a PUT
// until the workflow has ended.
func (c *collection) validatePut(_ workflow.Context, req jobs.PutCollectionRequest) error {
	if c.ledger.Deleted() {
		return jobs.NotFound("job collection " + c.ledger.Key().Collection).ToApplicationError()
	}
	if err := c.preconditions(req.Preconditions); err != nil {
		return err
	}
	if err := req.Collection.Accept(c.ledger.Key()); err != nil {
		return toWire(err)
	}
	// SameCollection compares encoding/json's output, always the same for
	// a value (workflowcheck takes its reflect and its caches for
	// nondeterminism).
	return req.Apply.Refusal(c.ledger.Exists(), func() bool { return jobs.SameCollection(c.ledger.Collection(), req.Collection) }, //workflowcheck:ignore
		func() error { return nil })
}

// put defines or redefines the collection, by PUT or PATCH (which the API
// merges).
func (c *collection) put(ctx workflow.Context, req jobs.PutCollectionRequest) (jobs.PutResult, error) {
	c.updates++
	def, err := c.accept(ctx, req.Collection)
	if err != nil {
		return jobs.PutResult{}, err
	}
	a := c.apply(ctx, collectionstate.Define{Collection: def})
	return jobs.PutResult{Collection: c.ledger.Collection(), Created: a.Created}, a.err
}

// accept returns def accepted (normalized and validated) once, in a side
// effect (acceptOnce). validatePut has refused the definitions Accept
// refuses today before they reach history.
func (c *collection) accept(ctx workflow.Context, def jobs.Collection) (jobs.Collection, error) {
	return acceptOnce(ctx, func(workflow.Context) (jobs.Collection, error) {
		err := def.Accept(c.ledger.Key()) // normalizes def
		return def, err
	})
}

// preconditions refuses a write whose If-Match or If-None-Match the
// collection fails.
func (c *collection) preconditions(p jobs.Preconditions) error {
	if err := p.Check(c.ledger.ETag(), "job collection "+c.ledger.Key().Collection); err != nil {
		return err.ToApplicationError()
	}
	return nil
}

func (c *collection) validateExists(_ workflow.Context, req jobs.DeleteCollectionRequest) error {
	if !c.ledger.Exists() {
		return jobs.NotFound("job collection " + c.ledger.Key().Collection).ToApplicationError()
	}
	return c.preconditions(req.Preconditions)
}

func (c *collection) validateSetState(ctx workflow.Context, req jobs.CollectionStateRequest) error {
	if err := c.validateExists(ctx, jobs.DeleteCollectionRequest{}); err != nil {
		return err
	}
	if req.State != jobs.CollectionEnabled && req.State != jobs.CollectionDisabled {
		return (&jobs.Error{Code: jobs.CodeInvalidRequest, Message: "state must be Enabled or Disabled, not " + req.State}).ToApplicationError()
	}
	return nil
}

// setState enables or disables the collection and tells every job. The
// operation ends once every job is told, and the API answers 202 until
// then; its update answers at once with the message the operation waits
// for (jobs.OperationResult).
func (c *collection) setState(ctx workflow.Context, req jobs.CollectionStateRequest) (jobs.OperationResult, error) {
	c.updates++
	a := c.apply(ctx, collectionstate.SetState{State: req.State})
	if a.err != nil {
		return jobs.OperationResult{}, a.err
	}
	if workflow.GetVersion(ctx, versionOperationsAnswerAtOnce, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return jobs.OperationResult{}, a.told.Get(ctx, nil)
	}
	return jobs.OperationResult{Tell: c.await(a.tell)}, nil
}

// await marks the message n awaited by an operation and returns n; 0 when
// it has nothing to deliver (no job to tell), and the operation has ended.
func (c *collection) await(n int) int {
	for _, t := range c.tells {
		if t.n == n && len(t.names) > 0 {
			t.awaited = true
			return n
		}
	}
	return 0
}

// delete deletes every job of the collection, then the collection: its
// workflow ends once this update has answered.
func (c *collection) delete(ctx workflow.Context, _ jobs.DeleteCollectionRequest) (struct{}, error) {
	a := c.apply(ctx, collectionstate.Delete{})
	if err := a.told.Get(ctx, nil); err != nil {
		return struct{}{}, err
	}
	return struct{}{}, a.held.Get(ctx, nil)
}

// tellJobs queues change for the jobs named (a collectionstate.Tell's own
// names), behind the changes queued before it, and returns its number and
// a future set once each job shows it. A change of state or terms queued
// behind another that is not yet on its way takes its place, to the jobs
// either names: a job needs the collection's newest state and terms, not
// each one it went through, and a client that disables and enables a big
// collection again and again while its jobs are told queues one message,
// not one a job an operation.
func (c *collection) tellJobs(ctx workflow.Context, names []string, change jobs.CollectionChange) (int, workflow.Future) {
	merge := workflow.GetVersion(ctx, versionMergedTells, workflow.DefaultVersion, 1) != workflow.DefaultVersion
	if last := len(c.tells) - 1; merge && last > 0 && !change.Deleted && !c.tells[last].change.Deleted {
		t := c.tells[last]
		merged := append(slices.Clone(t.names), names...)
		slices.Sort(merged)
		t.names = slices.Compact(merged)
		t.change = change
		return t.n, t.told
	}
	f, done := workflow.NewFuture(ctx)
	c.queued++
	c.tells = append(c.tells, &tell{n: c.queued, names: names, change: change, told: f, done: done})
	return c.queued, f
}

// tellOptions are those of the TellJobs activity: a worker lost while it
// tells is found by its heartbeat, and the jobs are told again until they
// all have been.
var tellOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 10 * time.Minute,
	HeartbeatTimeout:    jobs.ActionHeartbeatTimeout,
	RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second},
	Summary:             "tell the jobs",
}

// sendTells delivers the queued messages, one after the other, each by
// one activity that tells all its jobs and ends once each shows it: a
// collection of a hundred jobs costs its history three events a message,
// not two a job, and a GET of a job after the collection's operation has
// ended shows what it did.
func (c *collection) sendTells(ctx workflow.Context) {
	ctx = workflow.WithActivityOptions(ctx, tellOptions)
	for {
		if err := workflow.Await(ctx, func() bool { return len(c.tells) > 0 }); err != nil {
			return
		}
		t := c.tells[0]
		if len(t.names) > 0 {
			req := jobs.TellJobsRequest{Collection: c.ledger.Key(), Jobs: t.names, Change: t.change,
				UpdateID: fmt.Sprintf("%s.%d", workflow.GetInfo(ctx).WorkflowExecution.RunID, t.n)}
			if err := workflow.ExecuteActivity(ctx, acts.TellJobs, req).Get(ctx, nil); err != nil {
				// It is retried until it succeeds: only the end of the run
				// cancels it.
				return
			}
		}
		c.tells = c.tells[1:]
		t.done.Set(nil, nil)
		if t.awaited {
			if err := workflow.UpsertMemo(ctx, map[string]any{jobs.MemoTold: t.n}); err != nil {
				workflow.GetLogger(ctx).Error("upsert the operations' end", "error", err)
			}
		}
	}
}
