package workflows_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// failures returns the failure records the job wrote, in the order
// written.
func (h *harness) failures() []jobs.Failure {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []jobs.Failure
	for _, u := range h.upserts {
		f, _ := u[jobs.MemoFailures].([]jobs.Failure)
		out = append(out, f...)
	}
	return out
}

// TestAFailedOccurrenceKeepsItsRecordInItsOwnUpsert: an occurrence whose
// main action fails for good writes its failure record (its action as it
// ran, secrets included, its last answer with the body cut to 1 KiB, its
// attempts, the error action's outcome) in the upsert of its rows: the
// job writes no more upserts than when it succeeds. A success writes
// none, and its upsert deletes the record from the memo, where every
// visibility row of the job would carry it. RecurFailures rides the search attributes' upsert its outcome
// makes.
func TestAFailedOccurrenceKeepsItsRecordInItsOwnUpsert(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	attrs := recordAttributes(h)
	body := strings.Repeat("é", 1000) // 2000 bytes
	h.answer = func(in jobs.HTTPRequestInput, n int) (jobs.HTTPResponse, error) {
		if in.ActionName == jobs.MainAction && in.Nominal.Equal(now) {
			resp, err := failing(in, n)
			resp.Body, resp.Headers = body, "Retry-After: 5"
			return resp, err
		}
		return jobs.HTTPResponse{StatusCode: 200, Status: "200 OK"}, nil
	}
	j := job(now, &recurrence.Recurrence{Frequency: "Hour", Count: intp(2)})
	a := j.Properties.Action
	a.Request.Authentication = &jobs.Authentication{Type: jobs.AuthBasic, Username: "u", Password: "pa55"}
	a.Request.Signing = &jobs.Signing{Secrets: []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}
	a.RetryPolicy = &jobs.RetryPolicy{RetryType: "Fixed", RetryInterval: "PT20S", RetryCount: intp(1)}
	a.ErrorAction = &jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: "https://example.com/error", Method: "POST"}}
	h.at(0, func() { h.put(j) })
	h.run(3*time.Hour, jobs.JobInput{Key: key})

	require.Len(t, h.upserts, 4, "the definition, two occurrences (the last completes the job), the DELETE")
	require.Contains(t, h.upserts[1], jobs.MemoRows)
	require.Contains(t, h.upserts[1], jobs.MemoFailures, "the failure is in its occurrence's upsert")
	deleted, ok := h.upserts[2][jobs.MemoFailures]
	require.True(t, ok, "the next upsert deletes the record from the memo")
	require.Nil(t, deleted)
	for _, i := range []int{0, 3} {
		require.NotContains(t, h.upserts[i], jobs.MemoFailures, i)
	}
	fs := h.failures()
	require.Len(t, fs, 1)
	f := fs[0]
	require.Equal(t, "20260601T120000Z-scheduled", f.ID)
	require.Equal(t, jobs.RunKindScheduled, f.Kind)
	require.Equal(t, now, f.Nominal.UTC())
	require.Equal(t, occurrences("2026-06-01T12:00:00Z")[0], f.OccurrenceID)
	require.Equal(t, "pa55", f.Action.Request.Authentication.Password, "the action as it ran: a re-run sends it again")
	require.Equal(t, a.Request.Signing.Secrets, f.Action.Request.Signing.Secrets)
	require.Equal(t, 500, f.Response.StatusCode)
	require.Equal(t, "Retry-After: 5", f.Response.Headers)
	require.Equal(t, strings.Repeat("é", 512), f.Response.Body, "the body's first KiB")
	require.Equal(t, 2, f.Attempts)
	require.Equal(t, 2, f.FailedAttempts)
	require.Equal(t, jobs.ExecutionCompleted, f.ErrorAction)
	require.Equal(t, h.rows(jobs.ExecutionFailed)[0].Message, f.Message)
	require.False(t, f.Ended.Before(f.Started))

	var marked []attributeUpsert
	for _, u := range attrs.upserts {
		if u.sa.ContainsKey(jobs.AttrFailures) {
			marked = append(marked, u)
		}
	}
	require.Len(t, marked, 1, "set once")
	require.Equal(t, "12:00", marked[0].at.Format("15:04"))
	kept, _ := marked[0].sa.GetBool(jobs.AttrFailures)
	require.True(t, kept)
	require.True(t, marked[0].sa.ContainsKey(jobs.AttrStatus), "in the upsert of the run's outcome")
}

// TestAFailureRunsAgainAsItRan: a re-run sends the failure's action, not
// the job's definition of now, at the failure's nominal time, under an
// occurrence ID of its own and signed as the failure was; its row and, when
// it fails too, its own failure record say what it ran again.
func TestAFailureRunsAgainAsItRan(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	var sent []jobs.HTTPRequestInput
	h.answer = func(in jobs.HTTPRequestInput, n int) (jobs.HTTPResponse, error) {
		sent = append(sent, in)
		return failing(in, n)
	}
	j := job(now, &recurrence.Recurrence{Frequency: "Hour"})
	j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "None"}
	h.at(0, func() { h.put(j) })
	redefined := job(now, &recurrence.Recurrence{Frequency: "Hour"})
	redefined.Properties.Action.Request.URI = "https://example.com/new"
	h.at(10*time.Minute, func() { h.put(redefined) })
	h.at(20*time.Minute, func() {
		update(h.t, h.env, jobs.UpdateRerun, jobs.RerunRequest{Failure: h.failures()[0]})
	})
	h.at(30*time.Minute, func() {
		update(h.t, h.env, jobs.UpdateRerun, jobs.RerunRequest{Failure: h.failures()[1]})
	})
	h.run(40*time.Minute, jobs.JobInput{Key: key})

	require.Len(t, sent, 3, "12:00, its re-run, the re-run's re-run")
	original := occurrences("2026-06-01T12:00:00Z")[0]
	for i, in := range sent {
		require.Equal(t, "https://example.com/", in.Request.URI, i)
		require.Equal(t, now, in.Nominal.UTC(), i)
	}
	require.Equal(t, []string{original, original + "/rerun-1", original + "/rerun-2"},
		[]string{sent[0].OccurrenceID, sent[1].OccurrenceID, sent[2].OccurrenceID})
	require.Equal(t, []string{"", original, original}, []string{sent[0].SignedAs, sent[1].SignedAs, sent[2].SignedAs})
	fs := h.failures()
	require.Len(t, fs, 3)
	require.Equal(t, "20260601T120000Z-rerun-1", fs[1].ID)
	require.Equal(t, jobs.RunKindRerun, fs[1].Kind)
	require.Equal(t, fs[0].ID, fs[1].RerunOf)
	require.Equal(t, fs[1].ID, fs[2].RerunOf)
	require.Equal(t, original, fs[2].SignedAs)
	rows := h.rows(jobs.ExecutionFailed)
	require.Equal(t, []string{"", fs[0].ID, fs[1].ID}, []string{rows[0].RerunOf, rows[1].RerunOf, rows[2].RerunOf})
	require.False(t, rows[1].Backfill)
}
