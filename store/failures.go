package store

import (
	"context"
	"slices"

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
	return s.updateJob(ctx, k, jobs.UpdateRerun, jobs.RerunRequest{Failure: f})
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
