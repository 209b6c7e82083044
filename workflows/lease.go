package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/collectionstate"
	"github.com/recurhq/recur/jobs"
)

// A collection leases slots of its quota to the API (jobs.Lease), so that
// a PUT of a new job starts the job's workflow without waiting for the
// collection: the API claims the name in its next batch of admissions
// (exchange), sent beside the start, and the claim takes a slot of the
// lease rather than the quota's room. The slots count as jobs until they
// are claimed or the lease is given back; a lease the API never gives
// back (its process died between a start and its claim) is looked at once
// it has run out (checkLeases): the jobs the visibility store finds started
// on the collection while it was held become reservations, which the
// collection looks at as it does those of its admissions ahead.

// leaseGrace is how long after a lease's end a lease not given back is
// looked at: the visibility store has indexed the jobs started on it by
// then.
const leaseGrace = reservationGrace

// leaseWindowSlack widens the window of start times a look at a lease asks
// the visibility store for, against the clocks of the history service and
// the worker.
const leaseWindowSlack = time.Minute

// validateLease refuses a batch of admissions into a collection that does
// not exist, before it reaches history. A deleted collection whose
// workflow runs still takes them: the jobs started on its leases are told
// they are deleted (collectionstate.Admit), and a lease given back lets its
// workflow end without looking at it.
func (c *collection) validateLease(ctx workflow.Context, _ jobs.LeaseRequest) error {
	if c.ledger.Deleted() {
		return nil
	}
	return c.validateExists(ctx, jobs.DeleteCollectionRequest{})
}

// exchange gives back the leases req releases, admits its claims in order
// (admitEach) and grants a new lease when it wants one. It counts
// once toward continuing as new, whatever it carries: its events are two.
func (c *collection) exchange(ctx workflow.Context, req jobs.LeaseRequest) (jobs.LeaseAnswer, error) {
	c.updates++
	if len(req.Release) > 0 {
		// The API gives a lease back once its claims are answered: none
		// of them is in this batch, whose admissions by name the slots
		// given back make room for.
		c.apply(ctx, collectionstate.Release{Leases: req.Release})
	}
	answers, err := c.admitEach(ctx, req.Claims)
	if err != nil {
		return jobs.LeaseAnswer{}, err
	}
	out := jobs.LeaseAnswer{Answers: answers}
	if req.Want > 0 && c.ledger.Exists() {
		out.Grant = c.apply(ctx, collectionstate.Grant{Want: req.Want}).Granted
	}
	out.Leased = c.ledger.LeasedSlots()
	return out, nil
}

// checkLeases looks at each lease not given back once it has run out, a
// grace after its end. Each turn blocks: it waits for a lease, or for the
// soonest one's time or a change of the leases, or it looks, in an
// activity.
func (c *collection) checkLeases(ctx workflow.Context) {
	for {
		if !c.ledger.Leasing() {
			if err := workflow.Await(ctx, c.ledger.Leasing); err != nil {
				return
			}
			continue
		}
		soonest := c.ledger.SoonestLease()
		if wait := soonest.Until.Add(leaseGrace).Sub(workflow.Now(ctx)); wait > 0 {
			edits := c.leaseEdits
			if _, err := workflow.AwaitWithTimeout(ctx, wait, func() bool { return c.leaseEdits != edits }); err != nil {
				return
			}
			continue
		}
		if err := c.lookAtLease(ctx, soonest); err != nil {
			return
		}
	}
}

// lookAtLease asks the visibility store, in an activity, for the jobs of
// the collection started while lease h was held, and hands apply what it
// found (collectionstate.LeaseLooked). It returns an error once the workflow is
// cancelled.
func (c *collection) lookAtLease(ctx workflow.Context, h jobs.HeldLease) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	req := jobs.LeasedJobsRequest{Collection: c.ledger.Key(),
		Since: h.Granted.Add(-leaseWindowSlack), Until: h.Until.Add(leaseWindowSlack)}
	var found []string
	err := workflow.ExecuteActivity(actx, acts.LeasedJobs, req).Get(ctx, &found)
	c.apply(ctx, collectionstate.LeaseLooked{Lease: h.ID, Found: found, Failed: err != nil})
	if err != nil {
		workflow.GetLogger(ctx).Warn("look at the jobs started on a lease not given back; again later", "error", err)
	}
	return ctx.Err()
}
