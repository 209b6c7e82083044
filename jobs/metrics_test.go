package jobs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMetricCollectionPassesTheSDKsSanitizerUnchanged(t *testing.T) {
	k := Key{Subscription: "0b1f-42", ResourceGroup: "my.rg", Collection: "Reports_2", Job: "nightly"}
	require.Equal(t, "0b1f_h42__my_drg__Reports_u2", k.MetricCollection(), "the job's name is never part of it")
	require.Equal(t, k.MetricCollection(), k.CollectionKey().MetricCollection())
	require.Regexp(t, `^[A-Za-z0-9_]+$`, k.MetricCollection())
}

// TestMetricCollectionIsInjective: collections whose names differ only
// in where a '-', '.', '_' or a separator falls have values of their
// own; every key of short names over those characters is tried.
func TestMetricCollectionIsInjective(t *testing.T) {
	require.NotEqual(t, Key{Subscription: "sub-a", ResourceGroup: "rg1", Collection: "c1-x"}.MetricCollection(),
		Key{Subscription: "sub-a", ResourceGroup: "rg1-c1", Collection: "x"}.MetricCollection())
	var names []string
	var grow func(prefix string)
	grow = func(prefix string) {
		if prefix != "" {
			names = append(names, prefix)
		}
		if len(prefix) == 3 {
			return
		}
		for _, c := range "a_-." {
			if prefix == "" && c != 'a' { // a name starts with a letter or digit
				continue
			}
			grow(prefix + string(c))
		}
	}
	grow("")
	seen := map[string]Key{}
	for _, s := range names {
		for _, g := range names {
			for _, c := range names {
				k := Key{Subscription: s, ResourceGroup: g, Collection: c}
				require.NoError(t, k.Validate())
				v := k.MetricCollection()
				if other, ok := seen[v]; ok {
					t.Fatalf("%+v and %+v share %q", k, other, v)
				}
				seen[v] = k
			}
		}
	}
}

func TestKeyOfWorkflowIDReadsJobAndCollectionIDs(t *testing.T) {
	job := Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	got, ok := KeyOfWorkflowID(job.JobWorkflowID())
	require.True(t, ok)
	require.Equal(t, job, got)
	got, ok = KeyOfWorkflowID(job.CollectionWorkflowID())
	require.True(t, ok)
	require.Equal(t, job.CollectionKey(), got)
	for _, id := range []string{"", "job:s/rg/c", "collection:s/rg/c/j", "other:s/rg/c", "job:s/rg/c/j@2026-01-01T00:00:00Z", "job:s//c/j"} {
		_, ok := KeyOfWorkflowID(id)
		require.False(t, ok, id)
	}
}
