// Package collectionstate is a job collection's state, the ledger: the one
// place where it changes. Apply takes an edit (what happened: the
// collection defined, enabled or disabled, or deleted, a job admitted or
// gone, a look at the reservations or at a lease, leases given back or
// granted) and returns the effects the collection's workflow must carry
// out, in order (publish the view and the names, tell the jobs a change,
// hold the reservations of a deleted collection, write the state's search
// attribute, look at the reservations at once). It imports no Temporal:
// the workflow feeds it edits and carries out its effects, and a test
// drives it alone.
//
// What the ledger asks of the world while it applies an edit (which
// behaviours the workflow's history was recorded with) it asks through
// World.
package collectionstate

import (
	"errors"
	"slices"
	"time"

	"github.com/recurhq/recur/jobs"
)

// ReservationGrace is how long a name admitted ahead of its PUT is held
// before the collection looks whether its job holds it: longer than the
// API takes from the admission to starting the job's workflow, which a job
// that takes the admission checks (jobs.AdmissionMargin), and short enough
// that a PUT whose caller died in between frees its slot well within a new
// job's grace (e2e/stall).
const ReservationGrace = 20 * time.Second

// LeaseTerm is how long a lease lasts: the API starts jobs on it until
// three admission margins before its end, and a job's workflow started on
// it is running by its end, when the names claimed on it are looked at.
const LeaseTerm = 30 * time.Second

// Ledger is the collection's state: what it carries across
// continue-as-new, and whether it is deleted. Apply alone writes it; its
// readers (Exists, Terms, Jobs...) never do.
type Ledger struct {
	in      jobs.CollectionInput
	deleted bool
	origin  string // the origin of its ETags: the first run ID of the workflow's chain
	world   World
}

// New returns the ledger of a collection whose state is in, whose ETags
// come from origin.
func New(in jobs.CollectionInput, origin string, w World) *Ledger {
	return &Ledger{in: in, origin: origin, world: w}
}

// Input is what the collection carries across continue-as-new.
func (l *Ledger) Input() jobs.CollectionInput { return l.in }

// Key is the collection's key.
func (l *Ledger) Key() jobs.Key { return l.in.Key }

// Collection is the collection's definition; only when Exists, or after
// a Define.
func (l *Ledger) Collection() jobs.Collection { return *l.in.Collection }

// Jobs are the names the collection holds, sorted. The slice is the
// ledger's, which the next edit may change in place.
func (l *Ledger) Jobs() []string { return l.in.Jobs }

// Deleted reports whether the collection is deleted.
func (l *Ledger) Deleted() bool { return l.deleted }

// Reserving reports whether the collection holds reservations.
func (l *Ledger) Reserving() bool { return len(l.in.Reserved) > 0 }

// Leasing reports whether the collection holds leases.
func (l *Ledger) Leasing() bool { return len(l.in.Leases) > 0 }

// Exists reports whether the collection is defined and not deleted.
func (l *Ledger) Exists() bool {
	return l.in.Collection != nil && !l.deleted
}

// ETag is the collection's ETag, empty when it does not exist.
func (l *Ledger) ETag() string {
	if !l.Exists() {
		return ""
	}
	return l.in.Collection.ETag
}

// Terms are the collection's terms for its jobs, at its current revision.
func (l *Ledger) Terms() jobs.CollectionTerms {
	return l.in.Collection.Terms(l.in.Revision)
}

// refusal says why the collection does not admit a job's definition, nil
// when it does: the collection is gone, or full, or the job would run more
// often than it allows. A job it holds already does not count twice.
func (l *Ledger) refusal(req jobs.MembershipRequest) *jobs.Error {
	if !l.Exists() {
		return jobs.CollectionMissing(l.in.Key.Collection)
	}
	if h := l.lease(req.Lease); h != nil && h.Slots > 0 {
		// The job started on the lease's slot with the lease's terms; if
		// they changed since, the collection tells it (tellStale).
		return nil
	}
	if err := l.Terms().Check(req.ShortestGap, l.in.Key.Collection); err != nil {
		var e *jobs.Error
		if errors.As(err, &e) {
			return e
		}
		return &jobs.Error{Code: jobs.CodeInvalidRequest, Message: err.Error()}
	}
	if _, found := slices.BinarySearch(l.in.Jobs, req.Job); found {
		return nil
	}
	if l.room() == 0 {
		return jobs.CollectionFull(l.in.Key.Collection, l.in.Collection.MaxJobs())
	}
	return nil
}

// noLimit is the room of a collection without a job quota.
const noLimit = -1

// room returns how many more jobs the collection takes: its quota less
// its jobs and the slots leased; noLimit without a quota.
func (l *Ledger) room() int {
	limit := l.in.Collection.MaxJobs()
	if limit == 0 {
		return noLimit
	}
	return max(limit-len(l.in.Jobs)-l.LeasedSlots(), 0)
}

// lease returns the lease of that ID the collection holds, nil for none.
func (l *Ledger) lease(id int) *jobs.HeldLease {
	if id == 0 {
		return nil
	}
	if i := slices.IndexFunc(l.in.Leases, func(h jobs.HeldLease) bool { return h.ID == id }); i >= 0 {
		return &l.in.Leases[i]
	}
	return nil
}

// LeasedSlots counts the slots of the leases held, not yet claimed.
func (l *Ledger) LeasedSlots() int {
	n := 0
	for _, h := range l.in.Leases {
		n += h.Slots
	}
	return n
}

// SoonestLease returns the lease held that runs out first; only while
// Leasing.
func (l *Ledger) SoonestLease() jobs.HeldLease {
	return slices.MinFunc(l.in.Leases, func(a, b jobs.HeldLease) int { return a.Until.Compare(b.Until) })
}

// Lapsed returns the reservations whose Until has passed.
func (l *Ledger) Lapsed(now time.Time) []jobs.Reservation {
	var lapsed []jobs.Reservation
	for _, r := range l.in.Reserved {
		if !r.Until.After(now) {
			lapsed = append(lapsed, r)
		}
	}
	return lapsed
}

// Soonest returns the soonest Until of the reservations, only while
// Reserving: a look puts those it could not settle after the others.
func (l *Ledger) Soonest() time.Time {
	soonest := l.in.Reserved[0].Until
	for _, r := range l.in.Reserved[1:] {
		if r.Until.Before(soonest) {
			soonest = r.Until
		}
	}
	return soonest
}

// outstanding returns the reservations whose admissions a PUT may still
// carry: a job takes an admission until jobs.AdmissionMargin before its
// Until, by its own clock, which the margin allows to be that far ahead
// of the collection's or behind it.
func (l *Ledger) outstanding(now time.Time) []jobs.Reservation {
	return slices.DeleteFunc(slices.Clone(l.in.Reserved), func(r jobs.Reservation) bool { return !r.Until.After(now) })
}
