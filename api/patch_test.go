package api

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
	got, err := merge(replacedAuthentication(basicJob(), patch), patch)
	require.NoError(t, err)
	auth := got.Properties.Action.Request.Authentication
	require.Equal(t, "ActiveDirectoryOAuth", auth.Type)
	require.Empty(t, auth.Password, "the Basic password does not survive into the new type")
	require.Empty(t, auth.Username)
}

func TestPatchOfTheSameAuthenticationTypeMerges(t *testing.T) {
	patch := json.RawMessage(`{"properties":{"action":{"request":{"authentication":{"type":"basic","username":"v"}}}}}`)
	got, err := merge(replacedAuthentication(basicJob(), patch), patch)
	require.NoError(t, err)
	auth := got.Properties.Action.Request.Authentication
	require.Equal(t, "v", auth.Username)
	require.Equal(t, "p4ss", auth.Password, "a new username keeps the password")
}
