package store

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunsForgetsTheOldestWhenFull: the remembered runs stay within their
// bound, the oldest workflow going first, and a run replaced meanwhile
// is not forgotten for the one it replaced.
func TestRunsForgetsTheOldestWhenFull(t *testing.T) {
	r := newRuns(3)
	r.put("a", "a1")
	r.put("b", "b1")
	r.put("c", "c1")
	r.put("a", "a2") // a new run of a remembered workflow takes no slot
	r.put("d", "d1") // full: a, the oldest, goes
	_, ok := r.get("a")
	require.False(t, ok)
	for id, want := range map[string]string{"b": "b1", "c": "c1", "d": "d1"} {
		run, ok := r.get(id)
		require.True(t, ok, id)
		require.Equal(t, want, run, id)
	}
	r.put("e", "e1") // then b
	_, ok = r.get("b")
	require.False(t, ok)
	require.Equal(t, 3, r.ids.len())

	r.forget("c", "c0") // another run than the one remembered
	run, _ := r.get("c")
	require.Equal(t, "c1", run)
	r.forget("c", "c1")
	_, ok = r.get("c")
	require.False(t, ok)
	r.put("f", "")
	_, ok = r.get("f")
	require.False(t, ok, "no run, nothing to remember")
}
