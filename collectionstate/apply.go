package collectionstate

import (
	"slices"
	"time"

	"github.com/recurhq/recur/jobs"
)

// An Edit is one change of the ledger, which Apply makes: one of the
// types below.
type Edit interface{ isEdit() }

type (
	// Define defines or redefines the collection (PUT, PATCH) as
	// Collection, in its accepted form.
	Define struct{ Collection jobs.Collection }
	// SetState enables or disables it (POST enable, disable): State is
	// Enabled or Disabled.
	SetState struct{ State string }
	// Delete deletes it and its jobs.
	Delete struct{}
	// Admit admits a job's definition, Member's. A name new to the
	// collection is reserved until ReserveUntil (an admission ahead of
	// its PUT); zero for none.
	Admit struct {
		Member       jobs.MembershipRequest
		ReserveUntil time.Time
	}
	// Forget: a job leaves (deleted, past its retention, or never
	// defined).
	Forget struct{ Member jobs.MembershipRequest }
	// Looked is what a look at the reservations due found: the presence
	// of each of Reservations' jobs, nil when the look failed.
	Looked struct {
		Reservations []jobs.Reservation
		Presence     []jobs.JobPresence
	}
	// Release gives back the leases of those IDs.
	Release struct{ Leases []int }
	// Grant grants a new lease of at most Want slots.
	Grant struct{ Want int }
	// LeaseLooked is what a look at a lease not given back found: the
	// names of the jobs started on it, or that it Failed.
	LeaseLooked struct {
		Lease  int
		Found  []string
		Failed bool
	}
)

func (Define) isEdit()      {}
func (SetState) isEdit()    {}
func (Delete) isEdit()      {}
func (Admit) isEdit()       {}
func (Forget) isEdit()      {}
func (Looked) isEdit()      {}
func (Release) isEdit()     {}
func (Grant) isEdit()       {}
func (LeaseLooked) isEdit() {}

// An Effect is what the workflow must do: one of the types below, carried
// out in the order Apply returns them.
type Effect interface{ isEffect() }

type (
	// Publish writes the collection's public view to its memo (when it
	// changed since it was last written).
	Publish struct{ View jobs.CollectionView }
	// Tell tells the jobs Names the Change, behind the changes told
	// before it. Names are the effect's own.
	Tell struct {
		Names  []string
		Change jobs.CollectionChange
	}
	// UpsertState writes the collection's State to its search attribute.
	UpsertState struct{ State string }
	// Hold tells the jobs of a deleted collection's Reservations, whose
	// admissions a PUT may still carry, that they are deleted, and holds
	// each until its reservation's Until.
	Hold struct{ Reservations []jobs.Reservation }
	// NameChanged says Name joined or left the collection's names: the
	// memo key that holds it is written again.
	NameChanged struct{ Name string }
	// LookNow asks for a look at the reservations due at once, before
	// the batch's time.
	LookNow struct{}
	// LeasesChanged says the leases changed: the wait for the soonest
	// one's end starts again.
	LeasesChanged struct{}
)

func (Publish) isEffect()       {}
func (Tell) isEffect()          {}
func (UpsertState) isEffect()   {}
func (Hold) isEffect()          {}
func (NameChanged) isEffect()   {}
func (LookNow) isEffect()       {}
func (LeasesChanged) isEffect() {}

// Outcome is what an edit did, for its handler to answer.
type Outcome struct {
	Created  bool            // Define: the collection is new
	Refused  *jobs.Error     // Admit: why the job was not admitted
	Admitted *jobs.Admission // Admit with ReserveUntil: what the PUT carries
	Granted  *jobs.Lease     // Grant: the lease, nil when there was no room
}

