package api

import (
	"errors"

	"go.temporal.io/api/serviceerror"

	"github.com/recurhq/recur/jobs"
)

// Whether something is missing is decided here only. A resource is missing
// when Temporal has no workflow for it, when its workflow has ended or
// keeps no view (deleted, or never defined), or when the workflow says so
// with a jobs.NotFound; the answers name the job or collection, so that
// a 404 says which of the path's names was not there.

// unnamedResource is what a 404 names when Temporal's NotFound reaches
// writeError without a caller having said which workflow it was about.
const unnamedResource = "the resource"

// jobNamed and collectionNamed are how NotFound errors name what k names.
func jobNamed(k jobs.Key) string        { return "job " + k.Job }
func collectionNamed(k jobs.Key) string { return "job collection " + k.Collection }

// workflowMissing reports whether Temporal answered that the workflow, or
// the run, asked for does not exist.
func workflowMissing(err error) bool {
	var notFound *serviceerror.NotFound
	return errors.As(err, &notFound)
}

// isNotFound reports whether err says the resource does not exist: a
// jobs.NotFound, the API's or a workflow's, or Temporal's NotFound. A
// missing collection (jobs.CodeCollectionMissing) is not: it answers a
// job's write, whose own resource may well exist.
func isNotFound(err error) bool {
	if workflowMissing(err) {
		return true
	}
	jobErr, ok := jobs.FromApplicationError(err)
	if !ok && !errors.As(err, &jobErr) {
		return false
	}
	return jobErr.Code == jobs.CodeNotFound
}

// notFoundAs names what was not found when Temporal says its workflow is
// missing; any other error is returned as it is.
func notFoundAs(err error, what string) error {
	if workflowMissing(err) {
		return jobs.NotFound(what)
	}
	return err
}

// viewFound is the error of reading the public view of what: a NotFound
// naming what when its workflow is missing, not running or keeps no view
// (errNoView), or when the view says it was deleted; err otherwise.
func viewFound(err error, deleted bool, what string) error {
	if errors.Is(err, errNoView) || err == nil && deleted {
		return jobs.NotFound(what)
	}
	return notFoundAs(err, what)
}
