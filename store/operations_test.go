package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
)

// updateHandle is a client.WorkflowUpdateHandle whose Get answers err
// after delay, or when its context ends, whichever comes first.
type updateHandle struct {
	delay time.Duration
	err   error
}

func (updateHandle) WorkflowID() string { return "collection:s/rg/c" }
func (updateHandle) RunID() string      { return "0a6c4e35-3c54-4a3c-9c8e-9b7b5d2a4e11" }
func (updateHandle) UpdateID() string   { return "4b1f8c1e-7f4a-4b9e-8f39-2d7a0c9e6b52" }
func (h updateHandle) Get(ctx context.Context, _ any) error {
	select {
	case <-time.After(h.delay):
		return h.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestAnOperationPastItsWaitRunsOn: an operation that has not ended
// when the wait runs out runs on, whether the wait's own timer ends it or
// Temporal answers first that the poll's deadline (which travels with it)
// has passed; one that ends in time has ended, and one whose Temporal
// fails otherwise returns that failure.
func TestAnOperationPastItsWaitRunsOn(t *testing.T) {
	const wait = 50 * time.Millisecond
	unavailable := serviceerror.NewUnavailable("down")
	for name, tc := range map[string]struct {
		h       updateHandle
		running bool
		err     error
	}{
		"ends in time":                    {updateHandle{delay: time.Millisecond}, false, nil},
		"the wait runs out":               {updateHandle{delay: time.Hour}, true, nil},
		"Temporal says the deadline went": {updateHandle{delay: wait - 5*time.Millisecond, err: serviceerror.NewDeadlineExceeded("deadline")}, true, nil},
		"Temporal fails":                  {updateHandle{delay: time.Millisecond, err: unavailable}, false, unavailable},
	} {
		t.Run(name, func(t *testing.T) {
			running, err := awaitUpdate(context.Background(), tc.h, wait, nil)
			if tc.err != nil {
				require.True(t, errors.Is(err, tc.err), "%v", err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.running, running)
		})
	}
}

// TestOperationIDsNameARunAndAnUpdate: an operation's ID parses back
// into the run and update it names; anything but two UUIDs is none.
func TestOperationIDsNameARunAndAnUpdate(t *testing.T) {
	h := updateHandle{}
	run, update, ok := parseOperationID(operationID(h.RunID(), h.UpdateID()))
	require.True(t, ok)
	require.Equal(t, h.RunID(), run)
	require.Equal(t, h.UpdateID(), update)
	for _, op := range []string{"", h.RunID(), h.RunID() + "." + "x", "x." + h.UpdateID()} {
		_, _, ok := parseOperationID(op)
		require.False(t, ok, op)
	}
}
