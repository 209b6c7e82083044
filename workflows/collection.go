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
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// maxCollectionUpdates bounds a collection workflow's history: after that
// many updates it continues as new.
const maxCollectionUpdates = 500

// Collection is the workflow that owns a job collection: its definition
// and the names of its jobs. Every definition of a job is admitted by it,
// ahead of a new job's PUT (AdmitRequest, reservation.go) or at the job's
// request (MembershipRequest), one at a time, so quota checks are atomic
// under concurrent PUTs.
func Collection(ctx workflow.Context, in jobs.CollectionInput) error {
	c := &collection{CollectionInput: in, firstRun: workflow.GetInfo(ctx).FirstRunID}
	return c.run(ctx)
}

type collection struct {
	jobs.CollectionInput
	firstRun   string // the first run ID of the workflow's chain, for ETags
	updates    int
	deleted    bool
	membership workflow.ReceiveChannel // its jobs' MembershipRequests
	answering  int                     // admissions whose answer is on its way
	published  []byte                  // the public view last written to the memo (memo.go)
	// namesChanged holds the memo keys (jobs.JobNamesKey) whose names
	// changed since they were last written (publishNames), each once: a
	// slice, since a workflow must not range over a map.
	namesChanged []string
	// tells are the messages to every job not yet delivered, oldest
	// first: one coroutine sends them in turn, so that a disable and the
	// enable after it reach each job in that order.
	tells []tell
	// checkNow wakes checkReservations before its time: a reservation
	// fell due at once (forget).
	checkNow bool
	checking bool // checkReservations waits for its activity
	holding  int  // holds of a deleted collection's reservations on their way (hold)
}

// tell is one change to tell the jobs named; done is set once each shows
// it (or its workflow has ended).
type tell struct {
	names  []string
	change jobs.CollectionChange
	done   workflow.Settable
}

func (c *collection) run(ctx workflow.Context) error {
	if err := c.register(ctx); err != nil {
		return err
	}
	err := workflow.Await(ctx, func() bool {
		return c.deleted || c.updates >= maxCollectionUpdates || workflow.GetInfo(ctx).GetContinueAsNewSuggested()
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
			return workflow.AllHandlersFinished(ctx) && c.answering == 0 && len(c.tells) == 0 && len(c.namesChanged) == 0 && c.holding == 0
		}); err != nil {
			return err
		}
		if c.membership.Len() == 0 {
			break
		}
	}
	if c.deleted {
		return nil
	}
	return workflow.NewContinueAsNewError(ctx, jobs.CollectionWorkflowName, c.CollectionInput)
}

func (c *collection) register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, jobs.QueryCollection, func() (jobs.CollectionView, error) {
		if c.Collection == nil || c.deleted {
			return jobs.CollectionView{}, jobs.NotFound("job collection " + c.Key.Collection).ToApplicationError()
		}
		return jobs.CollectionView{Collection: *c.Collection, Jobs: c.Jobs}, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdatePutCollection, c.put,
		workflow.UpdateHandlerOptions{Validator: c.validatePut}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdateCollectionState, c.setState,
		workflow.UpdateHandlerOptions{Validator: c.validateSetState}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdateDeleteCollection, c.delete,
		workflow.UpdateHandlerOptions{Validator: c.validateExists}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdateAdmit, c.admitAhead,
		workflow.UpdateHandlerOptions{Validator: c.validateAdmit}); err != nil {
		return err
	}
	c.membership = workflow.GetSignalChannel(ctx, jobs.SignalMembership)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var req jobs.MembershipRequest
			c.membership.Receive(ctx, &req)
			c.handle(ctx, req)
		}
	})
	workflow.Go(ctx, c.sendTells)
	workflow.Go(ctx, c.publishNames)
	workflow.Go(ctx, c.checkReservations)
	return nil
}

// handle admits or forgets a job, and answers an admission.
func (c *collection) handle(ctx workflow.Context, req jobs.MembershipRequest) {
	if req.Leave {
		c.forget(ctx, req)
		return
	}
	c.updates++
	err, _ := c.admit(req)
	answer := jobs.AdmitAnswer{Seq: req.Seq, Error: err}
	if answer.Error == nil {
		answer.Terms = c.terms()
	}
	k := c.Key
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
	if c.deleted {
		return jobs.NotFound("job collection " + c.Key.Collection).ToApplicationError()
	}
	if err := c.preconditions(req.Preconditions); err != nil {
		return err
	}
	if err := req.Collection.Accept(c.Key); err != nil {
		return toWire(err)
	}
	return nil
}

