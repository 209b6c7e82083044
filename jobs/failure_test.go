package jobs

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFailureIDsAreURLSafeAndTellRunsApart: a failure's ID is its nominal
// time and its kind, or the suffix of an occurrence ID shared by several
// runs of one nominal time (runs now, re-runs); a path segment as it is.
func TestFailureIDsAreURLSafeAndTellRunsApart(t *testing.T) {
	k := Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	nominal := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	now := nominal.Add(1500 * time.Millisecond)
	base := OccurrenceID(k.JobWorkflowID(), nominal)
	for _, tc := range []struct {
		at       time.Time
		kind, id string
		want     string
	}{
		{nominal, RunKindScheduled, base, "20261128T030000Z-scheduled"},
		{nominal, RunKindBackfill, base, "20261128T030000Z-backfill"},
		{now, RunKindRunNow, OccurrenceID(k.JobWorkflowID(), now) + "/run-now-2", "20261128T030001.5Z-run-now-2"},
		{nominal, RunKindRerun, base + "/rerun-3", "20261128T030000Z-rerun-3"},
	} {
		got := FailureID(tc.at, tc.kind, tc.id)
		require.Equal(t, tc.want, got)
		require.Regexp(t, `^[0-9A-Za-z.-]+$`, got)
	}
}

// TestCutBodyKeepsWholeCharacters: a body is cut to n bytes at most, never
// within a character.
func TestCutBodyKeepsWholeCharacters(t *testing.T) {
	require.Equal(t, "short", CutBody("short", 1024))
	require.Equal(t, strings.Repeat("a", 4), CutBody(strings.Repeat("a", 10), 4))
	require.Equal(t, "aé", CutBody("aéé", 4), "the second é would be cut in two")
	require.Equal(t, "a", CutBody("a€", 3), "a three-byte character cut after two bytes")
	require.Equal(t, "a😀", CutBody("a😀😀", 7))
}
