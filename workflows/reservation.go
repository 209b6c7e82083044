package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/collectionstate"
	"github.com/recurhq/recur/jobs"
)

// A PUT of a new job has its collection admit the name, in an update the
// API sends (exchange, lease.go): first, or beside the start of the job's
// workflow when it claims a slot of a lease. The job carries the
// admission and defines itself in its first workflow task: a creation is
// one workflow task of the job and a share of one of its collection,
// which admits the PUTs that arrive together in one task. The
// collection reserves a name it admits that way until it knows a job holds
// it: the job does not say so (that would cost each creation a signal and
// a workflow task of each workflow), so the collection looks at the job's
// workflow once the reservation has lapsed (checkReservations). A job that
// took the admission asks to be forgotten when it ends, as one its
// collection admitted by signal does.

// reservationGrace is how long a name admitted ahead of its PUT is held
// before the collection looks whether its job holds it
// (collectionstate.ReservationGrace).
const reservationGrace = collectionstate.ReservationGrace

// reservationBatch is how long the collection lets reservations lapse
// before it looks at their jobs, so that one activity looks at those
// of many creations.
const reservationBatch = 5 * time.Second

// admitEach admits the claims of a LeaseRequest in order. A claim on a
// lease the collection holds is of a job whose workflow has started: it
// takes one of the lease's slots rather than the quota's room, and the
// name is the job's. One on none is asked ahead of its PUT: a name new to
// the collection is reserved for a grace and answered with the admission
// the PUT carries; a name it holds already is answered without one, and
// that PUT's job asks the collection itself (it is defined, or a job of
// that name may be on its way out, whose leave must come first).
func (c *collection) admitEach(ctx workflow.Context, reqs []jobs.MembershipRequest) ([]jobs.AdmitAnswer, error) {
	answers := make([]jobs.AdmitAnswer, len(reqs))
	for i, r := range reqs {
		admit := collectionstate.Admit{Member: r, ReserveUntil: workflow.Now(ctx).Add(reservationGrace)}
		a := c.apply(ctx, admit)
		if a.Refused != nil && a.Refused.Code == jobs.CodeQuotaExceeded && c.freeing() {
			// A job's leave received, or a reservation being looked at,
			// may free a slot: the API's update may come before a leave
			// that was sent before it.
			if err := workflow.Await(ctx, func() bool { return !c.freeing() }); err != nil {
				return nil, err
			}
			a = c.apply(ctx, admit)
		}
		answers[i] = jobs.AdmitAnswer{Seq: i, Error: a.Refused, Admission: a.Admitted}
		if a.Refused == nil {
			answers[i].Terms = c.ledger.Terms()
		}
	}
	return answers, nil
}

// freeing reports whether a slot may be freed at once: a membership
// request is waiting, or reservations are being looked at.
func (c *collection) freeing() bool {
	return c.membership.Len() > 0 || c.checkNow || c.checking
}

// checkReservations looks at the jobs of the reservations that lapsed,
// a few seconds' worth together (look). Each turn blocks: it waits on a
// condition false when it starts (a reservation; the batch's time, or a
// leave that asks to look at once), or it looks, in an activity, at
// reservations lapsed.
func (c *collection) checkReservations(ctx workflow.Context) {
	for {
		now := workflow.Now(ctx)
		lapsed := c.ledger.Lapsed(now)
		switch {
		case !c.ledger.Reserving():
			if err := workflow.Await(ctx, c.ledger.Reserving); err != nil {
				return
			}
		case len(lapsed) == 0 || (!c.checkNow && c.ledger.Soonest().Add(reservationBatch).After(now)):
			// With nothing lapsed, a leave's wish to look at once is spent: the
			// look it asked for has been.
			c.checkNow = false
			wait := c.ledger.Soonest().Add(reservationBatch).Sub(now)
			if _, err := workflow.AwaitWithTimeout(ctx, wait, func() bool { return c.checkNow }); err != nil {
				return
			}
		default:
			c.checkNow = false
			if err := c.look(ctx, lapsed); err != nil {
				return
			}
		}
	}
}

// look asks, in one activity, whether the jobs of the reservations lapsed run
// and are defined, and hands apply what it found (collectionstate.Looked); a look that
// fails is tried again after the grace. It returns an error once the
// workflow is cancelled.
func (c *collection) look(ctx workflow.Context, lapsed []jobs.Reservation) error {
	ids := make([]string, len(lapsed))
	for i, r := range lapsed {
		k := c.ledger.Key()
		k.Job = r.Job
		ids[i] = k.JobWorkflowID()
	}
	// An activity, not a local one: the workflow task that schedules it
	// completes at once, and the admissions that arrive while it looks
	// are answered meanwhile.
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var presence []jobs.JobPresence
	c.checking = true
	err := workflow.ExecuteActivity(actx, acts.JobPresence, ids).Get(ctx, &presence)
	c.checking = false
	if err == nil && len(presence) != len(lapsed) {
		err = temporal.NewApplicationError("job presence: answers do not match the jobs asked", "")
	}
	if err != nil {
		presence = nil
	}
	c.apply(ctx, collectionstate.Looked{Reservations: lapsed, Presence: presence})
	if err != nil {
		workflow.GetLogger(ctx).Warn("look at the jobs of reserved names; again later", "error", err)
	}
	return ctx.Err()
}

// hold tells the jobs of a deleted collection's reservations rs that they
// are deleted, in an activity that starts a job's workflow when it does
// not run yet (the PUT carrying the admission has not reached it), and
// holds each until its reservation's Until: a PUT with the admission then
// meets a deleted job and is refused, and asks its collection again, which
// is gone. TellJobs skips a workflow that does not run yet, and the PUT
// would then start one that defines the job in a collection that no
// longer exists. The future is set once every job is held; the workflow
// ends only then.
func (c *collection) hold(ctx workflow.Context, rs []jobs.Reservation) workflow.Future {
	f, done := workflow.NewFuture(ctx)
	if len(rs) == 0 {
		done.Set(nil, nil)
		return f
	}
	// Retried until it succeeds: a job that took an admission must hear
	// of the deletion, however long Temporal takes to accept the signals.
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: 10 * time.Second},
	})
	held := workflow.ExecuteActivity(actx, acts.HoldReservedNames, jobs.HoldRequest{Collection: c.ledger.Key(), Jobs: rs,
		UpdateID: workflow.GetInfo(ctx).WorkflowExecution.RunID + ".hold"})
	c.holding++
	workflow.Go(ctx, func(ctx workflow.Context) {
		err := held.Get(ctx, nil)
		c.holding--
		done.Set(nil, err)
	})
	return f
}
