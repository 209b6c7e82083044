package store

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

// JobNamed is how NotFound errors name the job k names.
func JobNamed(k jobs.Key) string { return "job " + k.Job }

// CollectionNamed is how NotFound errors name the collection k names.
func CollectionNamed(k jobs.Key) string { return "job collection " + k.Collection }

// WorkflowMissing reports whether Temporal answered that the workflow, or
// the run, asked for does not exist.
func WorkflowMissing(err error) bool {
	var notFound *serviceerror.NotFound
	return errors.As(err, &notFound)
}

// IsNotFound reports whether err says the resource does not exist: a
// jobs.NotFound, the store's or a workflow's, or Temporal's NotFound. A
// missing collection (jobs.CodeCollectionMissing) is not: it answers a
// job's write, whose own resource may well exist.
func IsNotFound(err error) bool {
	if WorkflowMissing(err) {
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
	if WorkflowMissing(err) {
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