// Apply makes e at now, and returns what it did and what follows from
// it: the public view and the names in the memo, the changes to tell the
// jobs, the state's search attribute, a look at the reservations sooner.
func (l *Ledger) Apply(e Edit, now time.Time) (Outcome, []Effect) {
	var out Outcome
	var fx effects
	switch e := e.(type) {
	case Define:
		out.Created = l.in.Collection == nil
		l.define(e.Collection, &fx)
	case SetState:
		l.in.Collection.Properties.State = e.State
		l.revise()
		fx.publish(l)
		terms := l.Terms()
		fx.tell(l.in.Jobs, jobs.CollectionChange{State: jobs.State(e.State), Terms: &terms})
		fx.add(UpsertState{State: e.State})
	case Delete:
		l.delete(now, &fx)
	case Admit:
		out.Refused, out.Admitted = l.admit(e, now, &fx)
	case Forget:
		l.forget(e.Member, now, &fx)
	case Looked:
		l.looked(e, now, &fx)
	case Release:
		fx.add(LeasesChanged{})
		l.in.Leases = slices.DeleteFunc(l.in.Leases, func(h jobs.HeldLease) bool { return slices.Contains(e.Leases, h.ID) })
	case Grant:
		out.Granted = l.grant(e.Want, now, &fx)
	case LeaseLooked:
		l.leaseLooked(e, now, &fx)
	}
	return out, fx
}

// effects are what one Apply returns, in order.
type effects []Effect

func (fx *effects) add(f Effect) { *fx = append(*fx, f) }

// publish adds the public view of the collection, if it is defined.
func (fx *effects) publish(l *Ledger) {
	if l.in.Collection != nil {
		fx.add(Publish{View: jobs.CollectionView{Collection: *l.in.Collection, Deleted: l.deleted}})
	}
}

// tell adds a Tell of its own copy of names: the collection's list
// changes in place while the jobs are told.
func (fx *effects) tell(names []string, change jobs.CollectionChange) {
	fx.add(Tell{Names: slices.Clone(names), Change: change})
}

// define makes def the definition.
func (l *Ledger) define(def jobs.Collection, fx *effects) {
	created := l.in.Collection == nil
	var before jobs.CollectionTerms
	if !created {
		before = l.Terms()
	}
	stateChanged := !created && l.in.Collection.Properties.State != def.Properties.State
	l.in.Collection = &def
	l.revise()
	fx.publish(l)
	if terms := l.Terms(); !created && (stateChanged || !before.SameMaxRecurrence(terms)) {
		// A state set by PUT or PATCH reaches the jobs, as POST enable
		// and disable do; a suspended collection's jobs are disabled.
		// New terms reach them too: a job redefined with the terms it
		// knows does not ask again. Azure's PUT and PATCH have no 202,
		// so they answer without waiting for a collection of many jobs
		// to be told; a redefinition meanwhile meets the terms before.
		change := jobs.CollectionChange{Terms: &terms}
		if stateChanged {
			change.State = jobs.JobsState(def.Properties.State)
		}
		fx.tell(l.in.Jobs, change)
	}
	fx.add(UpsertState{State: def.Properties.State})
}

// delete deletes the collection. It is gone from the start, so that no
// job joins it while its jobs are told. A name reserved whose admission a
// PUT may still carry is held rather than told: its job's workflow may not
// run yet.
func (l *Ledger) delete(now time.Time, fx *effects) {
	held := l.outstanding(now)
	names := slices.DeleteFunc(slices.Clone(l.in.Jobs), func(name string) bool {
		return slices.ContainsFunc(held, func(r jobs.Reservation) bool { return r.Job == name })
	})
	l.in.Jobs, l.in.Reserved, l.deleted = nil, nil, true
	fx.publish(l)
	fx.add(Hold{Reservations: held})
	fx.add(Tell{Names: names, Change: jobs.CollectionChange{Deleted: true}})
}

// admit admits the job of e.Member, or says why not.
func (l *Ledger) admit(e Admit, now time.Time, fx *effects) (*jobs.Error, *jobs.Admission) {
	if h := l.lease(e.Member.Lease); h != nil && e.Member.Run != "" {
		if i := slices.Index(h.Left, e.Member.Run); i >= 0 {
			h.Left = slices.Delete(h.Left, i, i+1)
			h.Slots = max(h.Slots-1, 0)
			return nil, nil
		}
	}
	if refused := l.refusal(e.Member); refused != nil {
		if l.deleted && e.Member.Lease != 0 {
			// A claim on a lease is of a job whose workflow runs.
			fx.tell([]string{e.Member.Job}, jobs.CollectionChange{Deleted: true})
		}
		return refused, nil
	}
	i, found := slices.BinarySearch(l.in.Jobs, e.Member.Job)
	if found {
		l.renew(e, now)
		return nil, nil
	}
	l.in.Jobs = slices.Insert(l.in.Jobs, i, e.Member.Job)
	fx.add(NameChanged{Name: e.Member.Job})
	if h := l.lease(e.Member.Lease); h != nil && h.Slots > 0 {
		// The API claims a name on a lease once its job's workflow
		// has started: the job holds it, and no look is needed.
		h.Slots--
		l.tellStale(*h, fx, e.Member.Job)
		return nil, nil
	}
	if e.ReserveUntil.IsZero() {
		return nil, nil
	}
	l.in.Reservations++
	l.in.Reserved = append(l.in.Reserved, jobs.Reservation{Job: e.Member.Job, Gen: l.in.Reservations, Until: e.ReserveUntil})
	return nil, &jobs.Admission{Terms: l.Terms(), Until: e.ReserveUntil, Gen: l.in.Reservations}
}

