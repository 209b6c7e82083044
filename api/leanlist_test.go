package api

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestLeanExecutionsKeepOnlyTheirFields: a list response decoded through
// the codec of leanExecutions keeps of each execution the fields named,
// whole, drops the others, and keeps the response's own fields; any other
// message decodes as the proto codec decodes it.
func TestLeanExecutionsKeepOnlyTheirFields(t *testing.T) {
	payload := func(s string) *commonpb.Payload {
		return &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"` + s + `"`)}
	}
	execution := func(id string) *workflowpb.WorkflowExecutionInfo {
		return &workflowpb.WorkflowExecutionInfo{
			Execution:        &commonpb.WorkflowExecution{WorkflowId: id, RunId: "run-" + id},
			Type:             &commonpb.WorkflowType{Name: "recur.Job"},
			StartTime:        timestamppb.New(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)),
			Status:           enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING,
			Memo:             &commonpb.Memo{Fields: map[string]*commonpb.Payload{"recurJob": payload(id), "recurStatus": payload("ok")}},
			SearchAttributes: &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{"RecurJob": payload(id)}},
			TaskQueue:        "recur",
		}
	}
	full := &workflowservice.ListWorkflowExecutionsResponse{
		Executions:    []*workflowpb.WorkflowExecutionInfo{execution("a"), execution("b"), {}},
		NextPageToken: []byte("next"),
	}
	data, err := proto.Marshal(full)
	require.NoError(t, err)
	codec := leanExecutions("execution", "memo").(grpc.ForceCodecV2CallOption).CodecV2

	var got workflowservice.ListWorkflowExecutionsResponse
	require.NoError(t, codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(data)}, &got))
	want := &workflowservice.ListWorkflowExecutionsResponse{NextPageToken: []byte("next")}
	for _, e := range full.Executions {
		want.Executions = append(want.Executions, &workflowpb.WorkflowExecutionInfo{Execution: e.Execution, Memo: e.Memo})
	}
	require.True(t, proto.Equal(want, &got), "got %v", &got)

	t.Run("other messages whole", func(t *testing.T) {
		e := execution("c")
		data, err := proto.Marshal(e)
		require.NoError(t, err)
		var got workflowpb.WorkflowExecutionInfo
		require.NoError(t, codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(data)}, &got))
		require.True(t, proto.Equal(e, &got))
	})
	t.Run("malformed", func(t *testing.T) {
		var got workflowservice.ListWorkflowExecutionsResponse
		require.Error(t, codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(data[:len(data)-3])}, &got))
	})
}

// TestLeanListsReachTheSDKsList: through a Temporal client dialed with
// LeanLists, the SDK's ListWorkflow under withLean returns the executions
// with only the fields kept, and without it returns them whole.
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

	lean := list(withLean(ctx, leanExecutions("execution", "memo")))
	require.Equal(t, "lean", lean.GetExecution().GetWorkflowId())
	require.True(t, proto.Equal(whole.GetMemo(), lean.GetMemo()), "the memo whole")
	require.Nil(t, lean.GetType())
	require.Nil(t, lean.GetStartTime())
	require.Empty(t, lean.GetTaskQueue())
}
