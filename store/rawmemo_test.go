package store

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestVisitMemosReadsEachExecutionRaw: a list response read through the
// codec of visitMemos gives each execution, in order, to the visit, with
// its workflow ID and memo; each memo payload has the key payloadKey gives
// it unmarshalled, and unmarshals whole; the response keeps its own
// fields and no execution. Any other message decodes as the proto codec
// decodes it.
func TestVisitMemosReadsEachExecutionRaw(t *testing.T) {
	payload := func(s string) *commonpb.Payload {
		return &commonpb.Payload{
			Metadata: map[string][]byte{"encoding": []byte("binary/encrypted"), "encryption-key-id": []byte("k1"), "z": nil},
			Data:     []byte(`"` + s + `"`),
		}
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
	type visited struct {
		id   string
		memo map[string]*commonpb.Payload
		keys map[string]string
	}
	var got []visited
	visit := func(id []byte, memo memoPayloads) {
		v := visited{id: string(id), memo: map[string]*commonpb.Payload{}, keys: map[string]string{}}
		for _, key := range []string{"recurJob", "recurStatus", "recurRows"} {
			cacheKey, load, ok := memo.payload(key)
			if !ok {
				continue
			}
			p, err := load()
			require.NoError(t, err)
			v.memo[key], v.keys[key] = p, cacheKey
		}
		got = append(got, v)
	}
	codec := visitMemos(t.Context(), visit).Value(leanKey{}).(grpc.ForceCodecV2CallOption).CodecV2

	var resp workflowservice.ListWorkflowExecutionsResponse
	require.NoError(t, codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(data)}, &resp))
	require.True(t, proto.Equal(&workflowservice.ListWorkflowExecutionsResponse{NextPageToken: []byte("next")}, &resp), "got %v", &resp)
	require.Len(t, got, len(full.Executions))
	for i, e := range full.Executions {
		require.Equal(t, e.GetExecution().GetWorkflowId(), got[i].id)
		require.Len(t, got[i].memo, len(e.GetMemo().GetFields()))
		for key, p := range e.GetMemo().GetFields() {
			require.True(t, proto.Equal(p, got[i].memo[key]), "%s of %s", key, got[i].id)
			require.Equal(t, payloadKey(p), got[i].keys[key], "%s of %s", key, got[i].id)
		}
	}

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

// TestRawPayloadKeyIsPayloadKey: a payload's key from its bytes is the
// key of the payload they unmarshal to, whatever the order of its
// metadata, and of a repeated metadata key or data field the last counts,
// as proto.Unmarshal takes it.
func TestRawPayloadKeyIsPayloadKey(t *testing.T) {
	entry := func(k, v string) []byte {
		var e []byte
		e = protowire.AppendTag(e, mapEntryKey, protowire.BytesType)
		e = protowire.AppendString(e, k)
		e = protowire.AppendTag(e, mapEntryValue, protowire.BytesType)
		e = protowire.AppendString(e, v)
		var b []byte
		b = protowire.AppendTag(b, payloadMetadata, protowire.BytesType)
		return protowire.AppendBytes(b, e)
	}
	data := func(d string) []byte {
		b := protowire.AppendTag(nil, payloadData, protowire.BytesType)
		return protowire.AppendString(b, d)
	}
	for name, b := range map[string][]byte{
		"in order":         slices.Concat(entry("a", "1"), entry("b", "2"), data("x")),
		"in reverse":       slices.Concat(data("x"), entry("b", "2"), entry("a", "1")),
		"a repeated key":   slices.Concat(entry("a", "0"), entry("b", "2"), entry("a", "1"), data("x")),
		"repeated data":    slices.Concat(data("y"), entry("a", "1"), data("x")),
		"no metadata":      data("x"),
		"empty":            nil,
		"an unknown field": slices.Concat(protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 7), data("x")),
	} {
		var p commonpb.Payload
		require.NoError(t, proto.Unmarshal(b, &p), name)
		got, err := rawPayloadKey(b)
		require.NoError(t, err, name)
		require.Equal(t, payloadKey(&p), got, name)
	}
}

// FuzzRawPayloadKey: whatever bytes unmarshal to a payload, their key is
// the payload's.
func FuzzRawPayloadKey(f *testing.F) {
	for _, p := range []*commonpb.Payload{
		{},
		{Data: []byte("x")},
		{Metadata: map[string][]byte{"encoding": []byte("json/plain"), "k": []byte("v")}, Data: []byte(`"x"`)},
	} {
		b, err := proto.Marshal(p)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p commonpb.Payload
		if proto.Unmarshal(b, &p) != nil {
			return
		}
		got, err := rawPayloadKey(b)
		require.NoError(t, err)
		require.Equal(t, payloadKey(&p), got)
	})
}
