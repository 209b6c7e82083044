package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/recurhq/recur/jobs"
)

// BackfillLimits pace backfills (POST .../backfill): a job's workflow
// starts its backfill occurrences a pace apart, and each subscription
// queues at most so many occurrences, a burst and then a rate, so that a
// backfill is no amplifier aimed at a target.
type BackfillLimits struct {
	// Pace is the least time between the starts of two of a job's
	// backfill occurrences; zero is jobs.DefaultBackfillPace.
	Pace time.Duration
	// PerSubscription is the backfill occurrences each subscription may
	// queue: a bucket of Burst refilled at PerSecond, from which a
	// backfill takes as many as it queues or is refused with 429; a
	// PerSecond of zero is no limit.
	PerSubscription RateLimit
}

// backfillLimits is what the server keeps of BackfillLimits.
type backfillLimits struct {
	pace    time.Duration
	budgets *limiters // per subscription; nil for no limit
}

// backfillJob runs the job's occurrences of a past range (POST
// .../jobs/{j}/backfill, recur's extension): 202 with how many were
// queued and when the last may start; the job's workflow runs them, a
// pace apart.
func (s *Server) backfillJob(ctx context.Context, c *gin.Context, k jobs.Key) error {
	req, err := readBackfill(c)
	if err != nil {
		return err
	}
	view, err := s.store.JobView(ctx, k)
	if err != nil {
		return err
	}
	req.Pace = s.backfill.pace
	if err := s.chargeBackfill(c, k, view, &req); err != nil {
		return err
	}
	res, maybeQueued, err := s.store.Backfill(ctx, k, req)
	if err != nil {
		if req.Budget != nil && !maybeQueued {
			// Nothing was queued. An update whose answer was lost may
			// have queued: what it took stays taken.
			s.backfill.budgets.give(k.Subscription, *req.Budget)
		}
		return err
	}
	c.JSON(http.StatusAccepted, res)
	return nil
}

// chargeBackfill takes the occurrences the backfill will queue from its
// subscription's budget, counted on the job as its workflow last wrote
// it, and has the workflow queue no more (req.Budget, set when it took
// them): what a redefinition meanwhile adds to the range is refused, not
// queued free. A range past the budget's burst is refused, and one past
// what the bucket holds now answers 429 with Retry-After.
func (s *Server) chargeBackfill(c *gin.Context, k jobs.Key, view jobs.JobView, req *jobs.BackfillRequest) error {
	l := s.backfill.budgets
	if l == nil {
		return nil
	}
	n := jobs.BackfillCount(view.Job, view.Created, req.StartTime, req.EndTime)
	switch {
	case n > jobs.MaxBackfill:
		return jobs.TooLongBackfill()
	case n > l.burst:
		return &jobs.Error{Code: jobs.CodeInvalidRequest, Message: fmt.Sprintf(
			"the range holds %d occurrences, more than the %d backfill occurrences a subscription may queue at once: backfill a shorter one", n, l.burst)}
	}
	if wait := l.take(k.Subscription, n); wait > 0 {
		retryAfter(c, wait)
		return &apiError{status: http.StatusTooManyRequests, code: "TooManyRequests", message: fmt.Sprintf(
			"subscription %s has queued as many backfill occurrences as it may for now: the %d of this backfill may queue after the number of seconds in Retry-After",
			k.Subscription, n)}
	}
	req.Budget = &n
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
