package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAnUpdateSentOutlivesItsCallerWithItsSlotAndRaise: a caller that
// goes away while its update is being sent gets its error at once, and
// the update goes on holding its slot of the workflow's and its raised
// priority until it ends, as it is in flight until then.
func TestAnUpdateSentOutlivesItsCallerWithItsSlotAndRaise(t *testing.T) {
	r := newRecordingPriority()
	defer close(r.release)
	s := &Store{updates: newUpdateSemaphore(), priority: r.writePriority}
	const job = "job:s/rg/c/j"
	ctx, cancel := context.WithCancel(context.Background())
	started, finish, ended := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	returned := make(chan error, 1)
	go func() {
		returned <- s.sending(ctx, job, func(ctx context.Context) error {
			close(started)
			<-finish
			ended <- ctx.Err()
			return nil
		})
	}()
	<-started
	cancel()
	require.ErrorIs(t, <-returned, context.Canceled, "the caller stops waiting")

	inFlight := func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		if w := r.jobs[job]; w != nil {
			return w.inFlight
		}
		return 0
	}
	require.Equal(t, 1, inFlight(), "the job stays raised while its update is sent")
	for range updateSlots - 1 {
		leave, err := s.updates.enter(context.Background(), job)
		require.NoError(t, err)
		defer leave()
	}
	full, cancelFull := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelFull()
	_, err := s.updates.enter(full, job)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the update sent still holds its slot")

	close(finish)
	require.NoError(t, <-ended, "the caller's going away canceled the send")
	leave, err := s.updates.enter(context.Background(), job)
	require.NoError(t, err, "the slot is given back once the update ends")
	leave()
	require.Eventually(t, func() bool { return inFlight() == 0 }, time.Second, 10*time.Millisecond)
}
