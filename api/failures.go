package api

import (
	"context"
	"net/http"
	"regexp"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/store"
)

// failureType is the resource type of a job's failure (recur's
// extension).
const failureType = "Microsoft.Scheduler/jobCollections/jobs/failures"

// failureIDPattern is the shape of a failure's ID (jobs.FailureID): any
// other is not found without a read.
var failureIDPattern = regexp.MustCompile(`^[0-9A-Za-z.-]{1,80}$`)

// failureEntry is one failure of a job, in the shape of the history's
// entries.
type failureEntry struct {
	ID         string            `json:"id"`
	Type       string            `json:"type"`
	Name       string            `json:"name"`
	Properties failureProperties `json:"properties"`
}

// failureProperties is a failure record as the API shows it: its action
// with every secret redacted, as a job's GET shows it.
type failureProperties struct {
	ExpectedExecutionTime time.Time            `json:"expectedExecutionTime"`
	Kind                  string               `json:"kind"`
	OccurrenceID          string               `json:"occurrenceId"`
	RerunOf               string               `json:"rerunOf,omitempty"`
	StartTime             time.Time            `json:"startTime"`
	EndTime               time.Time            `json:"endTime"`
	Action                jobs.Action          `json:"action"`
	Response              failureResponse      `json:"response"`
	Message               string               `json:"message,omitempty"`
	Attempts              int                  `json:"attempts"`
	FailedAttempts        int                  `json:"failedAttempts"`
	ErrorActionStatus     jobs.ExecutionStatus `json:"errorActionStatus,omitempty"`
}

// failureResponse is the last answer of a failure's main action: its
// status, headers of note and the first KiB of its body.
type failureResponse struct {
	StatusCode int    `json:"statusCode,omitempty"`
	Status     string `json:"status,omitempty"`
	Headers    string `json:"headers,omitempty"`
	Body       string `json:"body,omitempty"`
}

type failureList struct {
	Value    []failureEntry `json:"value"`
	NextLink string         `json:"nextLink,omitempty"`
}

func newFailureEntry(k jobs.Key, f jobs.Failure) failureEntry {
	f = f.Redacted()
	return failureEntry{
		ID:   k.JobID() + "/failures/" + f.ID,
		Type: failureType,
		Name: k.Collection + "/" + k.Job + "/" + f.ID,
		Properties: failureProperties{
			ExpectedExecutionTime: f.Nominal.UTC(), Kind: f.Kind, OccurrenceID: f.OccurrenceID, RerunOf: f.RerunOf,
			StartTime: f.Started.UTC(), EndTime: f.Ended.UTC(), Action: f.Action,
			Response: failureResponse{StatusCode: f.Response.StatusCode, Status: f.Response.Status,
				Headers: f.Response.Headers, Body: f.Response.Body},
			Message: f.Message, Attempts: f.Attempts, FailedAttempts: f.FailedAttempts, ErrorActionStatus: f.ErrorAction,
		},
	}
}

// listFailures answers GET .../jobs/{jobName}/failures (recur's
// extension): the job's occurrences whose main action failed for good,
// newest first, at most the newest jobs.MaxFailures, paged by $top and
// $skip as the history is.
func (s *Server) listFailures(ctx context.Context, c *gin.Context, k jobs.Key) error {
	top, skip, err := parsePage(c, maxHistoryTop)
	if err != nil {
		return err
	}
	all, err := s.store.Failures(ctx, k, skip+top+1)
	if err != nil {
		return err
	}
	writeFailures(c, all, skip, top, func(f jobs.Failure) failureEntry { return newFailureEntry(k, f) })
	return nil
}

// listFailuresAcross answers GET {base}/jobCollections/{c}/failures and
// GET /recur/v1/subscriptions/{s}[/resourceGroups/{rg}]/failures (recur's
// extensions): the failures of every job of the scope that keeps any,
// job by job in the order of a list across collections (resource group,
// collection, name), each job's newest first; paged by $top and $skip.
func (s *Server) listFailuresAcross(ctx context.Context, c *gin.Context, scope jobs.Key) error {
	top, skip, err := parsePage(c, maxHistoryTop)
	if err != nil {
		return err
	}
	all, err := s.store.FailuresAcross(ctx, scope, skip+top+1)
	if err != nil {
		return err
	}
	writeFailures(c, all, skip, top, func(f store.JobFailure) failureEntry { return newFailureEntry(f.Key, f.Failure) })
	return nil
}

// writeFailures answers the page of all at skip and top, with a nextLink
// when more follow.
func writeFailures[T any](c *gin.Context, all []T, skip, top int, entry func(T) failureEntry) {
	list := failureList{Value: []failureEntry{}}
	for _, f := range pageOf(all, skip, top) {
		list.Value = append(list.Value, entry(f))
	}
	if len(all) > skip+top {
		list.NextLink = nextLink(c, skip+top)
	}
	c.JSON(http.StatusOK, list)
}

// getFailure answers GET .../jobs/{jobName}/failures/{failureId}.
func (s *Server) getFailure(ctx context.Context, c *gin.Context, k jobs.Key) error {
	f, err := s.failure(ctx, c, k)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, newFailureEntry(k, f))
	return nil
}

// rerunFailure answers POST .../jobs/{jobName}/failures/{failureId}/run:
// the job queues the failure to run again, as it ran, and answers 202;
// it starts as a backfill occurrence does, in a free slot, a pace after
// the one before, while the job is enabled.
func (s *Server) rerunFailure(ctx context.Context, c *gin.Context, k jobs.Key) error {
	f, err := s.failure(ctx, c, k)
	if err != nil {
		return err
	}
	if err := s.store.Rerun(ctx, k, f); err != nil {
		return err
	}
	c.Status(http.StatusAccepted)
	return nil
}

// failure reads the failure the request's path names.
func (s *Server) failure(ctx context.Context, c *gin.Context, k jobs.Key) (jobs.Failure, error) {
	id := c.Param("failureId")
	if !failureIDPattern.MatchString(id) {
		return jobs.Failure{}, jobs.NotFound("failure " + clipValue(id) + " of job " + k.Job)
	}
	return s.store.Failure(ctx, k, id)
}
