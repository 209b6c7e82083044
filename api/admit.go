package api

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/recurhq/recur/jobs"
)

// admission asks the job's collection to admit a new job ahead of its
// PUT (jobs.AdmitRequest), so that the job defines itself in the workflow
// task that takes the PUT: without it, the job's workflow asks its
// collection by signal and waits for the answer, three workflow tasks of
// the job instead of one. It returns nil, asking nothing, for a job whose
// workflow this process saw running (a redefinition: the job's terms
// mostly allow it), and when the collection holds the name already; the
// job then asks itself if it must. A refusal is the collection's error.
func (s *Server) admission(ctx context.Context, k jobs.Key, job jobs.Job) (*jobs.Admission, error) {
	if _, ok := s.runs.get(k.JobWorkflowID()); ok {
		return nil, nil
	}
	req := jobs.MembershipRequest{Job: k.Job, ShortestGap: jobs.ShortestGap(job, time.Now().UTC().Truncate(time.Second))}
	answer, err := s.admissions.ask(ctx, s, k, req)
	if err != nil {
		if isNotFound(err) {
			return nil, &jobs.Error{Code: jobs.CodeCollectionMissing, Message: "job collection " + k.Collection + " was not found"}
		}
		return nil, err
	}
	if answer.Error != nil {
		return nil, answer.Error
	}
	return answer.Admission, nil
}

// admitAttempt bounds one try of an admission. An update the collection's
// workflow took as it continued as new is aborted, and the wait for its
// outcome may never end: the admissions are asked again, in an update of
// their own. One the first try made counts once, and is answered without
// an admission (its PUT's job asks the collection itself).
const admitAttempt = 10 * time.Second

// errAdmissionLost is a try of an admission that outlived admitAttempt.
var errAdmissionLost = errors.New("the collection did not answer the admission in time")

// admissionLost reports whether an admission is to be asked again.
func admissionLost(err error) bool { return aborted(err) || errors.Is(err, errAdmissionLost) }

// admissions gathers the admissions asked of each collection while one
// waits for a slot (updateSemaphore) into one update: a burst of PUTs
// into a collection costs its workflow a few workflow tasks, not one each,
// and keeps within Temporal's bound on updates in flight on a workflow.
type admissions struct {
	mu   sync.Mutex
	open map[string]*admitBatch // by collection workflow ID: the batch still taking requests
}

// admitBatch is the requests sent together, and their answers once done
// is closed.
type admitBatch struct {
	reqs    []jobs.MembershipRequest
	answers []jobs.AdmitAnswer
	err     error
	done    chan struct{}
}

// ask adds req to the open batch of k's collection, starting one if there
// is none, and returns its answer.
func (a *admissions) ask(ctx context.Context, s *Server, k jobs.Key, req jobs.MembershipRequest) (jobs.AdmitAnswer, error) {
	id := k.CollectionWorkflowID()
	a.mu.Lock()
	if a.open == nil {
		a.open = map[string]*admitBatch{}
	}
	b := a.open[id]
	if b == nil {
		b = &admitBatch{done: make(chan struct{})}
		a.open[id] = b
		go a.send(s, id, b)
	}
	i := len(b.reqs)
	b.reqs = append(b.reqs, req)
	a.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		return jobs.AdmitAnswer{}, ctx.Err()
	}
	if b.err != nil {
		return jobs.AdmitAnswer{}, b.err
	}
	return b.answers[i], nil
}

// send waits for a turn on the collection's workflow, closes the batch to
// new requests and sends it. It outlives the requests that wait for it
// (any of them may leave), for at most RequestTimeout.
func (a *admissions) send(s *Server, id string, b *admitBatch) {
	defer close(b.done)
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	leave, err := s.updates.enter(ctx, id)
	a.mu.Lock()
	if a.open[id] == b {
		delete(a.open, id)
	}
	reqs := b.reqs
	a.mu.Unlock()
	if err != nil {
		b.err = err
		return
	}
	defer leave()
	opts := updateOptions(jobs.UpdateAdmit, jobs.AdmitRequest{Jobs: reqs})
	opts.WorkflowID = id
	var answers []jobs.AdmitAnswer
	err = retrying(ctx, admissionLost, func() error {
		actx, cancel := context.WithTimeout(ctx, admitAttempt)
		defer cancel()
		err := s.updateRunning(actx, opts, &answers)
		if err != nil && actx.Err() != nil && ctx.Err() == nil {
			return errAdmissionLost
		}
		return err
	})
	if err == nil && len(answers) != len(reqs) {
		err = fmt.Errorf("collection %s answered %d admissions of %d", id, len(answers), len(reqs))
	}
	b.answers, b.err = answers, err
}
