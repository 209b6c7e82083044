package activities

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/recurhq/recur/jobs"
)

// target answers after the delay its query names, counts the requests it
// got and those whose caller gave up.
type target struct {
	*httptest.Server
	got, abandoned atomic.Int32
}

func newTarget(t *testing.T) *target {
	tg := &target{}
	tg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.got.Add(1)
		d, _ := time.ParseDuration(r.URL.Query().Get("after"))
		select {
		case <-time.After(d):
			w.WriteHeader(http.StatusOK)
		case <-r.Context().Done():
			tg.abandoned.Add(1)
		}
	}))
	t.Cleanup(tg.Close)
	return tg
}

func firstAttemptInput(uri string) jobs.FirstAttemptInput {
	return jobs.FirstAttemptInput{HTTP: &jobs.HTTPRequestInput{
		ActionName: jobs.MainAction, Request: jobs.HTTPRequest{URI: uri, Method: "POST"},
		OccurrenceID: "job:s/rg/c/j@2026-01-01T00:00:00Z",
		Key:          jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}, Timeout: 10 * time.Second,
	}}
}

// firstAttempt runs the local activity as a workflow task would.
func firstAttempt(t *testing.T, a *Activities, in jobs.FirstAttemptInput) (jobs.FirstAttempt, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	val, err := env.ExecuteLocalActivity(a.FirstAttempt, in)
	var out jobs.FirstAttempt
	if err == nil {
		require.NoError(t, val.Get(&out))
	}
	return out, err
}

// TestAFirstAttemptAnsweredWithinTheBudgetIsItsResult: the local activity
// returns the answer; the registry keeps nothing.
func TestAFirstAttemptAnsweredWithinTheBudgetIsItsResult(t *testing.T) {
	tg := newTarget(t)
	a := withBudget(5 * time.Second)
	out, err := firstAttempt(t, a, firstAttemptInput(tg.URL+"/?after=0s"))
	require.NoError(t, err)
	require.Empty(t, out.Queue)
	require.Equal(t, 200, out.Response.StatusCode)
	require.Equal(t, 1, out.Response.Attempt)
	require.Equal(t, 0, a.Attempts.running())
}

// TestAFirstAttemptPastTheBudgetIsHandedOffNotSentAgain: past the budget
// the local activity returns the process's queue; the request goes on,
// and the await returns its answer. The same attempt started again (a
// workflow task retried on this process) joins the request in flight.
func TestAFirstAttemptPastTheBudgetIsHandedOffNotSentAgain(t *testing.T) {
	tg := newTarget(t)
	a := withBudget(50 * time.Millisecond)
	in := firstAttemptInput(tg.URL + "/?after=500ms")
	out, err := firstAttempt(t, a, in)
	require.NoError(t, err)
	require.Equal(t, a.Attempts.Queue(), out.Queue)
	require.NotEmpty(t, out.ID)
	again, err := firstAttempt(t, a, in)
	require.NoError(t, err)
	require.Equal(t, out, again)

	resp, err := a.AwaitAttempt(context.Background(), jobs.AwaitAttemptInput{ID: out.ID})
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, int32(1), tg.got.Load(), "sent once")
	require.Equal(t, 0, a.Attempts.running())

	_, err = a.AwaitAttempt(context.Background(), jobs.AwaitAttemptInput{ID: out.ID})
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Equal(t, ErrTypeAttemptLost, appErr.Type(), "an attempt is collected once")
}

// TestAnAwaitCancelledCancelsTheAttempt: a job deleted while its attempt
// runs cancels the await, which cancels the request.
func TestAnAwaitCancelledCancelsTheAttempt(t *testing.T) {
	tg := newTarget(t)
	a := withBudget(50 * time.Millisecond)
	out, err := firstAttempt(t, a, firstAttemptInput(tg.URL+"/?after=1h"))
	require.NoError(t, err)
	require.NotEmpty(t, out.Queue)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = a.AwaitAttempt(ctx, jobs.AwaitAttemptInput{ID: out.ID})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Equal(t, ErrTypeAttemptLost, appErr.Type(), "an attempt cut short is lost with its worker")
	require.Eventually(t, func() bool { return tg.abandoned.Load() == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, 0, a.Attempts.running())
}

// TestWithoutABudgetTheFirstAttemptDeclines: nothing is sent; the
// workflow makes the attempt an activity.
func TestWithoutABudgetTheFirstAttemptDeclines(t *testing.T) {
	tg := newTarget(t)
	for _, r := range []*Attempts{nil, NewAttempts(0)} {
		a := New(localPolicy)
		a.Attempts = r // nil: no registry at all
		out, err := firstAttempt(t, a, firstAttemptInput(tg.URL+"/?after=0s"))
		require.NoError(t, err)
		require.True(t, out.Declined)
	}
	require.Equal(t, int32(0), tg.got.Load())
}

// withBudget returns activities whose first attempts have budget.
func withBudget(budget time.Duration) *Activities {
	a := New(localPolicy)
	a.Attempts = NewAttempts(budget)
	return a
}
