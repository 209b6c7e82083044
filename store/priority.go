package store

import (
	"context"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/recurhq/recur/jobs"
)

// Temporal's matching service hands out a task queue's tasks by priority
// key (jobs.PriorityWrite). When many jobs fall due together, their
// workflow tasks fill the worker's queues, and a write's task would wait
// behind all of them: so a collection's workflow runs at priorityWrite
// (its writes, admissions and claims are few and someone waits for each),
// and a job's runs at priorityWrite only while a write of this process to
// it is in flight and for lingerFor after the last (writePriority), at the
// default otherwise, so that its occurrences queue with everyone's. A
// raise costs two calls and two history events, so a job is raised only
// while this process's writes are slow (slowWrite, busyFor) or the task
// queue's workflow tasks wait as long (backlogged): never on an idle
// server, where `recur apply` may PUT thousands of unchanged jobs; and a
// job written again before it is lowered is not raised again: a client
// that writes a job every few seconds during a burst pays for one raise,
// not one a write. The linger is short because another process (an API
// replica, a worker telling the job of its collection) may lower the job
// meanwhile, and this one's writes go at the default priority until it
// raises the job again.
const priorityWrite = jobs.PriorityWrite

const (
	// slowWrite is the time past which a write to a job shows its tasks
	// queued behind others'.
	slowWrite = 250 * time.Millisecond
	// busyFor is how long after a slow write the writes to jobs are
	// raised.
	busyFor = time.Minute
	// lingerFor is how long a job stays raised after its last write: a
	// client's next write to a job it works on comes within seconds.
	lingerFor = 10 * time.Second
	// backlogEvery is how often, at most, writes ask the server how long
	// the task queue's workflow tasks wait (backlogged).
	backlogEvery = time.Second
)

// writePriority raises the priority of the job workflows that writes of
// this process are in flight to, and lowers it again linger after the
// last of them has answered. A process that stops leaves the jobs it
// raised at priorityWrite: they run ahead of the others, and decide
// nothing.
type writePriority struct {
	// set sets the priority key of a workflow's run (the current one for
	// run ""); run names the run of a workflow last seen running.
	set func(ctx context.Context, workflowID, run string, key int32) error
	run func(workflowID string) string
	// backlog returns how long the oldest workflow task waiting on the
	// task queue has waited; nil asks nothing.
	backlog func(ctx context.Context) (time.Duration, error)

	mu          sync.Mutex
	jobs        map[string]*written // by workflow ID
	collections map[string]bool     // the collection workflows raised, by ID
	busyUntil   time.Time           // writes to jobs are raised until then
	checked     time.Time           // when the server last said how long its tasks wait, or failed to
	checking    chan struct{}       // closed when the backlog's check on its way ends; nil when none runs
	now         func() time.Time
	linger      time.Duration // how long a job stays raised after its last write
}

// written is a job workflow writes are in flight to, or whose priority is
// being lowered.
type written struct {
	inFlight int
	answered int           // how many times the writes in flight fell to none: the lowering due is the last one's
	raised   string        // the run a raise went through for, when no lowering has run since
	lowering chan struct{} // closed when the call lowering it has returned; nil when none runs
}

func newWritePriority(s *Store) *writePriority {
	return &writePriority{set: s.prioritize, backlog: s.taskQueueBacklog, jobs: map[string]*written{}, collections: map[string]bool{},
		now: time.Now, linger: lingerFor, run: func(workflowID string) string { run, _ := s.runs.get(workflowID); return run }}
}

// raise marks a write to workflowID in flight: to a job, raised at once
// while writes are busy or the task queue is backlogged, or once it has
// waited slowWrite (raiseJob); the returned func marks it answered. A job
// workflow that is not running (a PUT creating the job) is raised by
// nothing, and the write goes on at the default priority when the raise
// fails: the priority orders the write's tasks, it decides nothing. A
// collection's workflow, which starts at priorityWrite, is raised once a
// process and never lowered: one started before collections started so
// runs at the default until then.
func (p *writePriority) raise(ctx context.Context, workflowID string) (lower func()) {
	if strings.HasPrefix(workflowID, collectionWorkflowPrefix) {
		p.mu.Lock()
		raised := p.collections[workflowID]
		p.collections[workflowID] = true
		p.mu.Unlock()
		if !raised {
			_ = p.set(ctx, workflowID, "", priorityWrite)
		}
		return func() {}
	}
	if !strings.HasPrefix(workflowID, jobWorkflowPrefix) {
		return func() {}
	}
	started := p.now()
	if p.busyAt(started) || p.backlogged(ctx) {
		answered := p.raiseJob(ctx, workflowID)
		return func() { p.timed(started); answered() }
	}
	// A write on a server not known to be busy goes at the default; one
	// still unanswered after slowWrite marks the writes busy and raises
	// its job then. The task it queued at the default stays there, but a
	// workflow task that waits past its schedule-to-start timeout (a sticky
	// queue's, 5 s on a cluster) is made again on the task queue at the
	// job's priority of then, where it would otherwise wait behind the
	// whole burst.
	var (
		mu           sync.Mutex
		done         bool
		answeredLate func()
	)
	late := time.AfterFunc(slowWrite, func() {
		p.busyFrom(p.now())
		answered := p.raiseJob(ctx, workflowID)
		mu.Lock()
		answeredLate = answered
		answerNow := done
		mu.Unlock()
		if answerNow {
			answered()
		}
	})
	return func() {
		late.Stop()
		p.timed(started)
		mu.Lock()
		done = true
		answered := answeredLate
		mu.Unlock()
		if answered != nil {
			answered()
		}
	}
}

