package store

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
)

// The store reads job lists from the response's bytes (rawmemo.go), with a
// codec of its own for those calls. The codec reaches the call through
// the context and LeanLists, an interceptor of the store's Temporal client,
// rather than being passed to the call: the SDK's ListWorkflow, which
// retries a throttled list, takes no call options. A client without the
// interceptor unmarshals lists whole.

// LeanLists is the dial option the store's Temporal client needs for
// its lean lists (visitMemos); see ConnectionOptions.DialOptions.
func LeanLists() grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if lean, ok := ctx.Value(leanKey{}).(grpc.CallOption); ok {
			opts = append(opts, lean)
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
}

type leanKey struct{}

// withLean returns ctx for a call made with the call option lean.
func withLean(ctx context.Context, lean grpc.CallOption) context.Context {
	return context.WithValue(ctx, leanKey{}, lean)
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
