package temporalserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/freeport"
)

// TestInternalPortsAreNotEphemeral: the internal services' ports come from
// below the kernel's ephemeral range, which outgoing connections draw from
// between the pick and the services' bind.
func TestInternalPortsAreNotEphemeral(t *testing.T) {
	low, high := freeport.BelowEphemeral()
	require.Less(t, low, high, "Linux with its default ephemeral range (32768-60999) leaves room below it")
	ports, err := internalPorts("127.0.0.1")
	require.NoError(t, err)
	picked := []int{ports.history, ports.matching, ports.worker}
	for _, p := range picked {
		assert.GreaterOrEqual(t, p, low)
		assert.Less(t, p, high)
	}
	assert.NotEqual(t, picked[0], picked[1])
	assert.NotEqual(t, picked[1], picked[2])
	assert.NotEqual(t, picked[0], picked[2])
}
