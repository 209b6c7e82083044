package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// A page of a job list reads the memos of a hundred jobs, whose payloads
// the store has mostly decoded before (decoded.go). Unmarshalling a memo
// costs a map, a payload per key with a map of metadata and copies of
// their bytes, only for each payload to be hashed and found decoded: the
// largest part of the garbage the store makes for a list. So a job list
// reads its executions from the response's bytes as they arrive
// (visitMemos): each memo's payloads are keyed from their raw bytes, and
// one is unmarshalled only when its value was never decoded.

// memoPayloads are the payloads of a memo as the store reads them: a
// describe's, unmarshalled (protoMemo), or a list's, raw (rawMemo).
type memoPayloads interface {
	// payload returns key's payload: the key its value is cached under
	// (payloadKey), and how to unmarshal it; ok is false when the memo
	// has no such key.
	payload(key string) (cacheKey string, load func() (*commonpb.Payload, error), ok bool)
}

// protoMemo is an unmarshalled memo.
type protoMemo struct{ memo *commonpb.Memo }

func (m protoMemo) payload(key string) (string, func() (*commonpb.Payload, error), bool) {
	p, ok := m.memo.GetFields()[key]
	if !ok {
		return "", nil, false
	}
	return payloadKey(p), func() (*commonpb.Payload, error) { return p, nil }, true
}

// rawMemo is a memo's fields as they came over the wire, each key with
// its payload's bytes. They alias the response's buffer: a rawMemo is
// valid only during the visit it is given to.
type rawMemo []rawMemoField

type rawMemoField struct{ key, payload []byte }

func (m rawMemo) payload(key string) (string, func() (*commonpb.Payload, error), bool) {
	// The last of a repeated key wins, as it does in proto.Unmarshal.
	for _, f := range slices.Backward(m) {
		if string(f.key) != key {
			continue
		}
		cacheKey, err := rawPayloadKey(f.payload)
		if err != nil {
			return "", func() (*commonpb.Payload, error) { return nil, err }, true
		}
		return cacheKey, func() (*commonpb.Payload, error) {
			var p commonpb.Payload
			if err := proto.Unmarshal(f.payload, &p); err != nil {
				return nil, fmt.Errorf("memo %s: %w", key, err)
			}
			return &p, nil
		}, true
	}
	return "", nil, false
}

// Field numbers of the messages a raw memo is read from; a map's entries
// are messages of a key (1) and a value (2).
var (
	executionsField     = (&workflowservice.ListWorkflowExecutionsResponse{}).ProtoReflect().Descriptor().Fields().ByName("executions").Number()
	executionInfoFields = (&workflowpb.WorkflowExecutionInfo{}).ProtoReflect().Descriptor().Fields()
	executionInfoID     = executionInfoFields.ByName("execution").Number()
	executionInfoMemo   = executionInfoFields.ByName("memo").Number()
	executionWorkflowID = (&commonpb.WorkflowExecution{}).ProtoReflect().Descriptor().Fields().ByName("workflow_id").Number()
	memoFields          = (&commonpb.Memo{}).ProtoReflect().Descriptor().Fields().ByName("fields").Number()
	payloadFields       = (&commonpb.Payload{}).ProtoReflect().Descriptor().Fields()
	payloadMetadata     = payloadFields.ByName("metadata").Number()
	payloadData         = payloadFields.ByName("data").Number()
)

const (
	mapEntryKey   protowire.Number = 1
	mapEntryValue protowire.Number = 2
)

// rawPayloadKey is payloadKey of the payload whose bytes are b, without
// unmarshalling it: its metadata entries in the order of their keys
// (the last of a repeated key), whatever order they came in.
func rawPayloadKey(b []byte) (string, error) {
	var meta []metadataEntry
	var data []byte
	err := eachBytesField(b, func(num protowire.Number, value []byte) error {
		switch num {
		case payloadMetadata:
			k, v, err := mapEntry(value)
			meta = append(meta, metadataEntry{key: k, value: v})
			return err
		case payloadData:
			data = value
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("a payload: %w", err)
	}
	// Stable, so that of a repeated key the last entry is the last one.
	slices.SortStableFunc(meta, func(a, b metadataEntry) int { return bytes.Compare(a.key, b.key) })
	kept := meta[:0]
	for i, e := range meta {
		if i+1 < len(meta) && bytes.Equal(e.key, meta[i+1].key) {
			continue
		}
		kept = append(kept, e)
	}
	return keyOfPayload(kept, data), nil
}

// mapEntry returns the key and value of a map entry whose key and value
// are length-delimited (strings, bytes, messages); of a repeated one the
// last counts, as in proto.Unmarshal.
func mapEntry(entry []byte) (key, value []byte, err error) {
	err = eachBytesField(entry, func(num protowire.Number, v []byte) error {
		switch num {
		case mapEntryKey:
			key = v
		case mapEntryValue:
			value = v
		}
		return nil
	})
	return key, value, err
}

// eachBytesField calls visit with the number and value of each
// length-delimited field of the message b (strings, bytes, messages, map
// entries).
func eachBytesField(b []byte, visit func(num protowire.Number, value []byte) error) error {
	return eachField(b, func(num protowire.Number, typ protowire.Type, field []byte, tag int) error {
		if typ != protowire.BytesType {
			return nil
		}
		value, _ := protowire.ConsumeBytes(field[tag:])
		return visit(num, value)
	})
}

// memoVisit is given each execution of a list, by visitMemos: its
// workflow ID and its memo, both valid only during the call.
type memoVisit func(workflowID []byte, memo memoPayloads)

// visitMemos returns ctx for a ListWorkflowExecutions call whose
// executions are not unmarshalled but given to visit as they are read,
// during the call; the response keeps its other fields (the next page's
// token). It needs the store's Temporal client to have LeanLists.
func visitMemos(ctx context.Context, visit memoVisit) context.Context {
	return withLean(ctx, grpc.ForceCodecV2(memoCodec{CodecV2: encoding.GetCodecV2("proto"), visit: visit}))
}

// memoCodec is the proto codec, but it gives the executions of a
// ListWorkflowExecutionsResponse to visit instead of unmarshalling them.
type memoCodec struct {
	encoding.CodecV2
	visit memoVisit
}

func (c memoCodec) Unmarshal(data mem.BufferSlice, v any) error {
	resp, ok := v.(*workflowservice.ListWorkflowExecutionsResponse)
	if !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	var rest []byte // the response's fields but its executions
	var memo rawMemo
	err := eachField(buf.ReadOnlyData(), func(num protowire.Number, typ protowire.Type, field []byte, tag int) error {
		if num != executionsField || typ != protowire.BytesType {
			rest = append(rest, field...)
			return nil
		}
		execution, _ := protowire.ConsumeBytes(field[tag:])
		var id []byte
		memo = memo[:0]
		err := eachBytesField(execution, func(num protowire.Number, value []byte) error {
			switch num {
			case executionInfoID:
				return eachBytesField(value, func(num protowire.Number, v []byte) error {
					if num == executionWorkflowID {
						id = v
					}
					return nil
				})
			case executionInfoMemo:
				return eachBytesField(value, func(num protowire.Number, entry []byte) error {
					if num != memoFields {
						return nil
					}
					key, payload, err := mapEntry(entry)
					memo = append(memo, rawMemoField{key: key, payload: payload})
					return err
				})
			}
			return nil
		})
		if err != nil {
			return err
		}
		c.visit(id, memo)
		return nil
	})
	if err != nil {
		return fmt.Errorf("a list of workflow executions: %w", err)
	}
	return proto.Unmarshal(rest, resp)
}
