package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/recurhq/recur/jobs"
)

// A new job's PUT has the job's collection admit it before the job's
// workflow takes its definition: the collection keeps the quota. The API
// asks in one of two ways. On a slot of a lease the collection granted
// this process ahead of the PUTs (jobs.Lease) it starts the job's
// workflow at once, answers, and claims the name in the next batch
// (createOnLease, claim); without a slot (the collection had no room to
// lease, or the job's terms need the collection's word) it asks the
// collection to admit the name first and starts the workflow once
// admitted (admission). Either way the requests of concurrent PUTs into
// one collection go in one update (admissions). A list of the
// collection's jobs shows the names whose claims are on their way
// (pending).

// admission asks the job's collection to admit a new job ahead of its
// PUT, by name (a claim on no lease: jobs.LeaseRequest), so that the job defines
// itself in the workflow task that takes the PUT: without it, the job's
// workflow asks its collection by signal and waits for the answer, three
// workflow tasks of the job instead of one. It returns nil, asking nothing,
// when the collection holds the name already; the job then asks itself if
// it must. A refusal is the collection's error; a refusal for the quota
// while slots are leased, which may yet be given back, is asked again
// (ErrQuotaLeased once ctx nears its end).
func (s *Store) admission(ctx context.Context, k jobs.Key, req jobs.MembershipRequest) (*jobs.Admission, error) {
	for {
		answer, leased, err := s.admissions.ask(ctx, s, k, req)
		if err != nil {
			return nil, err
		}
		if answer.Error == nil {
			return answer.Admission, nil
		}
		if answer.Error.Code != jobs.CodeQuotaExceeded || leased == 0 {
			return nil, answer.Error
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < 2*leaseIdle {
			return nil, ErrQuotaLeased
		}
		select {
		case <-ctx.Done():
			return nil, ErrQuotaLeased
		case <-time.After(leaseIdle):
		}
	}
}

// ErrQuotaLeased refuses a PUT for its collection's quota while slots of
// it are leased to API processes, for now: one that died holds them until
// its lease runs out and the collection has looked at it.
var ErrQuotaLeased = errors.New("the job collection's quota is full, with some of it held by requests in flight; try again later")

// admitAttempt bounds one try of a batch of admissions. An update the
// collection's workflow took as it continued as new is aborted, and the
// wait for its outcome may never end: the batch is sent again, in an
// update of its own. One the first try made counts once (a name admitted
// twice counts once, a lease given back twice is given back), and is
// answered without an admission (its PUT's job asks the collection
// itself).
const admitAttempt = 10 * time.Second

// errAdmissionLost is a try of an admission that outlived admitAttempt.
var errAdmissionLost = errors.New("the collection did not answer the admission in time")

// admissionLost reports whether an admission is to be asked again.
func admissionLost(err error) bool { return aborted(err) || errors.Is(err, errAdmissionLost) }

const (
	// leaseMin is the fewest slots the API asks a lease for; it asks for
	// twice as many as the last when that one ran out, and for one per
	// PUT waiting at least.
	leaseMin = 8
	// leaseMax is the most slots it asks one lease for.
	leaseMax = 256
	// leaseIdle is how long a lease from which no slot was taken is kept
	// before it is given back, and how long a PUT refused for the quota
	// while slots are leased waits before it asks again.
	leaseIdle = 500 * time.Millisecond
	// leaseStop is how long before a lease's end the API stops taking its
	// slots: a start on the last slot is bounded to twice the admission
	// margin before the end (startJob), and has a margin of its own.
	leaseStop = 3 * jobs.AdmissionMargin
	// claimGather is how long a batch that nothing waits for (claims of
	// jobs created, leases given back) gathers more before it is sent:
	// the claims of a burst cost their collection two workflow tasks a
	// second, not one per PUT answered, and the Temporal cluster the
	// writes of those tasks; the PUTs answered before their claims.
	claimGather = 500 * time.Millisecond
)

// admissions gathers the admissions asked of each collection while one
// batch is on its way into the next (a desk per collection), and keeps the
// leases the collections granted: a burst of PUTs into a collection costs
// its workflow a few workflow tasks, not one each, and keeps within
// Temporal's bound on updates in flight on a workflow.
type admissions struct {
	mu    sync.Mutex
	desks map[string]*desk // by collection workflow ID
}

// desk is one collection's batches and leases.
type desk struct {
	open *admitBatch // the batch still taking requests, nil for none
	// lease is the lease slots are taken from, spare the next one, asked
	// for as lease runs low; each nil for none. Retired leases, no longer
	// taken from, are given back once their claims are answered (release,
	// in the next batch).
	lease, spare *heldLease
	release      []int
	asking       *admitBatch   // the batch that asks for a lease, nil for none
	refused      bool          // the last ask was granted nothing
	size         int           // the slots the next ask asks for
	granted      chan struct{} // closed (and replaced) when an ask is answered
	waiting      int           // PUTs waiting for a lease
	watching     bool          // watch runs
	// claiming counts the claims on their way by name: their jobs exist,
	// and a list shows them.
	claiming map[string]int
}

// heldLease is a lease as this process uses it.
type heldLease struct {
	jobs.Lease
	free   int       // slots not taken
	taking int       // slots taken whose claims are unanswered
	last   time.Time // when the last slot was taken, or the lease granted
	// abandoned leases are never given back: a claim on one failed, so
	// its job's workflow may run while the collection does not know its
	// name, and the collection looks at the lease once it runs out.
	abandoned bool
}

// usable reports whether a slot may be taken from h now.
func (h *heldLease) usable(now time.Time) bool {
	return h != nil && h.free > 0 && now.Before(h.Until.Add(-leaseStop))
}

// admitBatch is the requests sent together, and their answer once done
// is closed. A batch a PUT waits for, or one that asks for a lease, is
// urgent: it is sent without gathering more.
type admitBatch struct {
	req    jobs.LeaseRequest
	answer jobs.LeaseAnswer
	err    error
	done   chan struct{}
	urgent chan struct{}
	hurry  bool // urgent is closed
}

// hurryUp sends b without gathering more (a.mu held).
func (b *admitBatch) hurryUp() {
	if !b.hurry {
		b.hurry = true
		close(b.urgent)
	}
}

// desk returns the desk of the collection workflow id (a.mu held).
func (a *admissions) desk(id string) *desk {
	if a.desks == nil {
		a.desks = map[string]*desk{}
	}
	d := a.desks[id]
	if d == nil {
		d = &desk{size: leaseMin, granted: make(chan struct{})}
		a.desks[id] = d
	}
	return d
}

// batch returns the open batch of the collection workflow id, opening one
// and sending it on its way if there is none (a.mu held).
func (a *admissions) batch(s *Store, id string, d *desk) *admitBatch {
	if d.open == nil {
		d.open = &admitBatch{done: make(chan struct{}), urgent: make(chan struct{})}
		go a.send(s, id, d, d.open)
	}
	return d.open
}

// ask adds req to the open batch of k's collection and returns its answer,
// with the slots the collection holds leased after it. A collection that
// does not exist refuses it (CollectionMissing).
func (a *admissions) ask(ctx context.Context, s *Store, k jobs.Key, req jobs.MembershipRequest) (jobs.AdmitAnswer, int, error) {
	id := k.CollectionWorkflowID()
	a.mu.Lock()
	b := a.batch(s, id, a.desk(id))
	b.hurryUp()
	i := b.add(req)
	a.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		return jobs.AdmitAnswer{}, 0, ctx.Err()
	}
	return b.outcome(k, i)
}

