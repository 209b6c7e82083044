package recurproc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLogLevelsReadJSONAndText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "recur.log")
	require.NoError(t, os.WriteFile(path, []byte(`{"time":"2026-11-21T10:00:00Z","level":"WARN","msg":"slow \"task\"","jobId":"job:s/rg/c/j"}
{"time":"2026-11-21T10:00:01Z","level":"ERROR","msg":"boom"}
{"time":"2026-11-21T10:00:02Z","level":"INFO","msg":"level=WARN in a message"}
time=2026-11-21T10:00:03Z level=WARN msg="slow \"task\"" jobId=job:s/rg/c/j
time=2026-11-21T10:00:04Z level=ERROR msg=boom
time=2026-11-21T10:00:05Z level=INFO msg=fine
not a log line
`), 0o600))
	warn, errs := (&Process{LogPath: path}).LogLevels()
	require.Equal(t, map[string]int{`slow "task"`: 2}, warn)
	require.Equal(t, map[string]int{"boom": 2}, errs)
}

// TestTablesAreSortedByKind sorts the tables of Temporal v1.32.1's
// PostgreSQL schemas (schema/postgresql/v12/{temporal,visibility}).
func TestTablesAreSortedByKind(t *testing.T) {
	want := map[int][]string{
		histories: {"history_node", "history_tree"},
		queues: {"tasks", "task_queues", "tasks_v2", "task_queues_v2", "task_queue_user_data",
			"history_immediate_tasks", "history_scheduled_tasks", "transfer_tasks", "timer_tasks",
			"replication_tasks", "visibility_tasks"},
		executions: {"namespaces", "namespace_metadata", "shards", "executions", "current_executions",
			"current_chasm_executions", "buffered_events", "build_id_to_task_queue", "replication_tasks_dlq",
			"activity_info_maps", "timer_info_maps", "child_execution_info_maps", "request_cancel_info_maps",
			"signal_info_maps", "signals_requested_sets", "chasm_node_maps", "queue", "queue_metadata",
			"cluster_metadata_info", "cluster_membership", "queues", "queue_messages", "nexus_endpoints",
			"nexus_endpoints_partition_status"},
	}
	for kind, tables := range want {
		for _, table := range tables {
			require.Equal(t, KindNames[kind], KindNames[kindOf("temporal."+table)], table)
		}
	}
	require.Equal(t, KindNames[visibility], KindNames[kindOf("temporal_visibility.executions_visibility")])
}
