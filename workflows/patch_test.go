package workflows_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// TestAPatchMergesIntoTheWholeDefinition: the job's workflow merges a
// PATCH into its definition, secrets included, which no read shows: a
// new username keeps the password. A patch merged by the API into a
// definition the job no longer has is refused (the API reads it again),
// and one that makes a bad definition is refused at its field, the
// definition left as it was.
func TestAPatchMergesIntoTheWholeDefinition(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	def := job(now.Add(time.Hour), &recurrence.Recurrence{Frequency: "Hour"})
	def.Properties.Action.Request.Authentication = &jobs.Authentication{Type: "Basic", Username: "u", Password: "p4ss"}
	var first string
	var patched, stale, bad error
	h.at(0, func() { h.put(def) })
	h.at(time.Second, func() {
		first = h.view().ETag
		updateAnswer(h, jobs.UpdatePatchJob, jobs.PatchJobRequest{Base: first,
			Patch: json.RawMessage(`{"properties":{"action":{"request":{"authentication":{"type":"Basic","username":"v"}}}}}`)}, &patched)
	})
	h.at(2*time.Second, func() {
		updateAnswer(h, jobs.UpdatePatchJob, jobs.PatchJobRequest{Base: first,
			Patch: json.RawMessage(`{"properties":{"state":"Disabled"}}`)}, &stale)
	})
	h.at(3*time.Second, func() {
		updateAnswer(h, jobs.UpdatePatchJob, jobs.PatchJobRequest{Base: h.view().ETag,
			Patch: json.RawMessage(`{"properties":{"recurrence":{"interval":"x"}}}`)}, &bad)
	})
	var after jobs.Job
	h.at(4*time.Second, func() { after = h.view() })
	h.run(time.Minute, jobs.JobInput{Key: key})

	require.NoError(t, patched)
	auth := after.Properties.Action.Request.Authentication
	require.Equal(t, "v", auth.Username)
	require.Equal(t, "p4ss", auth.Password, "the password the API never saw is kept")
	require.NotEqual(t, first, after.ETag)
	require.Equal(t, jobs.Enabled, after.Properties.State, "neither refused patch took effect")
	require.EqualValues(t, "hour", after.Properties.Recurrence.Frequency)

	e, ok := jobs.FromApplicationError(stale)
	require.True(t, ok, "%v", stale)
	require.Equal(t, jobs.CodeBaseChanged, e.Code)
	e, ok = jobs.FromApplicationError(bad)
	require.True(t, ok, "%v", bad)
	require.Equal(t, jobs.CodeInvalidContent, e.Code)
	require.Equal(t, "properties.recurrence.interval", e.Target)
}
