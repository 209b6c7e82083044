package store

import (
	"context"
	"slices"

	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/recurhq/recur/jobs"
)

// Failures returns the job's failure records, newest first, at most want
// and at most jobs.MaxFailures: read from the job workflow's own history
// (jobs.MemoFailures) as History reads its rows, so that they are kept as
// long as its history, and need no worker. Their actions hold their
// secrets: an answer shows them Redacted. A job that does not exist is a
// NotFound.
func (s *Store) Failures(ctx context.Context, k jobs.Key, want int) ([]jobs.Failure, error) {
	if _, err := s.Job(ctx, k); err != nil {
		return nil, err
	}
	return s.failures(ctx, k, want)
}

// failures is Failures of a job known to exist.
func (s *Store) failures(ctx context.Context, k jobs.Key, want int) ([]jobs.Failure, error) {
	want = min(want, jobs.MaxFailures)
	run, _ := s.runs.get(k.JobWorkflowID())
	var out []jobs.Failure
	err := readUpserts(ctx, s, k, run, jobs.MemoFailures, func(upserted []jobs.Failure) bool {
		slices.Reverse(upserted)
		out = append(out, upserted...)
		return len(out) < want
	})
	if len(out) > want {
		out = out[:want]
	}
	return out, err
}

// Rerun asks the job's workflow to run failure f again, as it ran: the
// job refuses it as it refuses a backfill (lifecycle.Rerunnable).
func (s *Store) Rerun(ctx context.Context, k jobs.Key, f jobs.Failure) error {
	return s.updateJob(ctx, k, jobs.UpdateRerun, jobs.RerunRequest{Failure: f, Deadline: jobs.DeadlineOf(ctx)})
}

// Failure returns the job's failure record id, among the newest
// jobs.MaxFailures; a NotFound when there is none.
func (s *Store) Failure(ctx context.Context, k jobs.Key, id string) (jobs.Failure, error) {
	all, err := s.Failures(ctx, k, jobs.MaxFailures)
	if err != nil {
		return jobs.Failure{}, err
	}
	for _, f := range all {
		if f.ID == id {
			return f, nil
		}
	}
	return jobs.Failure{}, jobs.NotFound("failure " + id + " of job " + k.Job)
}

// JobFailure is a failure of the job Key, as a list across jobs has it.
type JobFailure struct {
	Key jobs.Key
	jobs.Failure
}

// FailuresAcross returns the failures of the running jobs of the scope (a
// subscription, a resource group or a collection) that keep any
// (jobs.AttrFailures), job by job in the order of a list across
// collections, each job's newest first, at least want of them when there
// are: it reads the records of as many jobs as that takes. A collection
// that does not exist is a NotFound.
func (s *Store) FailuresAcross(ctx context.Context, scope jobs.Key, want int) ([]JobFailure, error) {
	if scope.Collection != "" {
		if _, err := s.Collection(ctx, scope); err != nil {
			return nil, err
		}
	}
	var keys []jobs.Key
	query := jobs.ScopeQuery(jobs.KindJob, scope, running, jobs.AttrFailures.GetName()+" = true")
	if err := s.eachListed(ctx, query, func(k jobs.Key, _ *workflowpb.WorkflowExecutionInfo) { keys = append(keys, k) }); err != nil {
		return nil, err
	}
	slices.SortFunc(keys, compareKeys)
	var out []JobFailure
	for _, k := range keys {
		if len(out) >= want {
			break
		}
		fs, err := s.failures(ctx, k, want-len(out))
		if WorkflowMissing(err) {
			continue // ended since the list
		}
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			out = append(out, JobFailure{Key: k, Failure: f})
		}
	}
	return out, nil
}
