//go:build cgo

package egress_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// The rerun under glibc's resolver needs cgo, which Go enables whenever a
// C compiler is present (gcc is on every machine of this project's kind).

// TestUnusualSpellingsThroughGlibc reruns TestUnusualSpellingsNeverConnect
// with GODEBUG=netdns=cgo, where every spelling resolves to 127.0.0.1 and
// only the policy stands between the call and the target.
func TestUnusualSpellingsThroughGlibc(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestUnusualSpellingsNeverConnect$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "GODEBUG=netdns=cgo", glibcRun+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: TestUnusualSpellingsNeverConnect/2130706433")
	require.NotContains(t, string(out), "does not resolve here", "under glibc every spelling resolves")
}