// renew keeps a reserved name for the claim e of it for a grace from now:
// the claim's job's workflow has started, or a PUT starts it, while a look
// at the reservation, begun before, may find none. Such a look finds the
// reservation renewed, and leaves it be (looked); the next look finds the
// job.
func (l *Ledger) renew(e Admit, now time.Time) {
	until := e.ReserveUntil
	if until.IsZero() {
		until = now.Add(ReservationGrace) // a job's own claim
	}
	i := slices.IndexFunc(l.in.Reserved, func(r jobs.Reservation) bool { return r.Job == e.Member.Job })
	if i < 0 || !l.in.Reserved[i].Until.Before(until) || !l.world.Has(RenewClaimedNames) {
		return
	}
	l.in.Reserved[i].Until = until
}

// forget has the job of m leave.
func (l *Ledger) forget(m jobs.MembershipRequest, now time.Time, fx *effects) {
	// A job started on a lease may leave before the claim of its name
	// comes (the name held meanwhile or not): the claim then takes its
	// slot and nothing else.
	if h := l.lease(m.Lease); h != nil && m.Run != "" && !slices.Contains(h.Left, m.Run) {
		h.Left = append(h.Left, m.Run)
	}
	if _, held := slices.BinarySearch(l.in.Jobs, m.Job); !held {
		return
	}
	// A name reserved still, whose job was never defined, may be held
	// by a job that takes the admission after the one that leaves
	// ended (its requests were on their way while the API asked the
	// admission): the reservation stays until no job may take its
	// admission, and then the reservations are looked at at once. A
	// defined job held the name itself.
	if i := slices.IndexFunc(l.in.Reserved, func(r jobs.Reservation) bool { return r.Job == m.Job }); i >= 0 {
		if !m.Defined {
			// Looking before Until could find no workflow of a PUT
			// that is on its way with the admission, and give its
			// name up.
			if !l.in.Reserved[i].Until.After(now) {
				fx.add(LookNow{})
			}
			return
		}
		l.in.Reserved = slices.Delete(l.in.Reserved, i, i+1)
	}
	l.drop(m.Job, fx)
}

// looked takes what a look at reservations found. A name whose job's
// workflow does not run, or runs deleted, is given up: a deleted job has
// left, before the name was reserved or on its way (and a leave of a name
// not held changes nothing), and its workflow runs on only until its
// handlers in flight end. One whose job is defined is the job's; one
// whose job runs undefined, or that the look could not tell, is looked at
// again after the grace. A reservation its job left, or that a claim
// renewed, while the look was on its way is left as it is: what the look
// found of it may be stale.
func (l *Ledger) looked(e Looked, now time.Time, fx *effects) {
	later := now.Add(ReservationGrace)
	for i, r := range e.Reservations {
		j := slices.IndexFunc(l.in.Reserved, func(x jobs.Reservation) bool {
			return x.Job == r.Job && x.Gen == r.Gen && x.Until.Equal(r.Until)
		})
		if j < 0 {
			continue
		}
		switch {
		case e.Presence == nil:
			l.in.Reserved[j].Until = later
		case !e.Presence[i].Running || e.Presence[i].Deleted:
			l.in.Reserved = slices.Delete(l.in.Reserved, j, j+1)
			l.drop(r.Job, fx)
		case e.Presence[i].Defined:
			l.in.Reserved = slices.Delete(l.in.Reserved, j, j+1)
		default:
			l.in.Reserved[j].Until = later
		}
	}
}

