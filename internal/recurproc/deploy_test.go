package recurproc

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClusterFlagsTakePostgresAndDynamicSettings(t *testing.T) {
	var f ClusterFlags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f.Register(fs)
	require.NoError(t, fs.Parse([]string{"-cluster", "-postgres", "max_wal_size=16GB", "-dynamic", "matching.numTaskqueueReadPartitions=1",
		"-dynamic", "a.flag=true", "-dynamic", "a.name=recur"}))
	o := f.Options()
	require.Equal(t, map[string]string{"max_wal_size": "16GB"}, o.PostgresSettings)
	require.Equal(t, map[string]any{"matching.numTaskqueueReadPartitions": float64(1), "a.flag": true, "a.name": "recur"}, o.DynamicConfig)
	require.Error(t, fs.Parse([]string{"-dynamic", "novalue"}))
}