// raiseJob marks a write to the job workflow workflowID in flight,
// raising its priority if it is the first and the job is not raised yet;
// the returned func marks it answered, lowering the priority again linger
// after the last one, unless another write has come by then. A raise
// waits for a lowering call still on its way, which would otherwise land
// after it.
func (p *writePriority) raiseJob(ctx context.Context, workflowID string) (answered func()) {
	p.mu.Lock()
	w := p.jobs[workflowID]
	if w == nil {
		w = &written{}
		p.jobs[workflowID] = w
	}
	w.inFlight++
	first, lowering := w.inFlight == 1, w.lowering
	p.mu.Unlock()
	if first {
		if lowering != nil {
			select {
			case <-lowering:
			case <-ctx.Done():
			}
		}
		// A priority is a run's: a job deleted and defined again, or
		// continued as new, runs anew at the default.
		run := p.run(workflowID)
		p.mu.Lock()
		raised := run != "" && w.raised == run
		p.mu.Unlock()
		if !raised && p.set(ctx, workflowID, run, priorityWrite) == nil {
			p.mu.Lock()
			w.raised = run
			p.mu.Unlock()
		}
	}
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if w.inFlight--; w.inFlight == 0 {
			w.answered++
			answered := w.answered
			// The answer does not wait for it.
			time.AfterFunc(p.linger, func() { p.lower(workflowID, w, answered) })
		}
	}
}

// timed marks the writes to jobs busy for busyFor when one begun at
// started took longer than slowWrite.
func (p *writePriority) timed(started time.Time) {
	if now := p.now(); now.Sub(started) > slowWrite {
		p.busyFrom(now)
	}
}

// busyAt reports whether the writes to jobs are busy at t.
func (p *writePriority) busyAt(t time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return t.Before(p.busyUntil)
}

// backlogged reports whether the task queue's workflow tasks wait longer
// than slowWrite, as the server said at most backlogEvery ago, marking
// the writes busy when they do. A write queued there at the default
// priority (to a job its worker does not hold, or whose delayed first
// task has not run) waits behind them all: raised late, its update's
// task, made before the raise, moves to the raised priority only at its
// 5 s schedule-to-start timeout. A write on a server not known to be busy
// waits for the check, which the writes of that moment share; a server
// that takes longer than slowWrite to say is busy too.
func (p *writePriority) backlogged(ctx context.Context) bool {
	if p.backlog == nil {
		return false
	}
	p.mu.Lock()
	if p.now().Sub(p.checked) < backlogEvery {
		p.mu.Unlock()
		return false
	}
	done := p.checking
	if done == nil {
		done = make(chan struct{})
		p.checking = done
		go p.checkBacklog(done)
	}
	p.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return p.busyAt(p.now())
}

// checkBacklog asks the server how long its tasks wait, marks the writes
// busy when that is longer than slowWrite or the answer is, and closes
// done.
func (p *writePriority) checkBacklog(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), slowWrite)
	age, err := p.backlog(ctx)
	late := err != nil && ctx.Err() != nil
	cancel()
	if age > slowWrite || late {
		p.busyFrom(p.now())
	}
	p.mu.Lock()
	p.checked, p.checking = p.now(), nil
	p.mu.Unlock()
	close(done)
}

// busyFrom marks the writes to jobs busy for busyFor from now.
func (p *writePriority) busyFrom(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busyUntil = now.Add(busyFor)
}

// lower sets the default priority of workflowID's current run, not the
// one raised (a run that continued as new passed the raised priority on),
// unless a write is in flight to it again, or writes came and went after
// the one whose answer asked for this lowering (answered), whose own
// lowering is the one due.
func (p *writePriority) lower(workflowID string, w *written, answered int) {
	p.mu.Lock()
	if w.inFlight > 0 || w.answered != answered {
		p.mu.Unlock()
		return
	}
	done := make(chan struct{})
	w.lowering = done
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), lowerTimeout)
	_ = p.set(ctx, workflowID, "", 0)
	cancel()
	p.mu.Lock()
	w.raised = ""
	close(done)
	w.lowering = nil
	if w.inFlight == 0 {
		delete(p.jobs, workflowID)
	}
	p.mu.Unlock()
}

// The prefixes of every job's and collection's workflow ID
// (jobs.Key.JobWorkflowID, CollectionWorkflowID).
const (
	jobWorkflowPrefix        = "job:"
	collectionWorkflowPrefix = "collection:"
)

// lowerTimeout bounds the call that lowers a job's priority after a write.
const lowerTimeout = 30 * time.Second

// taskQueueBacklog returns how long the oldest workflow task waiting on
// recur's task queue has waited, as Temporal's matching service reports
// it (its sticky queues, one per worker, are not in it).
func (s *Store) taskQueueBacklog(ctx context.Context) (time.Duration, error) {
	resp, err := s.temporal.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace:     s.namespace,
		TaskQueue:     &taskqueuepb.TaskQueue{Name: jobs.TaskQueue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_WORKFLOW,
		ReportStats:   true,
	})
	if err != nil {
		return 0, err
	}
	return resp.GetStats().GetApproximateBacklogAge().AsDuration(), nil
}

// prioritize sets the priority key of workflowID's run (the current one
// when run is ""); 0 is the default.
func (s *Store) prioritize(ctx context.Context, workflowID, run string, key int32) error {
	return jobs.SetPriority(ctx, s.temporal.WorkflowService(), s.namespace, workflowID, run, key)
}