// grant grants a lease of up to want slots, at most the room left; nil
// when there is none.
func (l *Ledger) grant(want int, now time.Time, fx *effects) *jobs.Lease {
	n := want
	if room := l.room(); room != noLimit {
		n = min(n, room)
	}
	if n <= 0 {
		return nil
	}
	fx.add(LeasesChanged{})
	l.in.Leased++
	h := jobs.HeldLease{ID: l.in.Leased, Slots: n, Revision: l.in.Revision, Granted: now, Until: now.Add(LeaseTerm)}
	l.in.Leases = append(l.in.Leases, h)
	return &jobs.Lease{ID: h.ID, Slots: n, Terms: l.Terms(), Until: h.Until}
}

// leaseLooked takes what a look at a lease not given back found.
func (l *Ledger) leaseLooked(e LeaseLooked, now time.Time, fx *effects) {
	i := slices.IndexFunc(l.in.Leases, func(h jobs.HeldLease) bool { return h.ID == e.Lease })
	if i < 0 {
		return
	}
	fx.add(LeasesChanged{})
	if e.Failed {
		l.in.Leases[i].Until = now // looked at again a grace later
		return
	}
	l.adoptOrphans(l.in.Leases[i], e.Found, now, fx)
	l.in.Leases = slices.Delete(l.in.Leases, i, i+1)
}

// adoptOrphans takes in the jobs found started while lease h was held
// that the collection does not hold: each becomes a reservation due now,
// so that the collection looks at its job's workflow at once and keeps the
// name only if it runs. A deleted collection tells them they are deleted
// instead.
//
// The visibility store cannot tell the jobs started on h from those
// started meanwhile on another lease, whose claims may be on their way,
// and it lists the newest first: the look takes up to every slot leased,
// h's and the others', so that none of h's jobs is left out for another
// lease's. A job of another lease then counts twice until that lease is
// given back or looked at, which keeps the count within the quota. The
// looks of histories recorded without AdoptUpToLeased took up to h's
// slots alone, and replay so.
func (l *Ledger) adoptOrphans(h jobs.HeldLease, found []string, now time.Time, fx *effects) {
	var orphans []string
	for _, name := range found {
		if _, held := slices.BinarySearch(l.in.Jobs, name); !held && !slices.Contains(orphans, name) {
			orphans = append(orphans, name)
		}
	}
	if len(orphans) > h.Slots && !l.world.Has(AdoptUpToLeased) {
		orphans = orphans[:h.Slots]
	}
	orphans = orphans[:min(len(orphans), l.LeasedSlots())] // h's slots among them: h is still held
	if len(orphans) == 0 {
		return
	}
	if l.deleted {
		fx.tell(orphans, jobs.CollectionChange{Deleted: true})
		return
	}
	for _, name := range orphans {
		i, _ := slices.BinarySearch(l.in.Jobs, name)
		l.in.Jobs = slices.Insert(l.in.Jobs, i, name)
		fx.add(NameChanged{Name: name})
		l.in.Reservations++
		l.in.Reserved = append(l.in.Reserved, jobs.Reservation{Job: name, Gen: l.in.Reservations, Until: now})
	}
	fx.add(LookNow{})
	l.tellStale(h, fx, orphans...)
}

// tellStale tells the jobs claimed on lease h the collection's state and
// terms when they changed after the lease was granted: the jobs started
// with those of the lease, and the collection told its jobs of the change
// before it knew these ones' names.
func (l *Ledger) tellStale(h jobs.HeldLease, fx *effects, names ...string) {
	if h.Revision == l.in.Revision || len(names) == 0 {
		return
	}
	terms := l.Terms()
	fx.tell(names, jobs.CollectionChange{State: jobs.JobsState(l.in.Collection.Properties.State), Terms: &terms})
}

// revise gives the definition its next revision and ETag: it changed.
func (l *Ledger) revise() {
	l.in.Revision++
	l.in.Collection.ETag = jobs.NewETag(l.origin, l.in.Revision)
}

// drop takes the name off the collection's list.
func (l *Ledger) drop(job string, fx *effects) {
	if i, found := slices.BinarySearch(l.in.Jobs, job); found {
		l.in.Jobs = slices.Delete(l.in.Jobs, i, i+1)
		fx.add(NameChanged{Name: job})
	}
}
