package api

import (
	"context"
	"fmt"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A page of a job list reads a hundred executions from visibility and
// needs only two fields of each: its workflow ID and its memo. Decoded
// whole, each execution also costs its search attributes (a map of
// payloads, each with a map of metadata), its timestamps, type, task
// queue and root execution: most of the API's share of a list's CPU and
// garbage. leanExecutions drops those fields from the response's bytes
// before they are decoded, so that they are never allocated.
//
// The option reaches the call through the context and LeanLists, an
// interceptor of the API's Temporal client, rather than being passed to
// the call: the SDK's ListWorkflow, which retries a throttled list, takes
// no call options. A client without the interceptor decodes lists whole.

// LeanLists is the dial option the API's Temporal client needs for the
// API's lean lists (leanExecutions); see ConnectionOptions.DialOptions.
func LeanLists() grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if lean, ok := ctx.Value(leanKey{}).(grpc.CallOption); ok {
			opts = append(opts, lean)
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
}

type leanKey struct{}

// withLean returns ctx for a list whose executions are decoded with only
// the fields of lean (leanExecutions).
func withLean(ctx context.Context, lean grpc.CallOption) context.Context {
	return context.WithValue(ctx, leanKey{}, lean)
}

// leanExecutions is a call option for ListWorkflowExecutions whose
// response keeps, of each execution, only the fields named.
func leanExecutions(keep ...protoreflect.Name) grpc.CallOption {
	fields := (&workflowpb.WorkflowExecutionInfo{}).ProtoReflect().Descriptor().Fields()
	kept := map[protowire.Number]bool{}
	for _, name := range keep {
		f := fields.ByName(name)
		if f == nil {
			panic(fmt.Sprintf("WorkflowExecutionInfo has no field %s", name))
		}
		kept[f.Number()] = true
	}
	return grpc.ForceCodecV2(leanCodec{CodecV2: encoding.GetCodecV2("proto"), kept: kept})
}

// executionsField is the response's field of executions.
var executionsField = (&workflowservice.ListWorkflowExecutionsResponse{}).ProtoReflect().Descriptor().
	Fields().ByName("executions").Number()

// leanCodec is the proto codec, but for a ListWorkflowExecutionsResponse
// it decodes, of each execution, only the kept fields.
type leanCodec struct {
	encoding.CodecV2
	kept map[protowire.Number]bool
}

func (c leanCodec) Unmarshal(data mem.BufferSlice, v any) error {
	resp, ok := v.(*workflowservice.ListWorkflowExecutionsResponse)
	if !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	lean, err := c.strip(buf.ReadOnlyData())
	if err != nil {
		return fmt.Errorf("a list of workflow executions: %w", err)
	}
	return proto.Unmarshal(lean, resp)
}

// strip copies the response's fields, each execution with the kept fields
// only.
func (c leanCodec) strip(b []byte) ([]byte, error) {
	out := make([]byte, 0, len(b)/2)
	var kept []byte // an execution's kept fields, reused: AppendBytes copies them
	err := eachField(b, func(num protowire.Number, typ protowire.Type, field []byte, tag int) error {
		if num != executionsField || typ != protowire.BytesType {
			out = append(out, field...)
			return nil
		}
		execution, _ := protowire.ConsumeBytes(field[tag:])
		kept = kept[:0]
		err := eachField(execution, func(num protowire.Number, _ protowire.Type, field []byte, _ int) error {
			if c.kept[num] {
				kept = append(kept, field...)
			}
			return nil
		})
		out = protowire.AppendTag(out, num, typ)
		out = protowire.AppendBytes(out, kept)
		return err
	})
	return out, err
}

// eachField calls visit with each field of the message b: its number,
// type, bytes (tag and value) and the length of its tag.
func eachField(b []byte, visit func(num protowire.Number, typ protowire.Type, field []byte, tag int) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		if err := visit(num, typ, b[:n+m], n); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}
