package jobs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

type sendingKey struct{}

func TestSendOutlivesTheCallersCancellationNotItsDeadline(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	caller, cancel := context.WithDeadline(context.WithValue(context.Background(), sendingKey{}, "v"), deadline)
	sent := make(chan context.Context, 1)
	release := make(chan struct{})
	finished := make(chan error, 1)
	go func() {
		err := jobs.Send(caller, func(ctx context.Context) error {
			sent <- ctx
			<-release
			finished <- ctx.Err()
			return nil
		})
		assert.ErrorIs(t, err, context.Canceled, "the caller stops waiting once it is canceled")
		close(release)
	}()
	ctx := <-sent
	got, ok := ctx.Deadline()
	require.True(t, ok)
	require.Equal(t, deadline, got)
	require.Equal(t, "v", ctx.Value(sendingKey{}))
	cancel()
	require.NoError(t, <-finished, "the caller's cancellation ended the send")

	v := 0
	err := jobs.Send(context.Background(), func(ctx context.Context) error {
		got, ok := ctx.Deadline()
		assert.True(t, ok, "a send for a caller with no deadline is bounded")
		assert.WithinDuration(t, time.Now().Add(time.Minute), got, 5*time.Second)
		v = 2
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 2, v, "what the send wrote, read once Send returned nil")

	soon, cancelSoon := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancelSoon()
	err = jobs.Send(soon, func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	require.ErrorIs(t, err, context.DeadlineExceeded, "the deadline ends the send")
}

// TestSendWaitsPastTheDeadlineForASendThatGoesOn: a send may ask, past
// its caller's deadline, for the outcome of an update it sent in time;
// Send returns what it finds, until OutcomeGrace after the deadline, and
// the caller's error after that.
func TestSendWaitsPastTheDeadlineForASendThatGoesOn(t *testing.T) {
	soon, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := jobs.Send(soon, func(ctx context.Context) error {
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond) // asking for the outcome
		return errors.New("the outcome")
	})
	require.EqualError(t, err, "the outcome")

	soon, cancel = context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	began := time.Now()
	release := make(chan struct{})
	defer close(release)
	err = jobs.Send(soon, func(ctx context.Context) error {
		<-release
		return nil
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.GreaterOrEqual(t, time.Since(began), jobs.OutcomeGrace, "it waited the grace out")
}

func TestASendThatPanicsReturnsItsPanicAsItsError(t *testing.T) {
	err := jobs.Send(context.Background(), func(context.Context) error { panic("boom") })
	require.ErrorContains(t, err, "boom")
}
