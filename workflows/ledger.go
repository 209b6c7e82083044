package workflows

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// ledger is the collection's state: what it carries across continue-as-new,
// and whether it is deleted. apply alone writes it, with its helpers
// revise and drop.
type ledger struct {
	jobs.CollectionInput
	deleted bool
}

// exists reports whether the collection is defined and not deleted.
func (l *ledger) exists() bool {
	return l.Collection != nil && !l.deleted
}

// etag is the collection's ETag, empty when it does not exist.
func (l *ledger) etag() string {
	if !l.exists() {
		return ""
	}
	return l.Collection.ETag
}

// terms are the collection's terms for its jobs, at its current revision.
func (l *ledger) terms() jobs.CollectionTerms {
	return l.Collection.Terms(l.Revision)
}

// refusal says why the collection does not admit a job's definition, nil
// when it does: the collection is gone, or full, or the job would run more
// often than it allows. A job it holds already does not count twice.
func (l *ledger) refusal(req jobs.MembershipRequest) *jobs.Error {
	if !l.exists() {
		return &jobs.Error{Code: jobs.CodeCollectionMissing, Message: "job collection " + l.Key.Collection + " was not found"}
	}
	if h := l.lease(req.Lease); h != nil && h.Slots > 0 {
		// The job started on the lease's slot with the lease's terms; if
		// they changed since, the collection tells it (tellStale).
		return nil
	}
	if err := l.terms().Check(req.ShortestGap, l.Key.Collection); err != nil {
		var e *jobs.Error
		if errors.As(err, &e) {
			return e
		}
		return &jobs.Error{Code: jobs.CodeInvalidRequest, Message: err.Error()}
	}
	if _, found := slices.BinarySearch(l.Jobs, req.Job); found {
		return nil
	}
	if l.room() == 0 {
		limit := l.Collection.MaxJobs()
		return &jobs.Error{Code: jobs.CodeQuotaExceeded, Target: "properties.quota.maxJobCount",
			Message: fmt.Sprintf("job collection %s already has its maximum of %d jobs", l.Key.Collection, limit)}
	}
	return nil
}

// noLimit is the room of a collection without a job quota.
const noLimit = -1

// room returns how many more jobs the collection takes: its quota less
// its jobs and the slots leased; noLimit without a quota.
func (l *ledger) room() int {
	limit := l.Collection.MaxJobs()
	if limit == 0 {
		return noLimit
	}
	return max(limit-len(l.Jobs)-l.leasedSlots(), 0)
}

// An edit is one change of the ledger, which apply makes: its kind says
// which of its fields it reads.
type edit struct {
	kind editKind
	// editDefine: the definition a PUT or PATCH gives, in its accepted
	// form.
	collection jobs.Collection
	// editState: Enabled or Disabled.
	state string
	// editAdmit, editForget: the job's request.
	member jobs.MembershipRequest
	// editAdmit: a name new to the collection is reserved until then (an
	// admission ahead of its PUT); zero for none.
	reserveUntil time.Time
	// editLooked: the reservations looked at, and what the look found of
	// each, nil when it failed.
	looked   []jobs.Reservation
	presence []jobs.JobPresence
	// editRelease: the leases given back.
	release []int
	// editGrant: the most slots the new lease may have.
	want int
	// editLeaseLooked: the lease looked at, the names of the jobs the look
	// found started on it, and whether it failed.
	lease      int
	found      []string
	lookFailed bool
}

type editKind int

const (
	editDefine      editKind = iota // define or redefine the collection (PUT, PATCH)
	editState                       // enable or disable it (POST enable, disable)
	editDelete                      // delete it and its jobs
	editAdmit                       // admit a job's definition
	editForget                      // a job leaves: deleted, past its retention, or never defined
	editLooked                      // what a look at the reservations due found
	editRelease                     // leases given back
	editGrant                       // a new lease
	editLeaseLooked                 // what a look at a lease not given back found
)

