package api

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/recurhq/recur/jobs"
)

// checkFloor refuses job, planned at created, when its occurrences come
// closer than the operator's floor (--min-interval), unless job k has
// that schedule already: a job admitted before the floor was raised keeps
// running, and takes a PUT or PATCH that leaves its startTime and
// recurrence alone (an import run again, a change of its action). Only
// the API checks the floor: what a worker runs came through it.
func (s *Server) checkFloor(ctx context.Context, k jobs.Key, job jobs.Job, created time.Time) error {
	refusal := jobs.CheckMinInterval(jobs.ShortestGap(job, created), s.minInterval)
	if refusal == nil {
		return nil
	}
	current, err := s.store.Job(ctx, k)
	if err == nil && sameSchedule(current, job) {
		return nil
	}
	return refusal
}

// sameSchedule reports whether a and b run at the same times: the same
// startTime and recurrence, both in the form Accept writes.
func sameSchedule(a, b jobs.Job) bool {
	x, errA := json.Marshal(a.Properties.Schedule())
	y, errB := json.Marshal(b.Properties.Schedule())
	return errA == nil && errB == nil && bytes.Equal(x, y)
}
