package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/recurhq/recur/jobs"
)

// RequestTimeout bounds the calls to Temporal of each request; the HTTP
// server in front of the API gives its answers that long and more.
const RequestTimeout = 30 * time.Second

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
	if err := s.collectionRoom(ctx, k); err != nil {
		return err
	}
	if err := s.admissions.flush(ctx, s, k); err != nil {
		return err
	}
	// NotFound: the workflow of a deleted collection has not ended yet;
	// once it has, the PUT starts a new one.
	var res jobs.PutResult
	err = retrying(ctx, isNotFound, func() error {
		var err error
		res, err = s.updateWithStart(ctx, collectionStart(k), jobs.CollectionWorkflowName, jobs.CollectionInput{Key: k}, jobs.UpdatePutCollection,
			jobs.PutCollectionRequest{Collection: coll, Preconditions: cond, Apply: apply})
		return err
	})
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
	coll, err := s.collection(ctx, k)
	if err != nil {
		return err
	}
	writeCollection(c, http.StatusOK, coll)
	return nil
}

// putJob defines the job on its workflow, starting the workflow if need
// be, in one call: a new job's workflow starts with its definition once
// its collection admitted it, or beside the claim of its name on a lease
// (newJob, admit.go; the collection takes back a name no job took), or the
// workflow has its
// collection admit the definition (the quotas) before it takes it, so
// that no failure of this process can leave a job half defined or a
// collection's count wrong. NotFound means
// the workflow of a deleted job with that name has not ended yet: once it
// has, a new one starts.
func (s *Server) putJob(ctx context.Context, c *gin.Context, k jobs.Key) error {
	var job jobs.Job
	if err := decode(c, &job, withoutStatus); err != nil {
		return err
	}
	created := time.Now().UTC().Truncate(time.Second)
	if err := s.accept(k, &job, created); err != nil {
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
		return s.whatIfJob(ctx, c, k, job, cond)
	}
	var res jobs.PutJobResult
	err = retrying(ctx, isNotFound, func() error {
		started, adm, err := s.newJob(ctx, k, job, created, cond)
		if started != nil {
			res = jobs.PutJobResult{Job: *started, Created: true}
		}
		if err != nil || started != nil {
			return err
		}
		err = s.updateWithStartInto(ctx, jobStart(k, job), jobs.JobWorkflowName, jobs.JobInput{Key: k},
			jobs.UpdatePutJob, jobs.PutJobRequest{Job: job, Preconditions: cond, Admission: adm, Apply: apply}, &res)
		if isNotFound(err) {
			// The run this process remembered holds a deleted job: the
			// next try creates the job, its collection admitting it.
			s.runs.drop(k.JobWorkflowID())
		}
		return err
	})
	if _, unchanged := notWritten(err); unchanged {
		return s.unchangedJob(ctx, c, k)
	}
	if err != nil {
		return err
	}
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
	if err := job.AcceptNew(k, created); err != nil {
		return err
	}
	return s.workflowTargets.CheckJob(job, s.namespace)
}

func (s *Server) getJob(ctx context.Context, c *gin.Context, k jobs.Key) error {
	job, err := s.job(ctx, k)
	if err != nil {
		return err
	}
	writeJob(c, http.StatusOK, job)
	return nil
}

// deleteJob deletes the job in one update: its workflow has its
// collection forget it, then ends.
func (s *Server) deleteJob(ctx context.Context, c *gin.Context, k jobs.Key) error {
	cond, err := preconditions(c)
	if err != nil {
		return err
	}
	if err := s.updateJob(ctx, k, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{Preconditions: cond}); err != nil {
		return err
	}
	// A PUT of the name from now on creates a job: its collection must
	// admit it, and the run that was deleted ends.
	s.runs.drop(k.JobWorkflowID())
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
	if err := s.updateJob(ctx, k, jobs.UpdateRunNow, jobs.RunNowRequest{}); err != nil {
		return err
	}
	c.Status(http.StatusOK)
	return nil
}

// updateJob sends a named update to the workflow of a job, in one call:
// the workflow refuses it when it holds no job (deleted, or never
// defined), Temporal when there is no such workflow running.
func (s *Server) updateJob(ctx context.Context, k jobs.Key, name string, arg any) error {
	_, err := s.update(ctx, k.JobWorkflowID(), name, arg)
	return notFoundAs(err, jobNamed(k))
}

// patchJob merges the body into the job's definition (RFC 7386 JSON merge
// patch) and redefines the job with the result in one update, as PUT
// would, except that it creates nothing. The job's workflow merges it: it
// alone holds the definition's secrets. The API merges the patch into the
// definition it reads (secrets redacted) to check where Workflow actions
// would go, and names what it read as the update's base: a job redefined
// in between refuses the update, and the API reads it again.
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
	var defined jobs.PutJobResult
	err = retrying(ctx, isBaseChanged, func() error {
		current, err := s.job(ctx, k)
		if err != nil {
			return err
		}
		current.Properties.Status = nil
		job, err := jobs.PatchJob(current, patch)
		if err != nil {
			return err
		}
		if err := s.workflowTargets.CheckJob(&job, s.namespace); err != nil {
			return err
		}
		return notFoundAs(s.updateInto(ctx, k.JobWorkflowID(), jobs.UpdatePatchJob,
			jobs.PatchJobRequest{Patch: patch, Base: current.ETag, Preconditions: cond}, &defined), jobNamed(k))
	})
	if err != nil {
		return err
	}
	writeJob(c, http.StatusOK, defined.Job)
	return nil
}

// isBaseChanged says whether a PATCH was refused because the job was
// redefined since the API read it.
func isBaseChanged(err error) bool {
	e, ok := jobs.FromApplicationError(err)
	return ok && e.Code == jobs.CodeBaseChanged
}
