package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/recurhq/recur/jobs"
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
			res, err = s.updateWithStart(ctx, collectionStart(k), jobs.CollectionWorkflowName, jobs.CollectionInput{Key: k}, jobs.UpdatePutCollection,
				jobs.PutCollectionRequest{Collection: coll, Preconditions: preconditions(c)})
			return err
		})
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	writeCollection(c, putStatus(res.Created), res.Collection)
}

// preconditions reads the request's If-Match and If-None-Match.
func preconditions(c *gin.Context) jobs.Preconditions {
	return jobs.Preconditions{IfMatch: c.GetHeader("If-Match"), IfNoneMatch: c.GetHeader("If-None-Match")}
}

// writeJob answers with job, its ETag in the header too.
func writeJob(c *gin.Context, status int, job jobs.Job) {
	if job.ETag != "" {
		c.Header("ETag", job.ETag)
	}
	c.JSON(status, job.Public())
}

// writeCollection answers with coll, its ETag in the header too.
func writeCollection(c *gin.Context, status int, coll jobs.Collection) {
	if coll.ETag != "" {
		c.Header("ETag", coll.ETag)
	}
	c.JSON(status, coll.Public())
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
	writeCollection(c, http.StatusOK, coll)
}

// putJob defines the job on its workflow, starting the workflow if need
// be, in one update: the workflow has its collection admit the definition
// (the quotas) before it takes it, so that no failure of this process can
// leave a job half defined or a collection's count wrong. NotFound means
// the workflow of a deleted job with that name has not ended yet: once it
// has, a new one starts.
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
	var res jobs.PutJobResult
	if err == nil {
		err = retrying(ctx, isNotFound, func() error {
			return s.updateWithStartInto(ctx, jobStart(k, job), jobs.JobWorkflowName, jobs.JobInput{Key: k},
				jobs.UpdatePutJob, jobs.PutJobRequest{Job: job, Preconditions: preconditions(c)}, &res)
		})
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	writeJob(c, putStatus(res.Created), res.Job)
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
	writeJob(c, http.StatusOK, job)
}

// deleteJob deletes the job in one update: its workflow has its
// collection forget it, then ends.
func (s *Server) deleteJob(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
	defer cancel()
	k, err := key(c)
	if err == nil {
		err = s.updateJob(ctx, k, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{Preconditions: preconditions(c)})
	}
	if err != nil {
		writeError(c, s.log, notFoundAs(err, jobNamed(k)))
		return
	}
	c.Status(http.StatusOK)
}

func putStatus(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
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

// backfillJob runs the job's occurrences of a past range (POST
// .../jobs/{j}/backfill, recur's extension): 202 with how many were
// queued; the job's workflow runs them.
func (s *Server) backfillJob(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
	defer cancel()
	k, err := key(c)
	var req jobs.BackfillRequest
	if err == nil {
		err = decode(c, &req)
	}
	var res jobs.BackfillResult
	if err == nil {
		if _, err = s.job(ctx, k); err == nil {
			err = notFoundAs(s.updateInto(ctx, k.JobWorkflowID(), jobs.UpdateBackfill, req, &res), jobNamed(k))
		}
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	c.JSON(http.StatusAccepted, res)
}

// updateJob sends a named update to the workflow of an existing job.
func (s *Server) updateJob(ctx context.Context, k jobs.Key, name string, arg any) error {
	if _, err := s.job(ctx, k); err != nil {
		return err
	}
	_, err := s.update(ctx, k.JobWorkflowID(), name, arg)
	return notFoundAs(err, jobNamed(k))
}

// patchJob merges the body into the job's definition (RFC 7386 JSON merge
// patch) and redefines the job with the result in one update, as PUT
// would, except that it creates nothing: a job deleted since it was read
// is not found.
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
	var defined jobs.PutJobResult
	if err == nil {
		err = s.updateInto(ctx, k.JobWorkflowID(), jobs.UpdatePutJob,
			jobs.PutJobRequest{Job: job, Existing: true, Preconditions: preconditions(c)}, &defined)
		err = notFoundAs(err, jobNamed(k))
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	writeJob(c, http.StatusOK, defined.Job)
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
