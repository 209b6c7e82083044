package jobs

import (
	"strings"
	"unicode"
)

// MetricCollectionLabel is the one label of a tenant's that recur's series
// may carry, when the operator opts in (--metrics-collection-label): the
// job workflows' series and the gauge of failing jobs, so that they join.
// No series is ever labelled by job.
const MetricCollectionLabel = "collection"

// MetricCollection returns the value of k's collection under
// MetricCollectionLabel: subscription, resource group and collection
// joined by "_", with every character other than an ASCII letter, digit
// or "_" replaced by "_". The SDK's metrics handler sanitizes every label
// value so (go.temporal.io/sdk/contrib/tally.PrometheusSanitizeOptions),
// and the API's gauge must match the workflows' series; sanitizing here
// makes that one rule rather than two.
func (k Key) MetricCollection() string {
	return strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) || r == '_' {
			return r
		}
		return '_'
	}, k.Subscription+"/"+k.ResourceGroup+"/"+k.Collection)
}

// KeyOfWorkflowID returns the key of the collection or job whose workflow
// has the ID id (CollectionWorkflowID, JobWorkflowID), false for any
// other ID.
func KeyOfWorkflowID(id string) (Key, bool) {
	var k Key
	var parts []string
	if rest, ok := strings.CutPrefix(id, "job:"); ok {
		parts = strings.Split(rest, "/")
		if len(parts) != 4 {
			return Key{}, false
		}
		k.Job = parts[3]
	} else if rest, ok := strings.CutPrefix(id, "collection:"); ok {
		if parts = strings.Split(rest, "/"); len(parts) != 3 {
			return Key{}, false
		}
	} else {
		return Key{}, false
	}
	k.Subscription, k.ResourceGroup, k.Collection = parts[0], parts[1], parts[2]
	return k, k.Validate() == nil
}
