package collectionstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// direct is the World that answers at once, with every behaviour.
type direct struct{}

func (direct) Has(Behaviour) bool { return true }

// asked is a World that answers has and counts the questions.
type asked struct {
	has bool
	n   int
}

func (w *asked) Has(Behaviour) bool { w.n++; return w.has }

// defined returns the ledger of a collection defined with a quota of
// limit jobs, and the effects of its definition.
func defined(t *testing.T, limit int, w World) (*Ledger, []Effect) {
	t.Helper()
	l := New(jobs.CollectionInput{Key: jobs.Key{Collection: "c"}}, "run", w)
	def := jobs.Collection{Properties: jobs.CollectionProperties{State: jobs.CollectionEnabled, Quota: &jobs.Quota{MaxJobCount: &limit}}}
	out, fx := l.Apply(Define{Collection: def}, t0)
	require.True(t, out.Created)
	return l, fx
}

// admit admits name ahead of its PUT, reserved until until.
func admit(t *testing.T, l *Ledger, name string, until time.Time) {
	t.Helper()
	out, _ := l.Apply(Admit{Member: jobs.MembershipRequest{Job: name}, ReserveUntil: until}, t0)
	require.Nil(t, out.Refused)
}

func TestDeleteHoldsOutstandingReservationsAndTellsTheRest(t *testing.T) {
	l, fx := defined(t, 5, direct{})
	require.Equal(t, []Effect{
		Publish{View: jobs.CollectionView{Collection: l.Collection()}},
		UpsertState{State: jobs.CollectionEnabled},
	}, fx)
	admit(t, l, "due", t0)                        // its admission has lapsed
	admit(t, l, "held", t0.Add(ReservationGrace)) // a PUT may still carry it

	_, fx = l.Apply(Delete{}, t0)
	require.True(t, l.Deleted())
	require.Empty(t, l.Jobs())
	require.Equal(t, []Effect{
		Publish{View: jobs.CollectionView{Collection: l.Collection(), Deleted: true}},
		Hold{Reservations: []jobs.Reservation{{Job: "held", Gen: 2, Until: t0.Add(ReservationGrace)}}},
		Tell{Names: []string{"due"}, Change: jobs.CollectionChange{Deleted: true}},
	}, fx)
}

func TestGrantTakesTheRoomLeftAndAdmitRefusesPastIt(t *testing.T) {
	l, _ := defined(t, 3, direct{})
	admit(t, l, "a", t0.Add(ReservationGrace))

	out, fx := l.Apply(Grant{Want: 5}, t0)
	require.Equal(t, 2, out.Granted.Slots)
	require.Equal(t, []Effect{LeasesChanged{}}, fx)
	require.Equal(t, 2, l.LeasedSlots())

	out, _ = l.Apply(Admit{Member: jobs.MembershipRequest{Job: "b"}}, t0)
	require.Equal(t, jobs.CodeQuotaExceeded, out.Refused.Code)
	out, _ = l.Apply(Grant{Want: 1}, t0)
	require.Nil(t, out.Granted)
}

// A look at a lease not given back that finds more jobs than the lease's
// slots asks the world whether it takes up to every slot leased: a
// history recorded before AdoptUpToLeased keeps the lease's slots alone.
func TestLeaseLookedAsksTheWorldOnlyPastTheLeasesSlots(t *testing.T) {
	for _, has := range []bool{false, true} {
		w := &asked{has: has}
		l, _ := defined(t, 4, w)
		first, _ := l.Apply(Grant{Want: 1}, t0)
		l.Apply(Grant{Want: 2}, t0)

		_, fx := l.Apply(LeaseLooked{Lease: first.Granted.ID, Found: []string{"x", "y", "z"}}, t0)
		require.Equal(t, 1, w.n)
		adopted := []string{"x"}
		if has {
			adopted = []string{"x", "y", "z"}
		}
		require.Equal(t, adopted, l.Jobs())
		require.Equal(t, LeasesChanged{}, fx[0])
		require.Equal(t, LookNow{}, fx[len(fx)-1])
		require.Len(t, fx, len(adopted)+2) // a NameChanged each
		require.Equal(t, adopted, names(l.Lapsed(t0)))
	}

	w := &asked{}
	l, _ := defined(t, 4, w)
	first, _ := l.Apply(Grant{Want: 2}, t0)
	l.Apply(LeaseLooked{Lease: first.Granted.ID, Found: []string{"x"}}, t0)
	require.Zero(t, w.n)
	require.Equal(t, []string{"x"}, l.Jobs())
}

