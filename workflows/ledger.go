package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/collectionstate"
	"github.com/recurhq/recur/jobs"
)

// applied is what an edit did, for its handler to answer.
type applied struct {
	collectionstate.Outcome
	told workflow.Future // SetState, Delete: set once every job is told
	tell int             // SetState, Delete: the number of that message (collection.tells)
	held workflow.Future // Delete: set once every reserved name is held
	err  error           // Define, SetState: the upsert of the state's search attribute failed
}

// apply has the ledger make e in ctx's coroutine and carries out its
// effects in the order the ledger returns them: the commands they issue
// (the memo, the state's search attribute, the holds) keep the order the
// recorded histories have.
func (c *collection) apply(ctx workflow.Context, e collectionstate.Edit) applied {
	c.world.ctx = ctx
	out, effects := c.ledger.Apply(e, workflow.Now(ctx))
	a := applied{Outcome: out}
	for _, f := range effects {
		switch f := f.(type) {
		case collectionstate.Publish:
			c.publish(ctx, f.View)
		case collectionstate.Tell:
			a.tell, a.told = c.tellJobs(ctx, f.Names, f.Change)
		case collectionstate.UpsertState:
			a.err = workflow.UpsertTypedSearchAttributes(ctx, jobs.AttrState.ValueSet(f.State))
		case collectionstate.Hold:
			a.held = c.hold(ctx, f.Reservations)
		case collectionstate.NameChanged:
			c.nameChanged(f.Name)
		case collectionstate.LookNow:
			c.checkNow = true
		case collectionstate.LeasesChanged:
			c.leaseEdits++
		}
	}
	return a
}

// ledgerWorld answers what the ledger asks while it applies an edit from
// the workflow's history: a version marker per behaviour.
type ledgerWorld struct {
	ctx workflow.Context
}

// ledgerBehaviours are the versions that bring each of the ledger's
// behaviours.
var ledgerBehaviours = map[collectionstate.Behaviour]string{
	collectionstate.AdoptUpToLeased:   versionAdoptOrphans,
	collectionstate.RenewClaimedNames: versionRenewClaimedNames,
}

func (w *ledgerWorld) Has(b collectionstate.Behaviour) bool {
	return workflow.GetVersion(w.ctx, ledgerBehaviours[b], workflow.DefaultVersion, 1) != workflow.DefaultVersion
}

// nameChanged marks the memo key that holds name for publishNames.
func (c *collection) nameChanged(name string) {
	if key := jobs.JobNamesKey(name); !slices.Contains(c.namesChanged, key) {
		c.namesChanged = append(c.namesChanged, key)
	}
}
