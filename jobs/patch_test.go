package jobs_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

func basicJob() jobs.Job {
	return jobs.Job{Properties: jobs.Properties{Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Https",
		Request: &jobs.HTTPRequest{URI: "https://example.com", Method: "GET",
			Authentication: &jobs.Authentication{Type: "Basic", Username: "u", Password: "p4ss"}}}}}}
}

func TestPatchOfAnotherAuthenticationTypeReplacesIt(t *testing.T) {
	patch := json.RawMessage(`{"properties":{"action":{"request":{"authentication":{"type":"ActiveDirectoryOAuth","tenant":"t","audience":"a","clientId":"c","secret":"s"}}}}}`)
	got, err := jobs.PatchJob(basicJob(), patch)
	require.NoError(t, err)
	auth := got.Properties.Action.Request.Authentication
	require.Equal(t, "ActiveDirectoryOAuth", auth.Type)
	require.Empty(t, auth.Password, "the Basic password does not survive into the new type")
	require.Empty(t, auth.Username)
}

func TestPatchOfTheSameAuthenticationTypeMerges(t *testing.T) {
	patch := json.RawMessage(`{"properties":{"action":{"request":{"authentication":{"type":"basic","username":"v"}}}}}`)
	got, err := jobs.PatchJob(basicJob(), patch)
	require.NoError(t, err)
	auth := got.Properties.Action.Request.Authentication
	require.Equal(t, "v", auth.Username)
	require.Equal(t, "p4ss", auth.Password, "a new username keeps the password")
}

// TestMergeKeepsNumbersAsWritten: a patch's numbers reach the definition
// as written, so one out of range is refused at its field.
func TestMergeKeepsNumbersAsWritten(t *testing.T) {
	_, err := jobs.MergePatch(basicJob(), json.RawMessage(`{"properties":{"maxConsecutiveFaults":1e400}}`))
	var jobErr *jobs.Error
	require.ErrorAs(t, err, &jobErr)
	require.Equal(t, jobs.CodeInvalidContent, jobErr.Code)
	require.Equal(t, "properties.maxConsecutiveFaults", jobErr.Target)

	got, err := jobs.MergePatch(basicJob(), json.RawMessage(`{"properties":{"maxConsecutiveFaults":9007199254740993}}`))
	require.NoError(t, err)
	require.Equal(t, 9007199254740993, got.Properties.MaxConsecutiveFaults, "not rounded through float64")
}

// TestPatchMatchesMembersInAnyLetterCase: a patch member names the
// definition's member of that name in any letter case (a header too), as
// a PUT's would; it neither lands beside it, ignored, nor makes a second
// header.
func TestPatchMatchesMembersInAnyLetterCase(t *testing.T) {
	current := basicJob()
	current.Properties.Action.Request.Headers = map[string]string{"X-A": "1", "X-B": "2"}
	got, err := jobs.MergePatch(current, json.RawMessage(`{"PROPERTIES":{"Action":{"Request":{"URI":"https://example.org/","headers":{"x-a":"3","X-b":null}}}}}`))
	require.NoError(t, err)
	require.Equal(t, "https://example.org/", got.Properties.Action.Request.URI)
	require.Equal(t, map[string]string{"x-a": "3"}, got.Properties.Action.Request.Headers)

	// A workflow's input keeps its letter case: "a" and "A" are two members.
	current.Properties.Action = &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Workflow",
		Workflow: &jobs.WorkflowStart{WorkflowType: "w", TaskQueue: "q", Input: json.RawMessage(`{"a":1,"b":2}`)}}}
	got, err = jobs.MergePatch(current, json.RawMessage(`{"properties":{"action":{"Workflow":{"INPUT":{"A":3,"b":null}}}}}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"a":1,"A":3}`, string(got.Properties.Action.Workflow.Input))
}

// TestMergeIsDeterministic: the job workflow merges patches, so the same
// patch gives the same definition however Go orders a map's members,
// where a patch names one member in two letter cases.
func TestMergeIsDeterministic(t *testing.T) {
	current := basicJob()
	current.Properties.Action.Request.Headers = map[string]string{"x-a": "0"}
	patch := json.RawMessage(`{"properties":{"action":{"request":{"headers":{"X-A":"1","x-A":"2","X-a":"3"}}}}}`)
	first, err := jobs.MergePatch(current, patch)
	require.NoError(t, err)
	for range 50 {
		got, err := jobs.MergePatch(current, patch)
		require.NoError(t, err)
		require.Equal(t, first.Properties.Action.Request.Headers, got.Properties.Action.Request.Headers)
	}
}
