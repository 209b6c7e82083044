package temporalcluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOptionsSetTheShardIOConcurrency: the server's dynamic config file
// sets history.shardIOConcurrency to the default, to ShardIOConcurrency,
// or to what DynamicConfig says, and frontend.namespaceRPS.visibility to
// recur's default unless DynamicConfig says, without changing the
// caller's map.
func TestOptionsSetTheShardIOConcurrency(t *testing.T) {
	written := func(o Options) string {
		t.Helper()
		o, err := o.withDefaults()
		require.NoError(t, err)
		dir := t.TempDir()
		dynamic := filepath.Join(dir, "dynamicconfig.yaml")
		require.NoError(t, writeConfig(filepath.Join(dir, "config.yaml"), dynamic, configData{}, o.DynamicConfig))
		b, err := os.ReadFile(dynamic)
		require.NoError(t, err)
		return string(b)
	}
	require.Contains(t, written(Options{}), "history.shardIOConcurrency:\n  - value: 8\n")
	require.Contains(t, written(Options{}), "frontend.namespaceRPS.visibility:\n  - value: 100\n")
	require.Contains(t, written(Options{DynamicConfig: map[string]any{visibilityRPSKey: 10}}),
		"frontend.namespaceRPS.visibility:\n  - value: 10\n", "DynamicConfig wins")
	require.Contains(t, written(Options{ShardIOConcurrency: 2}), "history.shardIOConcurrency:\n  - value: 2\n")

	mine := map[string]any{"frontend.namespaceRPS": 2400}
	got := written(Options{DynamicConfig: mine})
	require.Contains(t, got, "frontend.namespaceRPS:\n  - value: 2400\n")
	require.Contains(t, got, "history.shardIOConcurrency:\n  - value: 8\n")
	require.Equal(t, map[string]any{"frontend.namespaceRPS": 2400}, mine, "the caller's map")
	require.Contains(t, written(Options{ShardIOConcurrency: 2, DynamicConfig: map[string]any{shardIOConcurrencyKey: 3}}),
		"history.shardIOConcurrency:\n  - value: 3\n", "DynamicConfig wins")

	_, err := Options{ShardIOConcurrency: -1}.withDefaults()
	require.ErrorContains(t, err, "shard IO concurrency -1 is below 1")
}
