package jobs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMetricCollectionIsSanitizedAsTheSDKSanitizes(t *testing.T) {
	k := Key{Subscription: "0b1f-42", ResourceGroup: "my.rg", Collection: "Reports_2", Job: "nightly"}
	require.Equal(t, "0b1f_42_my_rg_Reports_2", k.MetricCollection(), "the job's name is never part of it")
	require.Equal(t, k.MetricCollection(), k.CollectionKey().MetricCollection())
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
