package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/recurhq/recur/jobs"
)

// PutCollection defines k's collection as req says, starting its workflow
// if none runs, in one update: first it checks the subscription has room
// for a new collection (CollectionRoom), and has this process's claims of
// the collection answered (admissions.flush). NotFound from the update
// means the workflow of a deleted collection has not ended yet; once it
// has, the update starts a new one.
func (s *Store) PutCollection(ctx context.Context, k jobs.Key, req jobs.PutCollectionRequest) (jobs.PutResult, error) {
	req.Deadline = jobs.DeadlineOf(ctx)
	if err := s.CollectionRoom(ctx, k); err != nil {
		return jobs.PutResult{}, err
	}
	if err := s.admissions.flush(ctx, s, k); err != nil {
		return jobs.PutResult{}, err
	}
	var res jobs.PutResult
	err := retrying(ctx, IsNotFound, func() error {
		var err error
		res, err = s.updateWithStart(ctx, collectionStart(k), jobs.CollectionWorkflowName, jobs.CollectionInput{Key: k}, jobs.UpdatePutCollection, req)
		return err
	})
	return res, err
}

// WhatIfCollection sends a what-if PUT of coll to k's collection, which
// its workflow refuses with the outcome the PUT would have
// (jobs.NotWritten); a collection without a workflow is a NotFound.
func (s *Store) WhatIfCollection(ctx context.Context, k jobs.Key, coll jobs.Collection, cond jobs.Preconditions) error {
	_, err := s.update(ctx, k.CollectionWorkflowID(), jobs.UpdatePutCollection,
		jobs.PutCollectionRequest{Collection: coll, Preconditions: cond, Apply: jobs.ApplyWhatIf})
	return notFoundAs(err, CollectionNamed(k))
}

// RedefineCollection stores coll as k's collection, as PutCollection
// does, but only in a workflow that runs: it creates nothing.
func (s *Store) RedefineCollection(ctx context.Context, k jobs.Key, coll jobs.Collection, cond jobs.Preconditions) (jobs.PutResult, error) {
	if err := s.admissions.flush(ctx, s, k); err != nil {
		return jobs.PutResult{}, err
	}
	var res jobs.PutResult
	err := s.updateInto(ctx, k.CollectionWorkflowID(), jobs.UpdatePutCollection,
		jobs.PutCollectionRequest{Collection: coll, Preconditions: cond, Deadline: jobs.DeadlineOf(ctx)}, &res)
	return res, err
}

// CollectionRoom refuses a PUT that would create a collection in a
// subscription that has Options.MaxCollectionsPerSubscription already; a
// PUT to a collection that exists is an update and always has room. It
// counts the running collection workflows of the subscription in the
// visibility store, as the list reads them, and so counts what the
// store shows: a collection created a moment ago may not show yet
// (concurrent PUTs may overshoot the cap by as many as are in flight),
// and one whose DELETE has not ended its workflow still counts.
func (s *Store) CollectionRoom(ctx context.Context, k jobs.Key) error {
	if s.maxCollections <= 0 {
		return nil
	}
	_, err := s.Collection(ctx, k)
	if err == nil || !IsNotFound(err) {
		return err
	}
	resp, err := s.temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
		Namespace: s.namespace,
		Query:     jobs.ScopeQuery(jobs.KindCollection, jobs.Key{Subscription: k.Subscription}, running),
	})
	if err != nil {
		return fmt.Errorf("count the subscription's job collections: %w", err)
	}
	if n := resp.GetCount(); n >= int64(s.maxCollections) {
		return &jobs.Error{Code: jobs.CodeQuotaExceeded, Message: fmt.Sprintf(
			"subscription %s has %d job collections, the most this server allows in one subscription (%d): delete one, or ask the operator to raise --max-collections-per-subscription",
			k.Subscription, n, s.maxCollections)}
	}
	return nil
}

// PutJob defines the job on its workflow, starting the workflow if need
// be, in one call: a new job's workflow starts with its definition once
// its collection admitted it, or beside the claim of its name on a lease
// (newJob, admit.go; the collection takes back a name no job took), or
// the workflow has its collection admit the definition (the quotas)
// before it takes it, so that no failure of this process can leave a job
// half defined or a collection's count wrong. job is accepted at created
// (jobs.Job.Accept). NotFound means the workflow of a deleted job with
// that name has not ended yet: once it has, a new one starts.
func (s *Store) PutJob(ctx context.Context, k jobs.Key, job jobs.Job, created time.Time, cond jobs.Preconditions, apply jobs.Apply) (jobs.PutJobResult, error) {
	var res jobs.PutJobResult
	err := retrying(ctx, IsNotFound, func() error {
		started, adm, err := s.newJob(ctx, k, job, created, cond)
		if started != nil {
			res = jobs.PutJobResult{Job: *started, Created: true}
		}
		if err != nil || started != nil {
			return err
		}
		err = s.updateWithStartInto(ctx, jobStart(k, job), jobs.JobWorkflowName, jobs.JobInput{Key: k},
			jobs.UpdatePutJob, jobs.PutJobRequest{Job: job, Preconditions: cond, Admission: adm, Apply: apply, Deadline: jobs.DeadlineOf(ctx)}, &res)
		if IsNotFound(err) {
			// The run this process remembered holds a deleted job: the
			// next try creates the job, its collection admitting it.
			s.runs.drop(k.JobWorkflowID())
		}
		return err
	})
	return res, err
}

