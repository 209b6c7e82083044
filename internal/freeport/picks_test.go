package freeport

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAPickHoldsWhileItsProcessRuns: a port stays reserved past reserveFor
// while the process that picked it runs (a test that stops its server and
// restarts it on the same port minutes later), and is released reserveFor
// after the pick once that process is gone, or after holdAtMost whatever
// the process.
func TestAPickHoldsWhileItsProcessRuns(t *testing.T) {
	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	live, dead := os.Getpid(), gone.Process.Pid
	require.True(t, processRuns(live))
	require.False(t, processRuns(dead), "pid %d has exited and been reaped", dead)

	now := time.Now()
	ago := func(d time.Duration) int64 { return now.Add(-d).UnixNano() }
	path := filepath.Join(t.TempDir(), "picks")
	lines := []struct {
		port  int
		line  string
		holds bool
	}{
		{10001, fmt.Sprintf("%d %d %d", 10001, ago(time.Minute), dead), true},
		{10002, fmt.Sprintf("%d %d %d", 10002, ago(3*time.Minute), dead), false},
		{10003, fmt.Sprintf("%d %d %d", 10003, ago(30*time.Minute), live), true},
		{10004, fmt.Sprintf("%d %d %d", 10004, ago(2*time.Hour), live), false},
		// The file as earlier builds wrote it: no process, reserveFor alone.
		{10005, fmt.Sprintf("%d %d", 10005, ago(time.Minute)), true},
		{10006, fmt.Sprintf("%d %d", 10006, ago(3*time.Minute)), false},
	}
	var data string
	for _, l := range lines {
		data += l.line + "\n"
	}
	require.NoError(t, os.WriteFile(path, []byte(data), 0o600))

	picks := readPicks(path, now, processRuns)
	for _, l := range lines {
		_, held := picks[l.port]
		assert.Equal(t, l.holds, held, "%s", l.line)
	}

	// What Pick writes back reads the same.
	writePicks(path, picks)
	assert.Equal(t, picks, readPicks(path, now, processRuns))
}
