package worker

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
)

// TestAnAttemptTheServerCancelledEndsBenign: an attempt that fails after
// a heartbeat found it cancelled (its workflow asked, or had ended) ends
// with a benign failure, which the SDK logs at debug level; one whose
// context a stopping worker cancelled keeps its failure, to be retried.
func TestAnAttemptTheServerCancelledEndsBenign(t *testing.T) {
	failed := errors.New("Post \"http://target\": context canceled")
	for _, tc := range []struct {
		name   string
		cause  error
		benign bool
	}{
		{"cancellation requested", temporal.NewCanceledError(), true},
		{"workflow ended", serviceerror.NewNotFound("workflow execution already completed"), true},
		{"worker stopping", sdkworker.ErrWorkerShutdown, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(tc.cause)
			err := cancelled(ctx, failed)
			var appErr *temporal.ApplicationError
			if !tc.benign {
				require.Equal(t, failed, err)
				return
			}
			require.True(t, errors.As(err, &appErr), "%v", err)
			require.Equal(t, temporal.ApplicationErrorCategoryBenign, appErr.Category())
			require.True(t, appErr.NonRetryable())
		})
	}
	require.Equal(t, failed, cancelled(context.Background(), failed), "an attempt not cancelled keeps its failure")
	require.NoError(t, cancelled(context.Background(), nil))
}
