package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/api/serviceerror"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// RequestTimeout bounds the calls to Temporal of each request; the HTTP
// server in front of the API gives its answers that long and more.
const RequestTimeout = 30 * time.Second

// key returns the names in the request's path, validated.
func key(c *gin.Context) (jobs.Key, error) {
	k := jobs.Key{
		Subscription:  c.Param("subscriptionId"),
		ResourceGroup: c.Param("resourceGroupName"),
		Collection:    c.Param("jobCollectionName"),
		Job:           c.Param("jobName"),
	}
	if err := k.Validate(); err != nil {
		return k, err
	}
	return k, nil
}

func (s *Server) putCollection(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
	defer cancel()
	k, err := key(c)
	var coll jobs.Collection
	if err == nil {
		err = decode(c, &coll)
	}
	if err == nil {
		err = coll.Normalize(k)
	}
	var res jobs.PutResult
	if err == nil {
		// NotFound: the workflow of a deleted collection has not ended
		// yet; once it has, the PUT starts a new one.
		err = retrying(ctx, isNotFound, func() error {
			var err error
			res, err = s.updateWithStart(ctx, collectionStart(k), jobs.CollectionWorkflowName, jobs.CollectionInput{Key: k}, jobs.UpdatePutCollection, jobs.PutCollectionRequest{Collection: coll})
			return err
		})
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	c.JSON(putStatus(res.Created), coll.Public())
}

func (s *Server) getCollection(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
	defer cancel()
	k, err := key(c)
	var coll jobs.Collection
	if err == nil {
		coll, err = s.collection(ctx, k)
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	c.JSON(http.StatusOK, coll.Public())
}

// putJob records the job in its collection (the quota check), then
// defines it on its workflow, starting the workflow if need be. When the
// definition fails, a job the collection just recorded is forgotten again.
func (s *Server) putJob(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
	defer cancel()
	k, err := key(c)
	var job jobs.Job
	if err == nil {
		err = decode(c, &job, withoutStatus)
	}
	if err == nil {
		err = s.normalize(k, &job)
	}
	var (
		created bool
		defined jobs.Job
	)
	if err == nil {
		created, defined, err = s.defineJob(ctx, k, job)
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	c.JSON(putStatus(created), defined.Public())
}

// normalize validates a job definition before anything is touched, and
// refuses Workflow actions aimed where the operator does not allow them.
// The job workflow validates the definition again with its own clock as
// the creation time; where its actions may reach is the API's to check
// (and the activity's, as the last line).
func (s *Server) normalize(k jobs.Key, job *jobs.Job) error {
	if err := job.NormalizeNew(k, time.Now().UTC()); err != nil {
		return err
	}
	return s.workflowTargets.CheckJob(job, s.namespace)
}

// defineJob records the job in its collection, then defines it on its
// workflow. Only a PUT that added the job to the collection may start the
// job's workflow: one that found it there redefines the running workflow,
// and when that is gone (a DELETE ended it and is about to make the
// collection forget the job) it starts over.
func (s *Server) defineJob(ctx context.Context, k jobs.Key, job jobs.Job) (bool, jobs.Job, error) {
	var defined jobs.Job
	for {
		added, err := s.addJob(ctx, k, job)
		if err != nil {
			return false, defined, err
		}
		if added.Created {
			return true, defined, s.startJob(ctx, k, job, &defined)
		}
		err = s.updateInto(ctx, k.JobWorkflowID(), jobs.UpdatePutJob, jobs.PutJobRequest{Job: job}, &defined)
		if !isNotFound(err) || ctx.Err() != nil {
			return false, defined, err
		}
		select {
		case <-ctx.Done():
			return false, defined, ctx.Err()
		case <-time.After(retryPause):
		}
	}
}

// startJob defines a job the collection just recorded, starting its
// workflow. NotFound means the workflow of a deleted job with that name
// has not ended yet: once it has, a new one starts. When the definition
// fails, the collection forgets the job again. When the collection was
// deleted meanwhile, its delete could not reach the job, whose workflow
// did not run yet: the job is deleted here, as if the delete had come
// after the PUT.
func (s *Server) startJob(ctx context.Context, k jobs.Key, job jobs.Job, defined *jobs.Job) error {
	var runID string
	err := retrying(ctx, isNotFound, func() error {
		var err error
		runID, err = s.updateWithStartRun(ctx, jobStart(k, job), jobs.JobWorkflowName, jobs.JobInput{Key: k}, jobs.UpdatePutJob, jobs.PutJobRequest{Job: job}, defined)
		return err
	})
	bg := context.WithoutCancel(ctx)
	if err != nil {
		if _, rmErr := s.update(bg, k.CollectionWorkflowID(), jobs.UpdateRemoveJob, jobs.RemoveJobRequest{Job: k.Job}); rmErr != nil {
			s.log.ErrorContext(bg, "forget job after failed put", "job", k.JobID(), "error", rmErr)
		}
		return err
	}
	var view jobs.CollectionView
	qErr := s.query(bg, k.CollectionWorkflowID(), jobs.QueryCollection, &view)
	if qErr == nil && slices.Contains(view.Jobs, k.Job) || qErr != nil && !isNotFound(qErr) {
		return nil
	}
	// The run this PUT defined, not a later one of the same name.
	opts := updateOptions(jobs.UpdateDeleteJob, jobs.DeleteJobRequest{})
	opts.WorkflowID, opts.RunID = k.JobWorkflowID(), runID
	delErr := retrying(bg, aborted, func() error {
		handle, err := s.temporal.UpdateWorkflow(bg, opts)
		if err != nil {
			return err
		}
		return handle.Get(bg, nil)
	})
	if delErr != nil && !isNotFound(delErr) {
		s.log.ErrorContext(bg, "delete job of a deleted collection", "job", k.JobID(), "error", delErr)
	}
	return nil
}

func (s *Server) getJob(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
	defer cancel()
	k, err := key(c)
	var job jobs.Job
	if err == nil {
		job, err = s.job(ctx, k)
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	c.JSON(http.StatusOK, job.Public())
}

// deleteJob ends the job's workflow and forgets the job in its collection.
func (s *Server) deleteJob(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
	defer cancel()
	k, err := key(c)
	if err == nil {
		err = s.updateJob(ctx, k, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{})
	}
	if err == nil {
		_, err = s.update(ctx, k.CollectionWorkflowID(), jobs.UpdateRemoveJob, jobs.RemoveJobRequest{Job: k.Job})
	}
	if err != nil {
		writeError(c, s.log, notFoundAs(err, "job "+k.Job))
		return
	}
	c.Status(http.StatusOK)
}

// addJob records the job in its collection, or confirms it is there: the
// collection checks its quotas (how many jobs, how often one runs).
func (s *Server) addJob(ctx context.Context, k jobs.Key, job jobs.Job) (jobs.PutResult, error) {
	req := jobs.AddJobRequest{Job: k.Job}
	now := time.Now().UTC()
	if rule, err := recurrence.Compile(job.Properties.Schedule(), now); err == nil {
		req.ShortestGap, _ = rule.ShortestGap(now, shortestGapSample)
	}
	res, err := s.update(ctx, k.CollectionWorkflowID(), jobs.UpdateAddJob, req)
	return res, notFoundAs(err, "job collection "+k.Collection)
}

// shortestGapSample is how many occurrences the maxRecurrence quota
// looks at.
const shortestGapSample = 500

func putStatus(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}

// notFoundAs names what was not found when Temporal says a workflow is
// missing.
func notFoundAs(err error, what string) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return jobs.NotFound(what)
	}
	return err
}

// runJob runs a job once, now (POST .../jobs/{j}/run).
func (s *Server) runJob(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
	defer cancel()
	k, err := key(c)
	if err == nil {
		err = s.updateJob(ctx, k, jobs.UpdateRunNow, jobs.RunNowRequest{})
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	c.Status(http.StatusOK)
}

// updateJob sends a named update to the workflow of an existing job.
func (s *Server) updateJob(ctx context.Context, k jobs.Key, name string, arg any) error {
	if _, err := s.job(ctx, k); err != nil {
		return err
	}
	_, err := s.update(ctx, k.JobWorkflowID(), name, arg)
	return notFoundAs(err, "job "+k.Job)
}

// patchJob merges the body into the job's definition (RFC 7386 JSON merge
// patch) and redefines the job with the result, as PUT would.
func (s *Server) patchJob(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
	defer cancel()
	k, err := key(c)
	var patch json.RawMessage
	if err == nil {
		err = decode(c, &patch)
	}
	if _, given := dropStatus(patch); err == nil && given {
		err = &apiError{status: http.StatusBadRequest, code: "ReadOnlyProperty", target: "properties.status",
			message: "properties.status is read-only: the scheduler keeps it"}
	}
	var current jobs.Job
	if err == nil {
		current, err = s.definition(ctx, k)
	}
	var job jobs.Job
	if err == nil {
		current.Properties.Status = nil
		job, err = merge(replacedAuthentication(current, patch), patch)
	}
	if err == nil {
		err = s.normalize(k, &job)
	}
	if err == nil {
		var added jobs.PutResult
		added, err = s.addJob(ctx, k, job)
		if err == nil && added.Created {
			// The job was deleted since it was read: a PATCH creates
			// nothing.
			if _, rmErr := s.update(context.WithoutCancel(ctx), k.CollectionWorkflowID(), jobs.UpdateRemoveJob, jobs.RemoveJobRequest{Job: k.Job}); rmErr != nil {
				s.log.ErrorContext(ctx, "forget job after patch of a deleted job", "job", k.JobID(), "error", rmErr)
			}
			err = jobs.NotFound("job " + k.Job)
		}
	}
	var defined jobs.Job
	if err == nil {
		err = s.updateInto(ctx, k.JobWorkflowID(), jobs.UpdatePutJob, jobs.PutJobRequest{Job: job}, &defined)
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	c.JSON(http.StatusOK, defined.Public())
}

// replacedAuthentication drops from current each authentication object
// the patch gives with another type, so that it replaces the old one
// instead of merging into it: a Basic password must never become a
// certificate's password. A patch of the same type merges (a new username
// keeps the password).
func replacedAuthentication(current jobs.Job, patch json.RawMessage) jobs.Job {
	var p struct {
		Properties struct {
			Action struct {
				Request     struct{ Authentication *jobs.Authentication }
				ErrorAction struct {
					Request struct{ Authentication *jobs.Authentication }
				}
			}
		}
	}
	if json.Unmarshal(patch, &p) != nil || current.Properties.Action == nil {
		return current
	}
	action := *current.Properties.Action
	replace := func(req *jobs.HTTPRequest, given *jobs.Authentication) *jobs.HTTPRequest {
		if req == nil || req.Authentication == nil || given == nil || strings.EqualFold(given.Type, req.Authentication.Type) {
			return req
		}
		r := *req
		r.Authentication = nil
		return &r
	}
	action.Request = replace(action.Request, p.Properties.Action.Request.Authentication)
	if action.ErrorAction != nil {
		e := *action.ErrorAction
		e.Request = replace(e.Request, p.Properties.Action.ErrorAction.Request.Authentication)
		action.ErrorAction = &e
	}
	current.Properties.Action = &action
	return current
}
