package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// TestLeanListsReachTheSDKsList: through a Temporal client dialed with
// LeanLists, the SDK's ListWorkflow under visitMemos gives the executions
// to the visit and returns none, and without it returns them whole.
func TestLeanListsReachTheSDKsList(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t), temporaltest.WithBaseClientOptions(client.Options{
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{LeanLists()}},
	}))
	c := ts.GetDefaultClient()
	ctx := t.Context()
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: "lean", TaskQueue: "nobody-polls", Memo: map[string]any{"recurJob": "definition"},
	}, "AnyWorkflow")
	require.NoError(t, err)
	list := func(ctx context.Context) *workflowpb.WorkflowExecutionInfo {
		var found *workflowpb.WorkflowExecutionInfo
		require.Eventually(t, func() bool {
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowId = 'lean'"})
			require.NoError(t, err)
			if len(resp.GetExecutions()) == 0 {
				return false
			}
			found = resp.GetExecutions()[0]
			return true
		}, 10*time.Second, 50*time.Millisecond)
		return found
	}

	whole := list(ctx)
	require.Equal(t, "AnyWorkflow", whole.GetType().GetName())
	require.Equal(t, "nobody-polls", whole.GetTaskQueue())

	var ids []string
	var memo *commonpb.Payload
	visit := func(id []byte, m memoPayloads) {
		ids = append(ids, string(id))
		if _, load, ok := m.payload("recurJob"); ok {
			var err error
			memo, err = load()
			require.NoError(t, err)
		}
	}
	resp, err := c.ListWorkflow(visitMemos(ctx, visit), &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowId = 'lean'"})
	require.NoError(t, err)
	require.Empty(t, resp.GetExecutions())
	require.Equal(t, []string{"lean"}, ids)
	require.True(t, proto.Equal(whole.GetMemo().GetFields()["recurJob"], memo), "the memo whole")
}
