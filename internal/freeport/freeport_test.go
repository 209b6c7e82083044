package freeport_test

import (
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/freeport"
)

// TestPickIsNotEphemeral: the ports come from below the kernel's ephemeral
// range, which outgoing connections draw from between the pick and the
// bind, and are distinct and free.
func TestPickIsNotEphemeral(t *testing.T) {
	low, high := freeport.BelowEphemeral()
	require.Less(t, low, high, "Linux with its default ephemeral range (32768-60999) leaves room below it")
	ports, err := freeport.Pick("127.0.0.1", 10)
	require.NoError(t, err)
	seen := map[int]bool{}
	for _, p := range ports {
		assert.GreaterOrEqual(t, p, low)
		assert.Less(t, p, high)
		assert.False(t, seen[p], "port %d picked twice", p)
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		require.NoError(t, err, "port %d is not free after Pick", p)
		require.NoError(t, l.Close())
	}
	assert.Len(t, ports, 10)
}

// TestAPortPickedIsNotPickedAgainSoon: a port stays out of the picks made
// after it, concurrent ones included, of this process as of any other on
// the machine (they share the reservations' file), until its server had
// time to bind it. A thousand picks of the 22,768 ports below the
// ephemeral range would repeat some twenty without it.
func TestAPortPickedIsNotPickedAgainSoon(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 250 {
				ports, err := freeport.Pick("127.0.0.1", 1)
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				seen[ports[0]]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for port, n := range seen {
		assert.Equal(t, 1, n, "port %d picked %d times", port, n)
	}
	assert.Len(t, seen, 1000)
}
