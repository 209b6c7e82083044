package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

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

// leaseTerm is how long a lease lasts: the API starts jobs on it until
// three admission margins before its end, and a job's workflow started on
// it is running by its end, when the names claimed on it are looked at.
const leaseTerm = 30 * time.Second

// leaseGrace is how long after a lease's end a lease not given back is
// looked at: the visibility store has indexed the jobs started on it by
// then.
const leaseGrace = reservationGrace

// leaseWindowSlack widens the window of start times a look at a lease asks
// the visibility store for, against the clocks of the history service and
// the worker.
const leaseWindowSlack = time.Minute

// lease returns the lease of that ID the collection holds, nil for none.
func (l *ledger) lease(id int) *jobs.HeldLease {
	if id == 0 {
		return nil
	}
	if i := slices.IndexFunc(l.Leases, func(h jobs.HeldLease) bool { return h.ID == id }); i >= 0 {
		return &l.Leases[i]
	}
	return nil
}

// leasedSlots counts the slots of the leases held, not yet claimed.
func (l *ledger) leasedSlots() int {
	n := 0
	for _, h := range l.Leases {
		n += h.Slots
	}
	return n
}

// validateLease refuses a batch of admissions into a collection that does
// not exist, before it reaches history. A deleted collection whose
// workflow runs still takes them: the jobs started on its leases are told
// they are deleted (apply's editAdmit), and a lease given back lets its
// workflow end without looking at it.
func (c *collection) validateLease(ctx workflow.Context, _ jobs.LeaseRequest) error {
	if c.ledger.deleted {
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
		c.apply(ctx, edit{kind: editRelease, release: req.Release})
	}
	answers, err := c.admitEach(ctx, req.Claims)
	if err != nil {
		return jobs.LeaseAnswer{}, err
	}
	out := jobs.LeaseAnswer{Answers: answers}
	if req.Want > 0 && c.ledger.exists() {
		out.Grant = c.apply(ctx, edit{kind: editGrant, want: req.Want}).granted
	}
	out.Leased = c.ledger.leasedSlots()
	return out, nil
}

// tellStale tells the job claimed on lease h the collection's state and
// terms when they changed after the lease was granted: the job started
// with those of the lease, and the collection told its jobs of the change
// before it knew this one's name (apply's).
func (c *collection) tellStale(ctx workflow.Context, h *jobs.HeldLease, names ...string) {
	if h.Revision == c.ledger.Revision || len(names) == 0 {
		return
	}
	terms := c.ledger.terms()
	c.tellJobs(ctx, names, jobs.CollectionChange{State: jobs.JobsState(c.ledger.Collection.Properties.State), Terms: &terms})
}

// adoptOrphans takes in the jobs found started while lease h was held
// that the collection does not hold: each becomes a reservation due now,
// so that the collection looks at its job's workflow at once and keeps the
// name only if it runs. A deleted collection tells them they are deleted
// instead (apply's).
//
// The visibility store cannot tell the jobs started on h from those
// started meanwhile on another lease, whose claims may be on their way,
// and it lists the newest first: the look takes up to every slot leased,
// h's and the others', so that none of h's jobs is left out for another
// lease's. A job of another lease then counts twice until that lease is
// given back or looked at, which keeps the count within the quota. The
// looks of histories recorded before versionAdoptOrphans took up to h's
// slots alone, and replay so.
func (c *collection) adoptOrphans(ctx workflow.Context, h jobs.HeldLease, found []string) {
	l := &c.ledger
	var orphans []string
	for _, name := range found {
		if _, held := slices.BinarySearch(l.Jobs, name); !held && !slices.Contains(orphans, name) {
			orphans = append(orphans, name)
		}
	}
	if len(orphans) > h.Slots && workflow.GetVersion(ctx, versionAdoptOrphans, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		orphans = orphans[:h.Slots]
	}
	orphans = orphans[:min(len(orphans), l.leasedSlots())] // h's slots among them: h is still held
	if len(orphans) == 0 {
		return
	}
	if l.deleted {
		c.tellJobs(ctx, orphans, jobs.CollectionChange{Deleted: true})
		return
	}
	now := workflow.Now(ctx)
	for _, name := range orphans {
		i, _ := slices.BinarySearch(l.Jobs, name)
		l.Jobs = slices.Insert(l.Jobs, i, name)
		c.nameChanged(name)
		l.Reservations++
		l.Reserved = append(l.Reserved, jobs.Reservation{Job: name, Gen: l.Reservations, Until: now})
	}
	c.checkNow = true
	c.tellStale(ctx, &h, orphans...)
}

// checkLeases looks at each lease not given back once it has run out, a
// grace after its end. Each turn blocks: it waits for a lease, or for the
// soonest one's time or a change of the leases, or it looks, in an
// activity.
func (c *collection) checkLeases(ctx workflow.Context) {
	for {
		leases := c.ledger.Leases
		if len(leases) == 0 {
			if err := workflow.Await(ctx, func() bool { return len(c.ledger.Leases) > 0 }); err != nil {
				return
			}
			continue
		}
		soonest := slices.MinFunc(leases, func(a, b jobs.HeldLease) int { return a.Until.Compare(b.Until) })
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
// found (editLeaseLooked). It returns an error once the workflow is
// cancelled.
func (c *collection) lookAtLease(ctx workflow.Context, h jobs.HeldLease) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	req := jobs.LeasedJobsRequest{Collection: c.ledger.Key,
		Since: h.Granted.Add(-leaseWindowSlack), Until: h.Until.Add(leaseWindowSlack)}
	var found []string
	err := workflow.ExecuteActivity(actx, acts.LeasedJobs, req).Get(ctx, &found)
	c.apply(ctx, edit{kind: editLeaseLooked, lease: h.ID, found: found, lookFailed: err != nil})
	if err != nil {
		workflow.GetLogger(ctx).Warn("look at the jobs started on a lease not given back; again later", "error", err)
	}
	return ctx.Err()
}
