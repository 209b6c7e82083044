package jobs

import (
	"strings"

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
	// AttrFailingSince is when a job's failure streak began
	// (JobState.FailingSince): set by the run that starts it, unset by a
	// success or the job's enabling.
	AttrFailingSince = temporal.NewSearchAttributeKeyTime("RecurFailingSince")
	// AttrLateness is how late a job's last scheduled run started, in
	// coarse buckets (LatenessBucket: "PT1M", "PT10M", "PT1H", "P1D");
	// unset under a minute.
	AttrLateness = temporal.NewSearchAttributeKeyKeyword("RecurLateness")
	// AttrLastMissed is about when a job last did not run an occurrence,
	// postponed or missed: its Status.LastMissedTime, trailing it by
	// less than LastMissedLag.
	AttrLastMissed = temporal.NewSearchAttributeKeyTime("RecurLastMissed")
	// AttrFailures is true once a job keeps a failure record
	// (MemoFailures): the lists of failures across collections read the
	// records of those jobs alone. It is never unset: a job's records
	// last as long as its history.
	AttrFailures = temporal.NewSearchAttributeKeyBool("RecurFailures")
)

// SearchAttributeKeys lists every custom search attribute, for
// registration.
var SearchAttributeKeys = []temporal.SearchAttributeKey{
	AttrKind, AttrSubscription, AttrResourceGroup, AttrCollection, AttrJob, AttrState, AttrStatus,
	AttrFailingSince, AttrLateness, AttrLastMissed, AttrFailures,
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

// ScopeQuery is the visibility query for the workflows of one kind within
// k: its subscription and, when set, its resource group, collection and
// job; extra conditions are ANDed on.
func ScopeQuery(kind string, k Key, extra ...string) string {
	conds := []string{
		AttrKind.GetName() + " = " + Quote(kind),
		AttrSubscription.GetName() + " = " + Quote(k.Subscription),
	}
	for _, part := range []struct {
		attr  string
		value string
	}{
		{AttrResourceGroup.GetName(), k.ResourceGroup},
		{AttrCollection.GetName(), k.Collection},
		{AttrJob.GetName(), k.Job},
	} {
		if part.value != "" {
			conds = append(conds, part.attr+" = "+Quote(part.value))
		}
	}
	return strings.Join(append(conds, extra...), " AND ")
}

// Quote makes s a string literal of Temporal's visibility query language,
// whose parser reads backslash escapes as MySQL does.
func Quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