// add puts req in b and returns its index (a.mu held).
func (b *admitBatch) add(req jobs.MembershipRequest) int {
	req.Seq = len(b.req.Claims)
	b.req.Claims = append(b.req.Claims, req)
	return req.Seq
}

// outcome returns the answer to b's request i once b is done, with the
// slots the collection holds leased after it, or the batch's error; a
// collection whose workflow does not run refuses it (CollectionMissing).
func (b *admitBatch) outcome(k jobs.Key, i int) (jobs.AdmitAnswer, int, error) {
	switch {
	case IsNotFound(b.err):
		return jobs.AdmitAnswer{Error: jobs.CollectionMissing(k.Collection)}, 0, nil
	case b.err != nil:
		return jobs.AdmitAnswer{}, 0, b.err
	}
	return b.answer.Answers[i], b.answer.Leased, nil
}

// take takes a slot of the lease k's collection granted this process,
// asking for a lease when it has none with a slot free, and for the next
// one ahead when a quarter of its slots are left. ok is false when the
// collection granted none (it had no room) or could not be asked: the PUT
// then asks for its admission by name, whose answer says why.
func (a *admissions) take(ctx context.Context, s *Store, k jobs.Key) (h *heldLease, ok bool) {
	if s.slotWaits != nil {
		defer func(began time.Time) { s.slotWaits.Observe(time.Since(began).Seconds()) }(time.Now())
	}
	id := k.CollectionWorkflowID()
	a.mu.Lock()
	defer a.mu.Unlock()
	d := a.desk(id)
	for {
		now := time.Now()
		if !d.lease.usable(now) && d.spare != nil {
			if d.lease != nil {
				a.retire(s, id, d, d.lease)
			}
			d.lease, d.spare = d.spare, nil
		}
		if h := d.lease; h.usable(now) {
			h.free--
			h.taking++
			h.last = now
			if 4*h.free < h.Slots && d.spare == nil {
				a.askLease(s, id, d)
			}
			return h, true
		}
		if d.lease != nil {
			a.retire(s, id, d, d.lease)
		}
		d.waiting++
		a.askLease(s, id, d)
		granted := d.granted
		a.mu.Unlock()
		select {
		case <-granted:
		case <-ctx.Done():
		}
		a.mu.Lock()
		d.waiting--
		if ctx.Err() != nil || d.refused && !d.lease.usable(time.Now()) && d.spare == nil {
			return nil, false
		}
	}
}

