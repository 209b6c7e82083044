package jobs

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// Custom search attributes, so that `temporal workflow list --query
// "RecurJob='...'"` and the Web UI find every collection, job and run.
// Registered at start-up on the embedded server; on an external cluster
// an operator registers them once (README).
var (
	AttrKind          = temporal.NewSearchAttributeKeyKeyword("RecurKind") // collection, job or run
	AttrSubscription  = temporal.NewSearchAttributeKeyKeyword("RecurSubscription")
	AttrResourceGroup = temporal.NewSearchAttributeKeyKeyword("RecurResourceGroup")
	AttrCollection    = temporal.NewSearchAttributeKeyKeyword("RecurCollection")
	AttrJob           = temporal.NewSearchAttributeKeyKeyword("RecurJob")
	AttrState         = temporal.NewSearchAttributeKeyKeyword("RecurState")
	AttrNominalTime   = temporal.NewSearchAttributeKeyTime("RecurNominalTime")
	// AttrStatus is a run's outcome: Completed, Failed or Postponed; on a
	// job, its last run's (Postponed occurrences aside).
	AttrStatus = temporal.NewSearchAttributeKeyKeyword("RecurStatus")
)

// SearchAttributeKeys lists every custom search attribute, for
// registration.
var SearchAttributeKeys = []temporal.SearchAttributeKey{
	AttrKind, AttrSubscription, AttrResourceGroup, AttrCollection, AttrJob, AttrState, AttrNominalTime, AttrStatus,
}

// Kinds of workflows, the values of AttrKind.
const (
	KindCollection = "collection"
	KindJob        = "job"
	KindRun        = "run"
)

// SearchAttributes returns the attributes identifying k for a workflow of
// the given kind, plus extra.
func (k Key) SearchAttributes(kind string, extra ...temporal.SearchAttributeUpdate) temporal.SearchAttributes {
	updates := []temporal.SearchAttributeUpdate{
		AttrKind.ValueSet(kind),
		AttrSubscription.ValueSet(k.Subscription),
		AttrResourceGroup.ValueSet(k.ResourceGroup),
		AttrCollection.ValueSet(k.Collection),
	}
	if k.Job != "" {
		updates = append(updates, AttrJob.ValueSet(k.Job))
	}
	return temporal.NewSearchAttributes(append(updates, extra...)...)
}

// SearchAttributeTypes returns every custom search attribute by name with
// its type, as registration takes them.
func SearchAttributeTypes() map[string]enumspb.IndexedValueType {
	out := make(map[string]enumspb.IndexedValueType, len(SearchAttributeKeys))
	for _, k := range SearchAttributeKeys {
		out[k.GetName()] = k.GetValueType()
	}
	return out
}