func names(rs []jobs.Reservation) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Job)
	}
	return out
}

// A look at a lapsed reservation that began before a claim of the name
// (the PUT's job's workflow not started yet) finds no workflow; it must not
// give the name up once the claim was answered as the collection's. A
// history recorded before RenewClaimedNames keeps giving it up.
func TestALookBegunBeforeAClaimDoesNotGiveTheNameUp(t *testing.T) {
	for _, has := range []bool{false, true} {
		for _, claim := range []Admit{
			{Member: jobs.MembershipRequest{Job: "a"}, ReserveUntil: t0.Add(time.Minute)}, // the API's, by name
			{Member: jobs.MembershipRequest{Job: "a", Seq: 1}},                            // the job's own, by signal
		} {
			w := &asked{has: has}
			l, _ := defined(t, 2, w)
			admit(t, l, "a", t0)
			look := l.Lapsed(t0)
			require.Equal(t, []string{"a"}, names(look))

			out, _ := l.Apply(claim, t0.Add(time.Second))
			require.Nil(t, out.Refused)
			require.Nil(t, out.Admitted, "a name held is answered without an admission")
			require.Equal(t, 1, w.n)

			l.Apply(Looked{Reservations: look, Presence: []jobs.JobPresence{{}}}, t0.Add(2*time.Second))
			if !has {
				require.Empty(t, l.Jobs())
				continue
			}
			require.Equal(t, []string{"a"}, l.Jobs())
			require.Empty(t, l.Lapsed(t0.Add(2*time.Second)), "renewed for a grace")
			next := l.Lapsed(t0.Add(time.Minute + ReservationGrace))
			require.Equal(t, []string{"a"}, names(next))
			l.Apply(Looked{Reservations: next, Presence: []jobs.JobPresence{{Running: true, Defined: true}}}, t0.Add(2*time.Minute))
			require.Equal(t, []string{"a"}, l.Jobs())
			require.False(t, l.Reserving())
		}
	}
}

// A job started on a lease took the terms the lease carried; when the
// collection changed its state or terms after the grant (another API
// process's lease, which that process's flush did not retire), the claim
// of its name tells the job the collection's state and terms of now.
func TestAClaimOnALeaseGrantedBeforeAChangeTellsTheJob(t *testing.T) {
	l, _ := defined(t, 5, direct{})
	granted, _ := l.Apply(Grant{Want: 2}, t0)
	lease := granted.Granted.ID
	claim := func(job string) []Effect {
		out, fx := l.Apply(Admit{Member: jobs.MembershipRequest{Job: job, Lease: lease, Run: "run-" + job}}, t0)
		require.Nil(t, out.Refused)
		return fx
	}
	require.Equal(t, []Effect{NameChanged{Name: "early"}}, claim("early"), "the lease's terms are the collection's")

	l.Apply(SetState{State: jobs.CollectionDisabled}, t0)
	terms := l.Terms()
	require.True(t, terms.Disabled)
	require.Equal(t, []Effect{
		NameChanged{Name: "late"},
		Tell{Names: []string{"late"}, Change: jobs.CollectionChange{State: jobs.Disabled, Terms: &terms}},
	}, claim("late"), "the job started enabled: the collection tells it it is disabled")
}

// A look that finds a reserved name's job workflow running, defined, but
// deleted gives the name up, as it does a workflow that does not run: the
// job left before the name was reserved (its leave found the name free),
// and its workflow runs on only until its handlers in flight end. Kept, the
// name would outlive the job and take a slot of the quota for good.
func TestALookFindingADeletedJobGivesTheNameUp(t *testing.T) {
	l, _ := defined(t, 1, direct{})
	l.Apply(Forget{Member: jobs.MembershipRequest{Job: "a", Leave: true, Defined: true}}, t0)
	admit(t, l, "a", t0)
	look := l.Lapsed(t0)
	require.Equal(t, []string{"a"}, names(look))

	l.Apply(Looked{Reservations: look, Presence: []jobs.JobPresence{{Running: true, Defined: true, Deleted: true}}}, t0.Add(time.Second))
	require.Empty(t, l.Jobs())
	require.False(t, l.Reserving())
	out, _ := l.Apply(Admit{Member: jobs.MembershipRequest{Job: "b"}, ReserveUntil: t0.Add(time.Minute)}, t0.Add(time.Second))
	require.Nil(t, out.Refused, "the slot is free")
}
