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
// MetricCollectionLabel: subscription, resource group and collection, each
// written with letters and digits as they are and every other character
// as "_" and a letter ("_h" for '-', "_d" for '.', "_u" for '_'), joined
// by "__". The SDK's metrics handler replaces every character of a label
// value but ASCII letters, digits and "_" with "_"
// (go.temporal.io/sdk/contrib/tally.PrometheusSanitizeOptions), which
// would give sub-a/rg1/c1-x and sub-a/rg1-c1/x one series: this spelling
// passes through it unchanged and is a prefix code, so two collections
// never share a value.
func (k Key) MetricCollection() string {
	var b strings.Builder
	for i, part := range []string{k.Subscription, k.ResourceGroup, k.Collection} {
		if i > 0 {
			b.WriteString("__")
		}
		for _, r := range part {
			switch {
			case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
				b.WriteRune(r)
			case r == '-':
				b.WriteString("_h")
			case r == '.':
				b.WriteString("_d")
			default: // '_': Validate lets no other character into a name
				b.WriteString("_u")
			}
		}
	}
	return b.String()
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