// WhatIfJob sends a what-if PUT of job to k's workflow, which refuses it
// with the outcome the PUT would have (jobs.NotWritten); a job without a
// workflow is a NotFound.
func (s *Store) WhatIfJob(ctx context.Context, k jobs.Key, job jobs.Job, cond jobs.Preconditions) error {
	return s.updateJob(ctx, k, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job, Preconditions: cond, Apply: jobs.ApplyWhatIf})
}

// DeleteJob deletes the job in one update: its workflow has its
// collection forget it, then ends.
func (s *Store) DeleteJob(ctx context.Context, k jobs.Key, cond jobs.Preconditions) error {
	if err := s.updateJob(ctx, k, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{Preconditions: cond, Deadline: jobs.DeadlineOf(ctx)}); err != nil {
		return err
	}
	// A PUT of the name from now on creates a job: its collection must
	// admit it, and the run that was deleted ends.
	s.runs.drop(k.JobWorkflowID())
	return nil
}

// RunJob runs a job once, now.
func (s *Store) RunJob(ctx context.Context, k jobs.Key) error {
	return s.updateJob(ctx, k, jobs.UpdateRunNow, jobs.RunNowRequest{Deadline: jobs.DeadlineOf(ctx)})
}

// updateJob sends a named update to the workflow of a job, in one call:
// the workflow refuses it when it holds no job (deleted, or never
// defined), Temporal when there is no such workflow running.
func (s *Store) updateJob(ctx context.Context, k jobs.Key, name string, arg any) error {
	_, err := s.update(ctx, k.JobWorkflowID(), name, arg)
	return notFoundAs(err, JobNamed(k))
}

// PatchJob merges patch (RFC 7386 JSON merge patch) into the job's
// definition and redefines the job with the result in one update, as a
// PUT would, except that it creates nothing. The job's workflow merges
// it: it alone holds the definition's secrets. The store merges the patch
// into the definition it reads (secrets redacted) for check, which may
// refuse the result, and names what it read as the update's base: a job
// redefined in between refuses the update, and the store reads it again.
func (s *Store) PatchJob(ctx context.Context, k jobs.Key, patch json.RawMessage, cond jobs.Preconditions, check func(*jobs.Job) error) (jobs.PutJobResult, error) {
	var defined jobs.PutJobResult
	err := retrying(ctx, isBaseChanged, func() error {
		current, err := s.Job(ctx, k)
		if err != nil {
			return err
		}
		current.Properties.Status = nil
		job, err := jobs.PatchJob(current, patch)
		if err != nil {
			return err
		}
		if err := check(&job); err != nil {
			return err
		}
		return notFoundAs(s.updateInto(ctx, k.JobWorkflowID(), jobs.UpdatePatchJob,
			jobs.PatchJobRequest{Patch: patch, Base: current.ETag, Preconditions: cond, Deadline: jobs.DeadlineOf(ctx)}, &defined), JobNamed(k))
	})
	return defined, err
}

// isBaseChanged says whether a PATCH was refused because the job was
// redefined since the store read it.
func isBaseChanged(err error) bool {
	e, ok := jobs.FromApplicationError(err)
	return ok && e.Code == jobs.CodeBaseChanged
}

// Backfill queues the job's occurrences of req's past range; its
// workflow runs them, a pace apart. maybeQueued is false when nothing was
// queued for sure (the workflow refused, or runs no more); an update
// whose answer was lost may have queued.
func (s *Store) Backfill(ctx context.Context, k jobs.Key, req jobs.BackfillRequest) (res jobs.BackfillResult, maybeQueued bool, err error) {
	req.Deadline = jobs.DeadlineOf(ctx)
	if err := s.updateInto(ctx, k.JobWorkflowID(), jobs.UpdateBackfill, req, &res); err != nil {
		_, refused := jobs.FromApplicationError(err)
		return res, !refused && !WorkflowMissing(err), notFoundAs(err, JobNamed(k))
	}
	return res, true, nil
}
