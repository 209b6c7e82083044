package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/store"
)

// RequestTimeout bounds the calls to Temporal of each request; the HTTP
// server in front of the API gives its answers that long and more.
const RequestTimeout = store.RequestTimeout

// A handler answers a request about what its path names: it writes the
// answer of a success itself and returns any error for handle to answer.
type handler func(ctx context.Context, c *gin.Context, k jobs.Key) error

// handle makes h a Gin handler: h gets a context that ends after
// RequestTimeout and the validated names of the request's path, and an
// invalid name or h's error is answered through writeError.
func (s *Server) handle(h handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
		defer cancel()
		k, err := key(c)
		if err != nil {
			writeError(c, s.log, err)
			return
		}
		if err := h(ctx, c, k); err != nil {
			writeError(c, s.log, err)
		}
	}
}

// key returns the names in the request's path, validated: those its route
// has. A collection list's route has no collection, the subscription's no
// resource group either, and POST /recur/v1/preview's none at all.
func key(c *gin.Context) (jobs.Key, error) {
	k := jobs.Key{
		Subscription:  c.Param("subscriptionId"),
		ResourceGroup: c.Param("resourceGroupName"),
		Collection:    c.Param("jobCollectionName"),
		Job:           c.Param("jobName"),
	}
	if _, ok := c.Params.Get("subscriptionId"); !ok {
		return k, nil
	}
	check := k
	if _, ok := c.Params.Get("jobCollectionName"); !ok {
		// Key.Validate wants a resource group and a collection; stand-ins
		// that are valid names let it check the parts a list's path has.
		check.Collection = "list"
		if check.ResourceGroup == "" {
			check.ResourceGroup = "list"
		}
	}
	return k, check.Validate()
}

func (s *Server) putCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	var coll jobs.Collection
	if err := decode(c, &coll); err != nil {
		return err
	}
	if err := coll.Accept(k); err != nil {
		return err
	}
	cond, err := preconditions(c)
	if err != nil {
		return err
	}
	apply, err := applyHeader(c)
	if err != nil {
		return err
	}
	if apply == jobs.ApplyWhatIf {
		return s.whatIfCollection(ctx, c, k, coll, cond)
	}
	res, err := s.store.PutCollection(ctx, k, jobs.PutCollectionRequest{Collection: coll, Preconditions: cond, Apply: apply})
	if _, unchanged := notWritten(err); unchanged {
		return s.unchangedCollection(ctx, c, k)
	}
	if err != nil {
		return err
	}
	writeOutcome(c, createdOutcome(res.Created))
	writeCollection(c, putStatus(res.Created), res.Collection)
	return nil
}

// preconditions reads the request's If-Match and If-None-Match
// (jobs.ParsePreconditions). A header given on several lines is one
// list, as HTTP has it, and refused as any list is.
func preconditions(c *gin.Context) (jobs.Preconditions, error) {
	header := func(name string) string { return strings.Join(c.Request.Header.Values(name), ", ") }
	return jobs.ParsePreconditions(header("If-Match"), header("If-None-Match"))
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

func (s *Server) getCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	coll, err := s.store.Collection(ctx, k)
	if err != nil {
		return err
	}
	writeCollection(c, http.StatusOK, coll)
	return nil
}

// putJob defines the job (store.PutJob): a new job's PUT creates it, its
// collection admitting it, any other redefines it.
func (s *Server) putJob(ctx context.Context, c *gin.Context, k jobs.Key) error {
	var job jobs.Job
	if err := decode(c, &job, withoutStatus); err != nil {
		return err
	}
	created := time.Now().UTC().Truncate(time.Second)
	if err := s.accept(k, &job, created); err != nil {
		return err
	}
	if err := s.checkFloor(ctx, k, job, created); err != nil {
		return err
	}
	cond, err := preconditions(c)
	if err != nil {
		return err
	}
	apply, err := applyHeader(c)
	if err != nil {
		return err
	}
	if apply == jobs.ApplyWhatIf {
		return s.whatIfJob(ctx, c, k, job, created, cond)
	}
	res, err := s.store.PutJob(ctx, k, job, created, cond, apply)
	if _, unchanged := notWritten(err); unchanged {
		return s.unchangedJob(ctx, c, k)
	}
	if err != nil {
		return err
	}
	linkNext(ctx, k, res.Job)
	writeOutcome(c, createdOutcome(res.Created))
	writeJob(c, putStatus(res.Created), res.Job)
	return nil
}

// accept checks a job definition, planned at created, before anything is
// touched, and refuses Workflow actions aimed where the operator does not
// allow them. The job workflow validates a definition sent as an update
// again with its own clock as the creation time; where its actions may
// reach is the API's to check (and the activity's, as the last line).
func (s *Server) accept(k jobs.Key, job *jobs.Job, created time.Time) error {
	if err := job.Accept(k, created); err != nil {
		return err
	}
	return s.workflowTargets.CheckJob(job, s.namespace)
}

func (s *Server) getJob(ctx context.Context, c *gin.Context, k jobs.Key) error {
	job, err := s.store.Job(ctx, k)
	if err != nil {
		return err
	}
	writeJob(c, http.StatusOK, job)
	return nil
}

// deleteJob deletes the job (store.DeleteJob).
func (s *Server) deleteJob(ctx context.Context, c *gin.Context, k jobs.Key) error {
	cond, err := preconditions(c)
	if err != nil {
		return err
	}
	if err := s.store.DeleteJob(ctx, k, cond); err != nil {
		return err
	}
	c.Status(http.StatusOK)
	return nil
}

func putStatus(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}

// runJob runs a job once, now (POST .../jobs/{j}/run).
func (s *Server) runJob(ctx context.Context, c *gin.Context, k jobs.Key) error {
	if err := s.store.RunJob(ctx, k); err != nil {
		return err
	}
	c.Status(http.StatusOK)
	return nil
}

// patchJob merges the body into the job's definition (RFC 7386 JSON merge
// patch) and redefines the job with the result (store.PatchJob), as PUT
// would, except that it creates nothing; the result's Workflow actions
// must go where the operator allows.
func (s *Server) patchJob(ctx context.Context, c *gin.Context, k jobs.Key) error {
	patch, err := decodePatch[jobs.Job](c)
	if err != nil {
		return err
	}
	if _, given := dropStatus(patch); given {
		return &apiError{status: http.StatusBadRequest, code: "ReadOnlyProperty", target: "properties.status",
			message: "properties.status is read-only: the scheduler keeps it"}
	}
	cond, err := preconditions(c)
	if err != nil {
		return err
	}
	defined, err := s.store.PatchJob(ctx, k, patch, cond, func(job *jobs.Job) error {
		if err := s.checkFloor(ctx, k, *job, time.Now().UTC().Truncate(time.Second)); err != nil {
			return err
		}
		return s.workflowTargets.CheckJob(job, s.namespace)
	})
	if err != nil {
		return err
	}
	linkNext(ctx, k, defined.Job)
	writeJob(c, http.StatusOK, defined.Job)
	return nil
}
