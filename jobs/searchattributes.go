package jobs

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// Custom search attributes, so that `temporal workflow list --query
// "RecurJob='...'"` and the Web UI find every collection and job.
// Registered at start-up on the embedded server; on an external cluster
// an operator registers them once (README).
var (
	AttrKind          = temporal.NewSearchAttributeKeyKeyword("RecurKind") // collection or job
	AttrSubscription  = temporal.NewSearchAttributeKeyKeyword("RecurSubscription")
	AttrResourceGroup = temporal.NewSearchAttributeKeyKeyword("RecurResourceGroup")
	AttrCollection    = temporal.NewSearchAttributeKeyKeyword("RecurCollection")
	AttrJob           = temporal.NewSearchAttributeKeyKeyword("RecurJob")
	AttrState         = temporal.NewSearchAttributeKeyKeyword("RecurState")
	// AttrStatus is the outcome of a job's last run, Completed or Failed,
	// so that failing jobs are one visibility filter away.
	AttrStatus = temporal.NewSearchAttributeKeyKeyword("RecurStatus")
)

// SearchAttributeKeys lists every custom search attribute, for
// registration.
var SearchAttributeKeys = []temporal.SearchAttributeKey{
	AttrKind, AttrSubscription, AttrResourceGroup, AttrCollection, AttrJob, AttrState, AttrStatus,
}

// Kinds of workflows, the values of AttrKind.
const (
	KindCollection = "collection"
	KindJob        = "job"
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
