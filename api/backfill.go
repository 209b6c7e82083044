package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/recurhq/recur/jobs"
)

// backfillJob runs the job's occurrences of a past range (POST
// .../jobs/{j}/backfill, recur's extension): 202 with how many were
// queued; the job's workflow runs them.
func (s *Server) backfillJob(ctx context.Context, c *gin.Context, k jobs.Key) error {
	req, err := readBackfill(c)
	if err != nil {
		return err
	}
	if _, err := s.job(ctx, k); err != nil {
		return err
	}
	var res jobs.BackfillResult
	if err := s.updateInto(ctx, k.JobWorkflowID(), jobs.UpdateBackfill, req, &res); err != nil {
		return notFoundAs(err, jobNamed(k))
	}
	c.JSON(http.StatusAccepted, res)
	return nil
}

// backfillBody is a backfill's body as sent. Its times are read here
// rather than by encoding/json into time.Time, whose errors quote Go's
// layout (2006-01-02T15:04:05Z07:00) and whose zero value, a time of
// year 1, the job's workflow takes for a time not given.
type backfillBody struct {
	StartTime *string `json:"startTime"`
	EndTime   *string `json:"endTime"`
}

// earliestBackfill is the earliest time a backfill reaches back to: no
// job of recur's ran before it, and it keeps times of year 1 (Go's zero)
// from the workflow.
var earliestBackfill = time.Unix(0, 0).UTC()

// readBackfill reads a backfill's body: both times, RFC 3339, from
// earliestBackfill on. Whether they make a past range is the job
// workflow's to check, with its own clock.
func readBackfill(c *gin.Context) (jobs.BackfillRequest, error) {
	var body backfillBody
	if err := decode(c, &body); err != nil {
		return jobs.BackfillRequest{}, err
	}
	start, err := backfillTime("startTime", body.StartTime)
	if err != nil {
		return jobs.BackfillRequest{}, err
	}
	end, err := backfillTime("endTime", body.EndTime)
	if err != nil {
		return jobs.BackfillRequest{}, err
	}
	return jobs.BackfillRequest{StartTime: start, EndTime: end}, nil
}

// backfillTime parses the backfill's time named name.
func backfillTime(name string, v *string) (time.Time, error) {
	const example = "2026-11-01T00:00:00Z"
	bad := func(message string) error {
		return &jobs.Error{Code: jobs.CodeInvalidRequest, Target: name, Message: message}
	}
	if v == nil {
		return time.Time{}, bad(name + " is required: an RFC 3339 date-time such as " + example)
	}
	t, err := time.Parse(time.RFC3339, *v)
	if err != nil {
		return time.Time{}, bad(fmt.Sprintf("%s %q is not an RFC 3339 date-time such as %s", name, clipValue(*v), example))
	}
	if t.Before(earliestBackfill) {
		return time.Time{}, bad(fmt.Sprintf("%s %s is out of range: a backfill reaches back to %s at most",
			name, t.Format(time.RFC3339), earliestBackfill.Format(time.RFC3339)))
	}
	return t, nil
}
