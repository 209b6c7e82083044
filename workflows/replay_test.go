package workflows_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/workflows"
)

// TestRecordedHistoriesReplay replays every history under testdata (made by
// `go run ./e2e/recordhistories`) against today's workflow code: a change
// that alters the commands of a running workflow without
// workflow.GetVersion fails here instead of in production.
func TestRecordedHistoriesReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no recorded histories: run go run ./e2e/recordhistories")
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			require.NoError(t, replay(recorded(t, file)))
		})
	}
}

// recorded reads a recorded history.
func recorded(t *testing.T, file string) *historypb.History {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	return h
}

// replay replays h against today's workflow code.
func replay(h *historypb.History) error {
	r := sdkworker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.Collection, workflow.RegisterOptions{Name: jobs.CollectionWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.Job, workflow.RegisterOptions{Name: jobs.JobWorkflowName})
	return r.ReplayWorkflowHistory(nil, h)
}