// askLease has the open batch ask for a lease, for d.size slots and one
// per PUT waiting at least, unless one on its way asks already, and sends
// it at once: the next lease is wanted before this one runs dry (a.mu
// held).
func (a *admissions) askLease(s *Store, id string, d *desk) {
	if d.asking == nil {
		d.asking = a.batch(s, id, d)
	}
	d.asking.req.Want = min(max(d.asking.req.Want, d.size, d.waiting), leaseMax)
	d.asking.hurryUp()
}

// claim claims the name of req's job, whose workflow started on a slot of
// h, in the next batch, and handles its answer when it comes: a refusal
// (the collection's workflow has ended since, or the lease was looked at
// already and the quota is full) deletes the job again; a claim with no
// answer abandons the lease, which the collection looks at once it runs
// out, and finds the job.
func (a *admissions) claim(s *Store, k jobs.Key, req jobs.MembershipRequest, h *heldLease) {
	id := k.CollectionWorkflowID()
	req.Lease = h.ID
	a.mu.Lock()
	d := a.desk(id)
	b := a.batch(s, id, d)
	i := b.add(req)
	if d.claiming == nil {
		d.claiming = map[string]int{}
	}
	d.claiming[req.Job]++
	a.mu.Unlock()
	go func() {
		<-b.done
		answer, _, err := b.outcome(k, i)
		kept := err == nil
		refused := answer.Error
		if refused != nil && refused.Code == jobs.CodeCollectionMissing && !IsNotFound(b.err) {
			refused = nil // a deleted collection whose workflow runs tells the job itself
		}
		if refused != nil {
			err := s.undoStart(k)
			kept = err == nil
			s.log.Warn("a job created on a lease was refused by its collection, and deleted", "job", k.JobID(),
				"refusal", refused.Message, "error", err)
		}
		a.mu.Lock()
		if d.claiming[req.Job]--; d.claiming[req.Job] == 0 {
			delete(d.claiming, req.Job)
		}
		a.mu.Unlock()
		a.claimed(s, k, h, kept)
	}()
}

