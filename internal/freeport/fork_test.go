package freeport_test

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/freeport"
)

// TestAPortPickedCanBeBoundWhileProcessesStart: a port Pick returns can be
// bound at once while the same process starts others, as a test process
// does that picks ports for its servers and starts recur beside them. A
// process started while Pick's probe listened would hold the probe's copy
// until its exec, and the bind would fail for that moment.
func TestAPortPickedCanBeBoundWhileProcessesStart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var starters sync.WaitGroup
	defer starters.Wait()
	defer cancel()
	for range 4 {
		starters.Go(func() {
			for ctx.Err() == nil {
				_ = exec.CommandContext(ctx, "true").Run()
			}
		})
	}
	const picks = 300
	taken := 0
	for range picks {
		ports, err := freeport.Pick("127.0.0.1", 1)
		require.NoError(t, err)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])))
		if err != nil {
			taken++
			continue
		}
		require.NoError(t, l.Close())
	}
	assert.Zero(t, taken, "%d of %d ports Pick returned could not be bound at once", taken, picks)
}