// etag is the collection's ETag, empty when it does not exist.
func (c *collection) etag() string {
	if c.Collection == nil || c.deleted {
		return ""
	}
	return c.Collection.ETag
}

// preconditions refuses a write whose If-Match or If-None-Match the
// collection fails.
func (c *collection) preconditions(p jobs.Preconditions) error {
	if err := p.Check(c.etag(), "job collection "+c.Key.Collection); err != nil {
		return err.ToApplicationError()
	}
	return nil
}

// terms are the collection's terms for its jobs, at its current revision.
func (c *collection) terms() jobs.CollectionTerms {
	return c.Collection.Terms(c.Revision)
}

// revise gives the definition its next revision and ETag: it changed.
func (c *collection) revise() {
	c.Revision++
	c.Collection.ETag = jobs.NewETag(c.firstRun, c.Revision)
}

func (c *collection) put(ctx workflow.Context, req jobs.PutCollectionRequest) (jobs.PutResult, error) {
	c.updates++
	if err := req.Collection.Accept(c.Key); err != nil {
		return jobs.PutResult{}, toWire(err)
	}
	created := c.Collection == nil
	var before jobs.CollectionTerms
	if !created {
		before = c.terms()
	}
	stateChanged := !created && c.Collection.Properties.State != req.Collection.Properties.State
	c.Collection = &req.Collection
	c.revise()
	c.publish(ctx)
	if terms := c.terms(); !created && (stateChanged || !before.SameMaxRecurrence(terms)) {
		// A state set by PUT or PATCH reaches the jobs, as POST enable
		// and disable do; a suspended collection's jobs are disabled.
		// New terms reach them too: a job redefined with the terms it
		// knows does not ask again. Azure's PUT and PATCH have no 202,
		// so they answer without waiting for a collection of many jobs
		// to be told; a redefinition meanwhile meets the terms before.
		change := jobs.CollectionChange{Terms: &terms}
		if stateChanged {
			change.State = jobs.JobsState(req.Collection.Properties.State)
		}
		c.tellJobs(ctx, c.Jobs, change)
	}
	err := workflow.UpsertTypedSearchAttributes(ctx, jobs.AttrState.ValueSet(req.Collection.Properties.State))
	return jobs.PutResult{Collection: *c.Collection, Created: created}, err
}

// admit records a job with a new definition, or refuses it: the
// collection is gone, or full, or the job would run more often than it
// allows. A job it holds already does not count twice: added says whether
// the name is new.
func (c *collection) admit(req jobs.MembershipRequest) (err *jobs.Error, added bool) {
	if c.Collection == nil || c.deleted {
		return &jobs.Error{Code: jobs.CodeCollectionMissing, Message: "job collection " + c.Key.Collection + " was not found"}, false
	}
	if err := c.terms().Check(req.ShortestGap, c.Key.Collection); err != nil {
		var e *jobs.Error
		if errors.As(err, &e) {
			return e, false
		}
		return &jobs.Error{Code: jobs.CodeInvalidRequest, Message: err.Error()}, false
	}
	i, found := slices.BinarySearch(c.Jobs, req.Job)
	if found {
		return nil, false
	}
	if limit := c.Collection.MaxJobs(); limit > 0 && len(c.Jobs) >= limit {
		return &jobs.Error{Code: jobs.CodeQuotaExceeded, Target: "properties.quota.maxJobCount",
			Message: fmt.Sprintf("job collection %s already has its maximum of %d jobs", c.Key.Collection, limit)}, false
	}
	c.Jobs = slices.Insert(c.Jobs, i, req.Job)
	c.nameChanged(req.Job)
	return nil, true
}

