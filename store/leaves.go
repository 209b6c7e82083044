package store

import (
	"context"
	"slices"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/recurhq/recur/jobs"
)

// A job's DELETE answers while the job's request to forget it is on its
// way to its collection (workflows, job.delete): a PUT of a new job into
// the same collection right after may reach the collection first and, were
// the collection full, be refused for its quota though the DELETE has
// answered; and a PUT of the name deleted, asked while the name is still
// held, would be answered as a name held, its job asking the collection
// itself once the request has arrived, when the slot may be gone. So this
// process remembers the job workflows it deleted for leaveTransit: before
// it asks to admit a name among them, it waits until that job's workflow
// has ended (and the request has arrived), and asks again while the
// collection, which has yet to take the request, answers that it holds
// the name; before it refuses a PUT for its collection's quota it waits
// until the requests have arrived, and asks once more. A DELETE
// answered by another API process is not known here: a PUT through this
// one within the moment the request takes to arrive may be refused.

// leaveTransit is how long a deleted job's request to forget it is waited
// for: it arrives within milliseconds unless Temporal is swamped.
const leaveTransit = 10 * time.Second

// leaves are the job workflows this process deleted lately, by their
// collection's workflow ID.
type leaves struct {
	mu           sync.Mutex
	byCollection map[string][]deletedJob
	now          func() time.Time
}

// deletedJob is a job workflow's run this process deleted, and when;
// arrived once its request to forget the job is known to have arrived.
type deletedJob struct {
	workflowID, run string
	at              time.Time
	arrived         bool
}

func newLeaves() *leaves { return &leaves{byCollection: map[string][]deletedJob{}, now: time.Now} }

// add remembers the run of k's job workflow that a DELETE has answered
// from.
func (l *leaves) add(k jobs.Key, run string) {
	l.edit(k, func(ds []deletedJob) []deletedJob {
		return append(ds, deletedJob{workflowID: k.JobWorkflowID(), run: run, at: l.now()})
	})
}

// edit replaces the jobs of k's collection deleted within leaveTransit
// with what f makes of them; the older ones are forgotten.
func (l *leaves) edit(k jobs.Key, f func([]deletedJob) []deletedJob) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := k.CollectionWorkflowID()
	if ds := f(l.recent(id)); len(ds) > 0 {
		l.byCollection[id] = ds
	} else {
		delete(l.byCollection, id)
	}
}

// recent returns a copy of the jobs of the collection id deleted within
// leaveTransit. l.mu is held.
func (l *leaves) recent(id string) []deletedJob {
	since := l.now().Add(-leaveTransit)
	return slices.DeleteFunc(slices.Clone(l.byCollection[id]), func(d deletedJob) bool { return d.at.Before(since) })
}

// inTransit returns the jobs of k's collection deleted within leaveTransit
// whose requests are not known to have arrived.
func (l *leaves) inTransit(k jobs.Key) []deletedJob {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.DeleteFunc(l.recent(k.CollectionWorkflowID()), func(d deletedJob) bool { return d.arrived })
}

// run returns the run of k's job workflow deleted within leaveTransit.
func (l *leaves) run(k jobs.Key) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.recent(k.CollectionWorkflowID()) {
		if d.workflowID == k.JobWorkflowID() {
			return d.run, true
		}
	}
	return "", false
}

// deleted reports whether k's job was deleted within leaveTransit.
func (l *leaves) deleted(k jobs.Key) bool {
	_, ok := l.run(k)
	return ok
}

// forget forgets k's job: its name is free in the collection.
func (l *leaves) forget(k jobs.Key) {
	l.edit(k, func(ds []deletedJob) []deletedJob {
		return slices.DeleteFunc(ds, func(d deletedJob) bool { return d.workflowID == k.JobWorkflowID() })
	})
}

// arrive marks the requests of the deleted jobs ds arrived.
func (l *leaves) arrive(k jobs.Key, ds []deletedJob) {
	l.edit(k, func(all []deletedJob) []deletedJob {
		for i, d := range all {
			if slices.ContainsFunc(ds, func(a deletedJob) bool { return a.workflowID == d.workflowID && a.run == d.run }) {
				all[i].arrived = true
			}
		}
		return all
	})
}

// awaitLeaves waits until the requests to forget the jobs this process
// deleted lately in k's collection have arrived there, for leaveTransit at
// most, and reports whether any were on their way: a refusal for the
// quota is then asked again.
func (s *Store) awaitLeaves(ctx context.Context, k jobs.Key) bool {
	ds := s.leaves.inTransit(k)
	if len(ds) == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, leaveTransit)
	defer cancel()
	var wg sync.WaitGroup
	for _, d := range ds {
		wg.Go(func() { s.leaveArrived(ctx, d) })
	}
	wg.Wait()
	if ctx.Err() == nil {
		s.leaves.arrive(k, ds)
	}
	return true
}

// awaitDeleted waits, for leaveTransit at most, until the workflow of k's
// job this process deleted lately has ended, which it does once its
// request to forget the job has arrived: a new job of the name starts only
// then, and its collection, which takes a request in the order it
// arrived, no longer holds the name.
func (s *Store) awaitDeleted(ctx context.Context, k jobs.Key) {
	run, ok := s.leaves.run(k)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, leaveTransit)
	defer cancel()
	_ = s.temporal.GetWorkflow(ctx, k.JobWorkflowID(), run).Get(ctx, nil) // how it ended is the DELETE's business
}

// leaveArrived waits until the request to forget the deleted job d, the
// first signal its workflow sent after it took the DELETE, has reached the
// collection, as the workflow's history shows (Temporal records a signal's
// delivery in its sender's history), or the workflow has closed, which it
// does only once the request has arrived; or until ctx ends.
func (s *Store) leaveArrived(ctx context.Context, d deletedJob) {
	events := s.temporal.GetWorkflowHistory(ctx, d.workflowID, d.run, true, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	deleted := false
	var leave int64 // the signal's initiated event
	for events.HasNext() {
		e, err := events.Next()
		if err != nil {
			return
		}
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			deleted = deleted || e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput().GetName() == jobs.UpdateDeleteJob
		case enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
			if deleted && leave == 0 {
				leave = e.GetEventId()
			}
		case enumspb.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED:
			if leave != 0 && e.GetExternalWorkflowExecutionSignaledEventAttributes().GetInitiatedEventId() == leave {
				return
			}
		case enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED:
			if leave != 0 && e.GetSignalExternalWorkflowExecutionFailedEventAttributes().GetInitiatedEventId() == leave {
				return
			}
		}
	}
}
