package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"

	"github.com/recurhq/recur/jobs"
)

// recordingPriority is a writePriority whose calls are recorded, and
// whose calls lowering a priority wait for release.
type recordingPriority struct {
	*writePriority
	mu      sync.Mutex
	calls   []string
	release chan struct{}
}

func newRecordingPriority() *recordingPriority {
	r := &recordingPriority{release: make(chan struct{})}
	r.writePriority = &writePriority{jobs: map[string]*written{}, collections: map[string]bool{},
		now: time.Now, busyUntil: time.Now().Add(time.Hour), run: func(string) string { return "run1" },
		set: func(ctx context.Context, workflowID, run string, key int32) error {
			if key == 0 {
				<-r.release
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.calls = append(r.calls, fmt.Sprintf("%s %q %d", workflowID, run, key))
			return nil
		}}
	return r
}

func (r *recordingPriority) recorded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// TestAWritesRaiseWaitsForTheLoweringBeforeIt: a write that comes while
// the call lowering its job after the last one is on its way raises the
// priority after that call, not before it, where the lowering would undo
// it; the priority is lowered again after the second write.
func TestAWritesRaiseWaitsForTheLoweringBeforeIt(t *testing.T) {
	r := newRecordingPriority()
	const job = "job:s/rg/c/j"
	r.raise(context.Background(), job)()
	require.Eventually(t, func() bool {
		r.writePriority.mu.Lock()
		defer r.writePriority.mu.Unlock()
		return r.jobs[job].lowering != nil
	}, 5*time.Second, time.Millisecond, "the first write's lowering starts")

	raised := make(chan func())
	go func() { raised <- r.raise(context.Background(), job) }()
	select {
	case <-raised:
		t.Fatal("the second write raised the priority before the lowering before it returned")
	case <-time.After(50 * time.Millisecond):
	}
	close(r.release)
	lower := <-raised
	assert.Equal(t, []string{`job:s/rg/c/j "run1" 1`, `job:s/rg/c/j "" 0`, `job:s/rg/c/j "run1" 1`}, r.recorded())
	lower()
	require.Eventually(t, func() bool { return len(r.recorded()) == 4 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, `job:s/rg/c/j "" 0`, r.recorded()[3])
	require.Eventually(t, func() bool {
		r.writePriority.mu.Lock()
		defer r.writePriority.mu.Unlock()
		return len(r.jobs) == 0
	}, 5*time.Second, time.Millisecond, "nothing kept of a job no write is in flight to")
}

// TestWritesInFlightTogetherRaiseOnce: two writes in flight to one job
// raise it once and lower it once, after the second; a collection's
// workflow is raised on its first write and never lowered.
func TestWritesInFlightTogetherRaiseOnce(t *testing.T) {
	r := newRecordingPriority()
	close(r.release)
	const job = "job:s/rg/c/j"
	first := r.raise(context.Background(), job)
	second := r.raise(context.Background(), job)
	r.raise(context.Background(), "collection:s/rg/c")()
	r.raise(context.Background(), "collection:s/rg/c")()
	first()
	second()
	require.Eventually(t, func() bool {
		r.writePriority.mu.Lock()
		defer r.writePriority.mu.Unlock()
		return len(r.jobs) == 0
	}, 5*time.Second, time.Millisecond)
	assert.Equal(t, []string{`job:s/rg/c/j "run1" 1`, `collection:s/rg/c "" 1`, `job:s/rg/c/j "" 0`}, r.recorded())
}

// TestAJobStaysRaisedForTheWritesAfter: a job written again within
// linger of its last write is not raised again, and is lowered once,
// linger after the last of the writes.
func TestAJobStaysRaisedForTheWritesAfter(t *testing.T) {
	r := newRecordingPriority()
	close(r.release)
	r.linger = 2 * time.Second
	const job = "job:s/rg/c/j"
	r.raise(context.Background(), job)()
	r.raise(context.Background(), job)()
	r.raise(context.Background(), job)()
	assert.Equal(t, []string{`job:s/rg/c/j "run1" 1`}, r.recorded(), "three writes, one raise")
	require.Eventually(t, func() bool { return len(r.recorded()) == 2 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, `job:s/rg/c/j "" 0`, r.recorded()[1])
	require.Eventually(t, func() bool {
		r.writePriority.mu.Lock()
		defer r.writePriority.mu.Unlock()
		return len(r.jobs) == 0
	}, 5*time.Second, time.Millisecond, "nothing kept of a job lowered")
	time.Sleep(50 * time.Millisecond)
	assert.Len(t, r.recorded(), 2, "the earlier writes' lowerings were superseded by the last's")

	r.raise(context.Background(), job)()
	assert.Equal(t, `job:s/rg/c/j "run1" 1`, r.recorded()[2], "a write after the lowering raises again")

	r.writePriority.run = func(string) string { return "run2" }
	r.raise(context.Background(), job)()
	assert.Equal(t, `job:s/rg/c/j "run2" 1`, r.recorded()[3], "a new run of the job (deleted and defined again) is raised anew")
	r.writePriority.run = func(string) string { return "" }
	r.raise(context.Background(), job)()
	r.raise(context.Background(), job)()
	assert.Equal(t, []string{`job:s/rg/c/j "" 1`, `job:s/rg/c/j "" 1`}, r.recorded()[4:], "with no run known, each write raises the current one")
}

// TestJobsAreRaisedOnlyWhileWritesAreSlow: on an idle server a write to
// a job raises nothing (no call, no history event); one slower than
// slowWrite makes the next writes raise their jobs for busyFor.
func TestJobsAreRaisedOnlyWhileWritesAreSlow(t *testing.T) {
	r := newRecordingPriority()
	close(r.release)
	clock := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return clock }
	r.busyUntil = time.Time{}
	const job = "job:s/rg/c/j"
	r.raise(context.Background(), job)()
	assert.Empty(t, r.recorded(), "a write on an idle server")

	lower := r.raise(context.Background(), job)
	clock = clock.Add(slowWrite + time.Millisecond)
	lower()
	assert.Empty(t, r.recorded(), "the slow write itself was sent at the default priority")

	r.raise(context.Background(), job)()
	require.Eventually(t, func() bool { return len(r.recorded()) == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, []string{`job:s/rg/c/j "run1" 1`, `job:s/rg/c/j "" 0`}, r.recorded(), "a write after a slow one")

	clock = clock.Add(busyFor)
	r.raise(context.Background(), job)()
	time.Sleep(20 * time.Millisecond)
	assert.Len(t, r.recorded(), 2, "a write busyFor after the last slow one raises nothing")
}

// TestAWriteThatWaitsIsRaisedThen: on a server not known to be busy, a
// write still unanswered after slowWrite raises its job then and marks
// the writes busy; its answer lowers it as any raised write's does. One
// answered sooner raises nothing.
func TestAWriteThatWaitsIsRaisedThen(t *testing.T) {
	r := newRecordingPriority()
	close(r.release)
	r.busyUntil = time.Time{}
	const job = "job:s/rg/c/j"
	r.raise(context.Background(), job)()
	time.Sleep(2 * slowWrite)
	assert.Empty(t, r.recorded(), "a write answered at once")

	answered := r.raise(context.Background(), job)
	require.Eventually(t, func() bool { return len(r.recorded()) == 1 }, 5*time.Second, time.Millisecond,
		"a write unanswered after slowWrite is raised")
	assert.Equal(t, `job:s/rg/c/j "run1" 1`, r.recorded()[0])
	r.writePriority.mu.Lock()
	busy := r.now().Before(r.busyUntil)
	r.writePriority.mu.Unlock()
	assert.True(t, busy, "the writes are busy from then on")
	answered()
	require.Eventually(t, func() bool { return len(r.recorded()) == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, `job:s/rg/c/j "" 0`, r.recorded()[1], "lowered after its answer")
}

// withBacklog has r's writes ask age of the server's task queue, as a
// backlog that answers after wait (or at its context's end), counting
// the calls; r's server is not known to be busy.
func withBacklog(r *recordingPriority, age, wait time.Duration) (calls *atomic.Int32) {
	calls = new(atomic.Int32)
	r.busyUntil = time.Time{}
	r.backlog = func(ctx context.Context) (time.Duration, error) {
		calls.Add(1)
		select {
		case <-time.After(wait):
			return age, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return calls
}

// TestABackloggedTaskQueueRaisesAWriteBeforeItIsSent: on a server not
// known to be busy, a write to a job whose task queue has workflow tasks
// waiting longer than slowWrite raises its job before it is sent (raise
// returns), and marks the writes busy; the writes of that moment share
// one call asking.
func TestABackloggedTaskQueueRaisesAWriteBeforeItIsSent(t *testing.T) {
	r := newRecordingPriority()
	close(r.release)
	calls := withBacklog(r, 20*time.Second, 20*time.Millisecond)
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() {
			answered := r.raise(context.Background(), fmt.Sprintf("job:s/rg/c/j%d", i))
			assert.Len(t, slices.DeleteFunc(r.recorded(), func(c string) bool { return !strings.Contains(c, fmt.Sprintf("/j%d ", i)) }), 1,
				"job %d raised before its write was sent", i)
			answered()
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, calls.Load(), "the writes of one moment ask once")
	assert.True(t, r.busyAt(r.now()), "the writes are busy from then on")
	r.raise(context.Background(), "job:s/rg/c/j9")()
	assert.EqualValues(t, 1, calls.Load(), "busy writes ask nothing")
}

// TestAnIdleTaskQueueRaisesNothingAndIsAskedAtMostEverySecond: writes
// to jobs whose task queue has no backlog raise nothing; they ask again
// only backlogEvery after the last answer.
func TestAnIdleTaskQueueRaisesNothingAndIsAskedAtMostEverySecond(t *testing.T) {
	r := newRecordingPriority()
	close(r.release)
	clock := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return clock }
	calls := withBacklog(r, 10*time.Millisecond, 0)
	for range 10 {
		r.raise(context.Background(), "job:s/rg/c/j")()
	}
	assert.EqualValues(t, 1, calls.Load())
	clock = clock.Add(backlogEvery)
	r.raise(context.Background(), "job:s/rg/c/j")()
	assert.EqualValues(t, 2, calls.Load(), "asked again backlogEvery later")
	assert.Empty(t, r.recorded(), "nothing raised")
}

// TestAServerSlowToSayHowLongItsTasksWaitIsBusy: a check the server does
// not answer within slowWrite raises the write that waited for it.
func TestAServerSlowToSayHowLongItsTasksWaitIsBusy(t *testing.T) {
	r := newRecordingPriority()
	close(r.release)
	withBacklog(r, 0, time.Hour)
	answered := r.raise(context.Background(), "job:s/rg/c/j")
	assert.Equal(t, []string{`job:s/rg/c/j "run1" 1`}, r.recorded())
	answered()
}

// TestTaskQueueBacklogIsTheServers: the backlog a write asks about is
// the age of the oldest workflow task Temporal holds on recur's task
// queue: none on a new server, growing while nobody polls.
func TestTaskQueueBacklogIsTheServers(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	c := ts.GetDefaultClient()
	ctx := t.Context()
	s := New(c, Options{Namespace: ts.GetDefaultNamespace()})
	age, err := s.taskQueueBacklog(ctx)
	require.NoError(t, err)
	assert.Zero(t, age, "a new server's")
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "job:s/rg/c/j", TaskQueue: jobs.TaskQueue}, "AnyWorkflow")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		age, err = s.taskQueueBacklog(ctx)
		return err == nil && age > slowWrite
	}, 30*time.Second, 100*time.Millisecond, "a task nobody takes waits longer and longer: %s, %v", age, err)
}

// TestPrioritizeSetsTheRunsPriority: Temporal takes the priority a raise
// and a lowering set, as a workflow task made after each takes it.
func TestPrioritizeSetsTheRunsPriority(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	c := ts.GetDefaultClient()
	ctx := t.Context()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "job:s/rg/c/j", TaskQueue: "nobody-polls"}, "AnyWorkflow")
	require.NoError(t, err)
	s := New(c, Options{Namespace: ts.GetDefaultNamespace()})
	priority := func() int32 {
		d, err := c.DescribeWorkflowExecution(ctx, run.GetID(), "")
		require.NoError(t, err)
		return d.GetWorkflowExecutionInfo().GetPriority().GetPriorityKey()
	}
	require.NoError(t, s.prioritize(ctx, run.GetID(), run.GetRunID(), priorityWrite))
	assert.EqualValues(t, priorityWrite, priority())
	require.NoError(t, s.prioritize(ctx, run.GetID(), "", 0))
	assert.Zero(t, priority())
}