// forget drops a job from the collection: a DELETE's, or that of a
// finished job past its retention, or of one never defined, as the job
// asks. A name reserved still, whose job was never defined, may be held
// by a job that takes the admission after the one that asks ended (its
// requests were on their way while the API asked the admission): the
// reservation stays until no job may take its admission, and then
// checkReservations looks at once. A defined job held the name itself.
func (c *collection) forget(ctx workflow.Context, req jobs.MembershipRequest) {
	c.updates++
	if i := c.reserved(req.Job); i >= 0 {
		if !req.Defined {
			// Looking before Until could find no workflow of a PUT that
			// is on its way with the admission, and give its name up.
			if !c.Reserved[i].Until.After(workflow.Now(ctx)) {
				c.checkNow = true
			}
			return
		}
		c.Reserved = slices.Delete(c.Reserved, i, i+1)
	}
	c.drop(req.Job)
}

// drop takes the name off the collection's list.
func (c *collection) drop(job string) {
	if i, found := slices.BinarySearch(c.Jobs, job); found {
		c.Jobs = slices.Delete(c.Jobs, i, i+1)
		c.nameChanged(job)
	}
}

// nameChanged marks the memo key that holds name for publishNames.
func (c *collection) nameChanged(name string) {
	if key := jobs.JobNamesKey(name); !slices.Contains(c.namesChanged, key) {
		c.namesChanged = append(c.namesChanged, key)
	}
}

func (c *collection) validateExists(_ workflow.Context, req jobs.DeleteCollectionRequest) error {
	if c.Collection == nil || c.deleted {
		return jobs.NotFound("job collection " + c.Key.Collection).ToApplicationError()
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

// setState enables or disables the collection and tells every job.
func (c *collection) setState(ctx workflow.Context, req jobs.CollectionStateRequest) (struct{}, error) {
	c.updates++
	c.Collection.Properties.State = req.State
	c.revise()
	c.publish(ctx)
	terms := c.terms()
	told := c.tellJobs(ctx, c.Jobs, jobs.CollectionChange{State: jobs.State(req.State), Terms: &terms})
	if err := workflow.UpsertTypedSearchAttributes(ctx, jobs.AttrState.ValueSet(req.State)); err != nil {
		return struct{}{}, err
	}
	// The operation ends once every job is told: the API answers 202
	// until then.
	return struct{}{}, told.Get(ctx, nil)
}

// delete deletes every job of the collection, then the collection: its
// workflow ends once this update has answered. The collection is gone
// from the start, so that no job joins it while its jobs are told. A
// name reserved whose admission a PUT may still carry is held (hold)
// rather than told: its job's workflow may not run yet.
func (c *collection) delete(ctx workflow.Context, _ jobs.DeleteCollectionRequest) (struct{}, error) {
	held := c.outstanding(ctx)
	names := slices.DeleteFunc(slices.Clone(c.Jobs), func(name string) bool {
		return slices.ContainsFunc(held, func(r jobs.Reservation) bool { return r.Job == name })
	})
	c.Jobs, c.Reserved, c.deleted = nil, nil, true
	c.publish(ctx)
	holds := c.hold(ctx, held)
	if err := c.tellJobs(ctx, names, jobs.CollectionChange{Deleted: true}).Get(ctx, nil); err != nil {
		return struct{}{}, err
	}
	return struct{}{}, holds.Get(ctx, nil)
}

// tellJobs queues change for the jobs named, behind the changes queued
// before it, and returns a future set once each job shows it. It keeps its
// own copy of names: the collection's list changes in place (admit,
// forget) while the jobs are told.
func (c *collection) tellJobs(ctx workflow.Context, names []string, change jobs.CollectionChange) workflow.Future {
	f, done := workflow.NewFuture(ctx)
	c.tells = append(c.tells, tell{names: slices.Clone(names), change: change, done: done})
	return f
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
	for n := 1; ; n++ {
		if err := workflow.Await(ctx, func() bool { return len(c.tells) > 0 }); err != nil {
			return
		}
		t := c.tells[0]
		if len(t.names) > 0 {
			req := jobs.TellJobsRequest{Collection: c.Key, Jobs: t.names, Change: t.change,
				UpdateID: fmt.Sprintf("%s.%d", workflow.GetInfo(ctx).WorkflowExecution.RunID, n)}
			if err := workflow.ExecuteActivity(ctx, acts.TellJobs, req).Get(ctx, nil); err != nil {
				// It is retried until it succeeds: only the end of the run
				// cancels it.
				return
			}
		}
		c.tells = c.tells[1:]
		t.done.Set(nil, nil)
	}
}
