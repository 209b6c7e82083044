package store

import (
	"context"
	"errors"
	"strings"

	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// How Temporal's errors read: what the API answers for each is its own to
// decide (api's writeError).

// Unreachable reports whether err says Temporal could not be reached or did
// not answer in time, as opposed to an answer.
func Unreachable(err error) bool {
	var (
		unavailable *serviceerror.Unavailable
		deadline    *serviceerror.DeadlineExceeded
	)
	if errors.As(err, &unavailable) || errors.As(err, &deadline) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	switch grpcstatus.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return false
}

// Refused reports whether Temporal answered ResourceExhausted: a namespace
// or host rate limit, an overloaded host or a busy workflow. The same code
// from gRPC itself (a message too large) is not a refusal to retry.
func Refused(err error) bool {
	var re *serviceerror.ResourceExhausted
	return errors.As(err, &re)
}

// transient reports whether err is an answer the SDK retries: Temporal
// unavailable, or refusing for a moment (Refused).
func transient(err error) bool {
	var unavailable *serviceerror.Unavailable
	return errors.As(err, &unavailable) || grpcstatus.Code(err) == codes.Unavailable || Refused(err)
}

// UnmappedSearchAttribute reports whether err is the frontend refusing a
// search attribute its namespace cache has no mapping for. The server
// says so in an InvalidArgument's message only
// (namespace.CustomSearchAttributesMapper), so the message is what there
// is to match.
func UnmappedSearchAttribute(err error) bool {
	var invalid *serviceerror.InvalidArgument
	return errors.As(err, &invalid) && strings.Contains(invalid.Error(), "has no mapping defined for")
}