// applied is what an edit did, for its handler to answer.
type applied struct {
	created  bool            // editDefine: the collection is new
	refused  *jobs.Error     // editAdmit: why the job was not admitted
	admitted *jobs.Admission // editAdmit with reserveUntil: what the PUT carries
	granted  *jobs.Lease     // editGrant: the lease, nil when there was no room
	told     workflow.Future // editState, editDelete: set once every job is told
	held     workflow.Future // editDelete: set once every reserved name is held
	err      error
}

// apply makes e, and what follows from it: the public view and the names
// in the memo, the changes to tell the jobs, the state's search
// attribute, a look at the reservations sooner.
func (c *collection) apply(ctx workflow.Context, e edit) applied {
	l := &c.ledger
	var a applied
	switch e.kind {
	case editDefine:
		a.created = l.Collection == nil
		var before jobs.CollectionTerms
		if !a.created {
			before = l.terms()
		}
		stateChanged := !a.created && l.Collection.Properties.State != e.collection.Properties.State
		def := e.collection
		l.Collection = &def
		c.revise()
		c.publish(ctx)
		if terms := l.terms(); !a.created && (stateChanged || !before.SameMaxRecurrence(terms)) {
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
			c.tellJobs(ctx, l.Jobs, change)
		}
		a.err = c.upsertState(ctx)
	case editState:
		l.Collection.Properties.State = e.state
		c.revise()
		c.publish(ctx)
		terms := l.terms()
		a.told = c.tellJobs(ctx, l.Jobs, jobs.CollectionChange{State: jobs.State(e.state), Terms: &terms})
		a.err = c.upsertState(ctx)
	case editDelete:
		// The collection is gone from the start, so that no job joins it
		// while its jobs are told. A name reserved whose admission a PUT
		// may still carry is held (hold) rather than told: its job's
		// workflow may not run yet.
		held := l.outstanding(workflow.Now(ctx))
		names := slices.DeleteFunc(slices.Clone(l.Jobs), func(name string) bool {
			return slices.ContainsFunc(held, func(r jobs.Reservation) bool { return r.Job == name })
		})
		l.Jobs, l.Reserved, l.deleted = nil, nil, true
		c.publish(ctx)
		a.held = c.hold(ctx, held)
		a.told = c.tellJobs(ctx, names, jobs.CollectionChange{Deleted: true})
	case editAdmit:
		if h := l.lease(e.member.Lease); h != nil && e.member.Run != "" {
			if i := slices.Index(h.Left, e.member.Run); i >= 0 {
				h.Left = slices.Delete(h.Left, i, i+1)
				h.Slots = max(h.Slots-1, 0)
				return a
			}
		}
		if a.refused = l.refusal(e.member); a.refused != nil {
			if l.deleted && e.member.Lease != 0 {
				// A claim on a lease is of a job whose workflow runs.
				c.tellJobs(ctx, []string{e.member.Job}, jobs.CollectionChange{Deleted: true})
			}
			return a
		}
		i, found := slices.BinarySearch(l.Jobs, e.member.Job)
		if found {
			return a
		}
		l.Jobs = slices.Insert(l.Jobs, i, e.member.Job)
		c.nameChanged(e.member.Job)
		if h := l.lease(e.member.Lease); h != nil && h.Slots > 0 {
			// The API claims a name on a lease once its job's workflow
			// has started: the job holds it, and no look is needed.
			h.Slots--
			c.tellStale(ctx, h, e.member.Job)
			return a
		}
		if !e.reserveUntil.IsZero() {
			l.Reservations++
			l.Reserved = append(l.Reserved, jobs.Reservation{Job: e.member.Job, Gen: l.Reservations, Until: e.reserveUntil})
			a.admitted = &jobs.Admission{Terms: l.terms(), Until: e.reserveUntil, Gen: l.Reservations}
		}
	case editForget:
		// A job started on a lease may leave before the claim of its name
		// comes (the name held meanwhile or not): the claim then takes its
		// slot and nothing else.
		if h := l.lease(e.member.Lease); h != nil && e.member.Run != "" && !slices.Contains(h.Left, e.member.Run) {
			h.Left = append(h.Left, e.member.Run)
		}
		if _, held := slices.BinarySearch(l.Jobs, e.member.Job); !held {
			return a
		}
		// A name reserved still, whose job was never defined, may be held
		// by a job that takes the admission after the one that leaves
		// ended (its requests were on their way while the API asked the
		// admission): the reservation stays until no job may take its
		// admission, and then checkReservations looks at once. A defined
		// job held the name itself.
		if i := slices.IndexFunc(l.Reserved, func(r jobs.Reservation) bool { return r.Job == e.member.Job }); i >= 0 {
			if !e.member.Defined {
				// Looking before Until could find no workflow of a PUT
				// that is on its way with the admission, and give its
				// name up.
				if !l.Reserved[i].Until.After(workflow.Now(ctx)) {
					c.checkNow = true
				}
				return a
			}
			l.Reserved = slices.Delete(l.Reserved, i, i+1)
		}
		c.drop(e.member.Job)
	case editLooked:
		// A name whose job's workflow does not run is given up; one whose
		// job is defined is the job's; one whose job runs undefined, or
		// that the look could not tell, is looked at again after the
		// grace.
		later := workflow.Now(ctx).Add(reservationGrace)
		for i, r := range e.looked {
			j := slices.IndexFunc(l.Reserved, func(x jobs.Reservation) bool { return x.Job == r.Job && x.Gen == r.Gen })
			if j < 0 {
				continue // its job asked, or left, meanwhile
			}
			switch {
			case e.presence == nil:
				l.Reserved[j].Until = later
			case !e.presence[i].Running:
				l.Reserved = slices.Delete(l.Reserved, j, j+1)
				c.drop(r.Job)
			case e.presence[i].Defined:
				l.Reserved = slices.Delete(l.Reserved, j, j+1)
			default:
				l.Reserved[j].Until = later
			}
		}
	case editRelease:
		c.leaseEdits++
		l.Leases = slices.DeleteFunc(l.Leases, func(h jobs.HeldLease) bool { return slices.Contains(e.release, h.ID) })
	case editGrant:
		n := e.want
		if room := l.room(); room != noLimit {
			n = min(n, room)
		}
		if n <= 0 {
			return a
		}
		now := workflow.Now(ctx)
		c.leaseEdits++
		l.Leased++
		h := jobs.HeldLease{ID: l.Leased, Slots: n, Revision: l.Revision, Granted: now, Until: now.Add(leaseTerm)}
		l.Leases = append(l.Leases, h)
		a.granted = &jobs.Lease{ID: h.ID, Slots: n, Terms: l.terms(), Until: h.Until}
	case editLeaseLooked:
		i := slices.IndexFunc(l.Leases, func(h jobs.HeldLease) bool { return h.ID == e.lease })
		if i < 0 {
			return a
		}
		c.leaseEdits++
		if e.lookFailed {
			l.Leases[i].Until = workflow.Now(ctx) // looked at again a grace later
			return a
		}
		c.adoptOrphans(ctx, l.Leases[i], e.found)
		l.Leases = slices.Delete(l.Leases, i, i+1)
	}
	return a
}

// revise gives the definition its next revision and ETag: it changed
// (apply's).
func (c *collection) revise() {
	c.ledger.Revision++
	c.ledger.Collection.ETag = jobs.NewETag(c.firstRun, c.ledger.Revision)
}

// drop takes the name off the collection's list (apply's).
func (c *collection) drop(job string) {
	if i, found := slices.BinarySearch(c.ledger.Jobs, job); found {
		c.ledger.Jobs = slices.Delete(c.ledger.Jobs, i, i+1)
		c.nameChanged(job)
	}
}

// nameChanged marks the memo key that holds name for publishNames.
func (c *collection) nameChanged(name string) {
	if key := jobs.JobNamesKey(name); !slices.Contains(c.namesChanged, key) {
		c.namesChanged = append(c.namesChanged, key)
	}
}

// upsertState writes the collection's state to its search attribute.
func (c *collection) upsertState(ctx workflow.Context) error {
	return workflow.UpsertTypedSearchAttributes(ctx, jobs.AttrState.ValueSet(c.ledger.Collection.Properties.State))
}
