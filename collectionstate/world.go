package collectionstate

// World answers what the ledger asks while it applies an edit: which of
// its behaviours hold. The collection workflow records each answer in
// history (a version marker), so that a later fix never changes a running
// collection's history and a history replays as it was recorded.
type World interface {
	// Has reports whether the workflow runs with behaviour b: one whose
	// history was recorded before b was made keeps the behaviour it had.
	Has(b Behaviour) bool
}

// Behaviour is a change of what the ledger does that a running
// collection's history may predate.
type Behaviour int

const (
	// AdoptUpToLeased: a look at a lease not given back takes in up to
	// every slot leased of the jobs it finds, not up to that lease's
	// slots alone (adoptOrphans).
	AdoptUpToLeased Behaviour = iota
	// RenewClaimedNames: a claim of a name reserved renews the
	// reservation, so that a look begun before the claim does not give
	// the name up (renew).
	RenewClaimedNames
)
