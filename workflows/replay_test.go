package workflows_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	sdkworker "go.temporal.io/sdk/worker"

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
			r := sdkworker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(workflows.Collection, workflow.RegisterOptions{Name: jobs.CollectionWorkflowName})
			r.RegisterWorkflowWithOptions(workflows.Job, workflow.RegisterOptions{Name: jobs.JobWorkflowName})
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, file))
		})
	}
}