// flush retires this process's leases of k's collection and waits until
// the claims it has sent or queued are answered, hurrying the batch that
// holds them: a write of the collection that follows then meets the jobs
// this process created a moment ago (it tells them of a new state, or
// deletes them), and the jobs created after it start with its terms.
func (a *admissions) flush(ctx context.Context, s *Store, k jobs.Key) error {
	id := k.CollectionWorkflowID()
	for {
		a.mu.Lock()
		d := a.desks[id]
		if d != nil {
			// The write may change the terms the leases carry: new jobs
			// take a lease granted after it.
			for _, h := range []*heldLease{d.lease, d.spare} {
				if h != nil {
					a.retire(s, id, d, h)
				}
			}
		}
		pending := d != nil && len(d.claiming) > 0
		if pending && d.open != nil {
			d.open.hurryUp()
		}
		a.mu.Unlock()
		if !pending {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// pendingClaims returns the names of k's collection whose claims are on
// their way, sorted.
func (a *admissions) pendingClaims(k jobs.Key) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	d := a.desks[k.CollectionWorkflowID()]
	if d == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(d.claiming))
}

// giveBack returns a slot of h taken and not used (take's).
func (a *admissions) giveBack(s *Store, k jobs.Key, h *heldLease) {
	a.mu.Lock()
	defer a.mu.Unlock()
	h.free++
	a.settle(s, k.CollectionWorkflowID(), h)
}

// claimed records that the claim of a slot of h was answered, or failed
// or never sent (ok false): a lease with a failed claim is never given
// back.
func (a *admissions) claimed(s *Store, k jobs.Key, h *heldLease, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !ok {
		h.abandoned = true
	}
	a.settle(s, k.CollectionWorkflowID(), h)
}

// settle counts a slot of h taken as settled: a lease retired (no longer
// the desk's lease or spare) is given back in the next batch once none of
// its slots is unsettled (a.mu held).
func (a *admissions) settle(s *Store, id string, h *heldLease) {
	h.taking--
	if d := a.desk(id); h.taking == 0 && d.lease != h && d.spare != h {
		a.giveBackLease(s, id, d, h)
	}
}

// retire stops taking slots from h, and gives it back once its claims are
// answered; the next lease asks for twice the slots when h ran out, half
// when most of h was left (a.mu held).
func (a *admissions) retire(s *Store, id string, d *desk, h *heldLease) {
	if d.lease == h {
		d.lease = nil
	}
	if d.spare == h {
		d.spare = nil
	}
	switch {
	case h.free == 0:
		d.size = min(2*d.size, leaseMax)
	case 2*h.free > h.Slots:
		d.size = max(d.size/2, leaseMin)
	}
	if h.taking == 0 {
		a.giveBackLease(s, id, d, h)
	}
}

// giveBackLease puts h in the next batch's leases given back, unless it
// was abandoned (a.mu held).
func (a *admissions) giveBackLease(s *Store, id string, d *desk, h *heldLease) {
	if h.abandoned {
		return
	}
	d.release = append(d.release, h.ID)
	a.batch(s, id, d)
}

// watch retires the desk's lease once it is idle for leaseIdle or reaches
// its last moment for a slot, and the spare with it when idle, so that the
// collection has their slots back; a spare left then becomes the lease.
// It returns when the desk has no lease; one runs per desk at most.
func (a *admissions) watch(s *Store, id string, d *desk) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if d.watching {
		return
	}
	d.watching = true
	defer func() { d.watching = false }()
	for d.lease != nil {
		h := d.lease
		now := time.Now()
		wake := h.last.Add(leaseIdle)
		if stop := h.Until.Add(-leaseStop); stop.Before(wake) {
			wake = stop
		}
		if now.Before(wake) {
			a.mu.Unlock()
			time.Sleep(wake.Sub(now))
			a.mu.Lock()
			continue
		}
		idle := !now.Before(h.last.Add(leaseIdle))
		a.retire(s, id, d, h)
		if d.spare != nil && idle {
			a.retire(s, id, d, d.spare)
		}
		d.lease, d.spare = d.spare, nil
	}
}

// send waits for a turn on the collection's workflow (a batch no PUT
// waits for gathers more for claimGather first), closes the batch to new
// requests and sends it, with the leases to give back. It outlives the
// requests that wait for it (any of them may leave), for at most
// RequestTimeout.
func (a *admissions) send(s *Store, id string, d *desk, b *admitBatch) {
	defer close(b.done)
	select {
	case <-b.urgent:
	case <-time.After(claimGather):
	}
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	leave, err := s.updates.enter(ctx, id)
	a.mu.Lock()
	if d.open == b {
		d.open = nil
	}
	if err == nil {
		b.req.Release, d.release = d.release, nil
	}
	req := b.req
	a.mu.Unlock()
	var answer jobs.LeaseAnswer
	if err == nil {
		answer, err = a.exchange(ctx, s, id, req)
		leave()
	}
	b.answer, b.err = answer, err
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil && !IsNotFound(err) {
		// Given back again in the next batch: the collection may not
		// have had this one. A collection whose workflow has ended holds
		// no lease.
		d.release = append(d.release, req.Release...)
	}
	if d.asking != b {
		return
	}
	d.asking = nil
	d.refused = answer.Grant == nil
	if g := answer.Grant; g != nil {
		h := &heldLease{Lease: *g, free: g.Slots, last: time.Now()}
		switch {
		case d.lease.usable(time.Now()):
			d.spare = h
		default:
			if d.lease != nil {
				a.retire(s, id, d, d.lease)
			}
			d.lease = h
			go a.watch(s, id, d)
		}
	}
	close(d.granted)
	d.granted = make(chan struct{})
}

// exchange sends one batch as the lease update.
func (a *admissions) exchange(ctx context.Context, s *Store, id string, req jobs.LeaseRequest) (jobs.LeaseAnswer, error) {
	opts := updateOptions(jobs.UpdateLease, req)
	opts.WorkflowID = id
	var answer jobs.LeaseAnswer
	err := retrying(ctx, admissionLost, func() error {
		actx, cancel := context.WithTimeout(ctx, admitAttempt)
		defer cancel()
		err := s.updateRunning(actx, opts, &answer)
		if err != nil && actx.Err() != nil && ctx.Err() == nil {
			return errAdmissionLost
		}
		return err
	})
	if err == nil && len(answer.Answers) != len(req.Claims) {
		err = fmt.Errorf("collection %s answered %d admissions of %d", id, len(answer.Answers), len(req.Claims))
	}
	return answer, err
}
