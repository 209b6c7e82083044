package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/store"
)

// A PUT's Recur-Apply header (jobs.Apply) may keep it from writing: its
// resource's workflow compares the definition with its own, secrets
// included, in its update validator, and refuses the update, which then
// leaves no trace. Every PUT's answer says what it did in Recur-Outcome.

// applyHeader reads a request's Recur-Apply.
func applyHeader(c *gin.Context) (jobs.Apply, error) {
	apply, err := jobs.ParseApply(c.GetHeader("Recur-Apply"))
	if err != nil {
		return "", err
	}
	return apply, nil
}

// writeOutcome says in the answer's Recur-Outcome what a PUT did, or for
// a what-if PUT would do.
func writeOutcome(c *gin.Context, outcome string) { c.Header("Recur-Outcome", outcome) }

// createdOutcome is the outcome of a PUT that was written.
func createdOutcome(created bool) string {
	if created {
		return jobs.OutcomeCreated
	}
	return jobs.OutcomeUpdated
}

// notWritten returns the outcome of a PUT its workflow did not write, and
// whether err is that refusal.
func notWritten(err error) (string, bool) {
	e, ok := jobs.FromApplicationError(err)
	if !ok && !errors.As(err, &e) || e.Code != jobs.CodeNotWritten {
		return "", false
	}
	return e.Target, true
}

// whatIf answers a what-if PUT, which its resource's workflow has refused
// with err: 200 with the outcome the PUT would have, and the resource as it
// is when unchanged (current), else the definition it would store,
// accepted, without ETag or status (proposed). A resource without a
// workflow would be created; the preconditions of a creation are checked
// here. check checks what a PUT that creates or updates needs beyond its
// resource's word (a job's collection, its quota and terms), as the PUT
// would.
func whatIf(c *gin.Context, err error, cond jobs.Preconditions, what string, check func(outcome string) error, current func() error, proposed func()) error {
	if store.IsNotFound(err) {
		if e := cond.Check("", what); e != nil {
			return e
		}
		err = jobs.NotWritten(jobs.OutcomeCreated)
	}
	outcome, ok := notWritten(err)
	switch {
	case ok && outcome == jobs.OutcomeUnchanged:
		return current()
	case ok:
		if err := check(outcome); err != nil {
			return err
		}
		writeOutcome(c, outcome)
		proposed()
		return nil
	case err == nil:
		// A worker that does not know Recur-Apply took the update.
		return &apiError{status: http.StatusInternalServerError, code: "InternalServerError",
			message: "a worker of an older version wrote the what-if PUT: upgrade every worker"}
	}
	return err
}

// whatIfJob answers a PUT of job, accepted at created, with Recur-Apply:
// what-if. A job that would be created or updated is checked against its
// collection as its admission would check it, and the answer says in
// Recur-Collection-Jobs how many jobs the collection holds.
func (s *Server) whatIfJob(ctx context.Context, c *gin.Context, k jobs.Key, job jobs.Job, created time.Time, cond jobs.Preconditions) error {
	err := s.store.WhatIfJob(ctx, k, job, cond)
	return whatIf(c, err, cond, store.JobNamed(k), func(outcome string) error {
		held, err := s.store.WouldAdmit(ctx, k, job, created, outcome == jobs.OutcomeCreated)
		if err == nil {
			c.Header(headerCollectionJobs, strconv.Itoa(held))
		}
		return err
	}, func() error { return s.unchangedJob(ctx, c, k) }, func() { writeJob(c, http.StatusOK, job) })
}

// headerCollectionJobs is the answer header of a job's what-if PUT that
// counts its collection's jobs.
const headerCollectionJobs = "Recur-Collection-Jobs"

// whatIfCollection answers a PUT of coll with Recur-Apply: what-if.
func (s *Server) whatIfCollection(ctx context.Context, c *gin.Context, k jobs.Key, coll jobs.Collection, cond jobs.Preconditions) error {
	err := s.store.WhatIfCollection(ctx, k, coll, cond)
	return whatIf(c, err, cond, store.CollectionNamed(k),
		func(outcome string) error {
			if outcome == jobs.OutcomeCreated {
				return s.store.CollectionRoom(ctx, k)
			}
			return nil
		},
		func() error { return s.unchangedCollection(ctx, c, k) },
		func() { writeCollection(c, http.StatusOK, coll) })
}

// unchangedJob answers a PUT that left the job as it is: 200 and the job.
func (s *Server) unchangedJob(ctx context.Context, c *gin.Context, k jobs.Key) error {
	return unchanged(c, func() (jobs.Job, error) { return s.store.Job(ctx, k) }, writeJob)
}

// unchangedCollection answers a PUT that left the collection as it is.
func (s *Server) unchangedCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	return unchanged(c, func() (jobs.Collection, error) { return s.store.Collection(ctx, k) }, writeCollection)
}

// unchanged answers with the resource read reads, as write writes it.
func unchanged[R any](c *gin.Context, read func() (R, error), write func(*gin.Context, int, R)) error {
	r, err := read()
	if err != nil {
		return err
	}
	writeOutcome(c, jobs.OutcomeUnchanged)
	write(c, http.StatusOK, r)
	return nil
}
