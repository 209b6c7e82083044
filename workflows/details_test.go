package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// queryMetadata is the SDK's built-in query (internal.QueryTypeWorkflowMetadata,
// not exported by the client package of SDK v1.50).
const queryMetadata = "__temporal_workflow_metadata"

// currentDetails asks the workflow's built-in metadata query, which the
// Web UI and `temporal workflow metadata` ask, for its current details.
func (h *harness) currentDetails() string {
	res, err := h.env.QueryWorkflow(queryMetadata)
	require.NoError(h.t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(h.t, res.Get(&md))
	return md.GetCurrentDetails()
}

// TestCurrentDetailsFollowTheJob: the job workflow's current details say
// its state, next occurrence and counters as they change, from before the
// first PUT to a disabled job.
func TestCurrentDetailsFollowTheJob(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	h.answer = failing
	got := map[string]string{}
	h.at(time.Second/2, func() { got["before"] = h.currentDetails() })
	h.at(time.Second, func() {
		j := job(now.Add(time.Minute), &recurrence.Recurrence{Frequency: "Minute", Interval: intp(5)})
		j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "None"}
		h.put(j)
	})
	h.at(2*time.Second, func() { got["defined"] = h.currentDetails() })
	h.at(7*time.Minute, func() { got["ran"] = h.currentDetails() })
	h.at(8*time.Minute, func() { update(h.t, h.env, jobs.UpdateCollectionChanged, jobs.CollectionChange{State: jobs.Disabled}) })
	h.at(9*time.Minute, func() { got["disabled"] = h.currentDetails() })
	h.run(10*time.Minute, jobs.JobInput{Key: key})

	require.Equal(t, "**not defined yet**: the first PUT of the job defines it", got["before"])
	require.Equal(t, "**Enabled**, next occurrence 2026-06-01T12:01:00Z\n\n"+
		"- schedule: every 5 minutes\n- action: POST https://example.com/\n"+
		"- runs: 0, failed attempts 0, faulted 0\n", got["defined"])
	require.Equal(t, "**Enabled**, next occurrence 2026-06-01T12:11:00Z\n\n"+
		"- schedule: every 5 minutes\n- action: POST https://example.com/\n"+
		"- runs: 2, failed attempts 2, faulted 2, last started 2026-06-01T12:06:00Z\n"+
		"- failing: 2 runs in a row since 2026-06-01T12:01:00Z\n", got["ran"])
	require.Equal(t, "**Disabled**\n\n"+
		"- schedule: every 5 minutes\n- action: POST https://example.com/\n"+
		"- runs: 2, failed attempts 2, faulted 2, last started 2026-06-01T12:06:00Z\n"+
		"- failing: 2 runs in a row since 2026-06-01T12:01:00Z\n", got["disabled"], "disabling ends no streak")
}

// TestCurrentDetailsAfterContinueAsNew: a job workflow that starts with a
// carried state (continue-as-new) shows it at once, before anything
// happens; static summaries do not survive continue-as-new, these do.
func TestCurrentDetailsAfterContinueAsNew(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, now)
	j := job(now, &recurrence.Recurrence{Frequency: "Hour"})
	j.Properties.State = jobs.Enabled
	next := now.Add(30 * time.Minute)
	var details string
	h.at(time.Second, func() { details = h.currentDetails() })
	h.run(time.Minute, jobs.JobInput{Key: key, State: &jobs.JobState{Job: j, PlannedFrom: now, Next: &next}})
	require.Equal(t, "**Enabled**, next occurrence 2026-06-01T12:30:00Z\n\n"+
		"- schedule: every hour\n- action: POST https://example.com/\n", details)
}
