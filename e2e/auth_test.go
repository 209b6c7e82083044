package e2e

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// requireNoSecret fails when an API answer shows a secret, or any
// password, pfx or secret field at all.
func requireNoSecret(t *testing.T, body map[string]any, secret string) {
	t.Helper()
	data, err := json.Marshal(body)
	require.NoError(t, err)
	require.NotContains(t, string(data), secret)
	for _, field := range []string{`"password"`, `"pfx"`, `"secret"`} {
		require.NotContains(t, string(data), field)
	}
}

func TestBasicAuthenticationEndToEnd(t *testing.T) {
	const password = "e2e-pa55word"
	s := newStack(t)
	target, got := newTarget(t)
	status, _ := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status)

	// Far in the future: this test runs the job with run now.
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	jobPath := collectionPath + "/jobs/basic"
	status, job := s.do(t, http.MethodPut, jobPath, map[string]any{"properties": map[string]any{
		"startTime": start.Format(time.RFC3339),
		"action": map[string]any{"type": "http", "request": map[string]any{
			"uri": target.URL + "/hook", "method": "post", "body": "first",
			"authentication": map[string]any{"type": "basic", "username": "user1", "password": password},
		}},
	}})
	require.Equal(t, http.StatusCreated, status, job)
	requireNoSecret(t, job, password)
	require.Equal(t, "Basic", path(job, "properties", "action", "request", "authentication", "type"))
	require.Equal(t, "user1", path(job, "properties", "action", "request", "authentication", "username"))

	wantAuth := "Basic " + base64.StdEncoding.EncodeToString([]byte("user1:"+password))
	runNow := func(wantBody string) {
		t.Helper()
		status, body := s.do(t, http.MethodPost, jobPath+"/run", nil)
		require.Equal(t, http.StatusOK, status, body)
		select {
		case r := <-got:
			require.Equal(t, wantAuth, r.header.Get("Authorization"))
			require.Equal(t, wantBody, r.body)
		case <-time.After(30 * time.Second):
			t.Fatal("the target received nothing")
		}
	}
	runNow("first")

	status, job = s.do(t, http.MethodGet, jobPath, nil)
	require.Equal(t, http.StatusOK, status, job)
	requireNoSecret(t, job, password)
	require.Equal(t, "user1", path(job, "properties", "action", "request", "authentication", "username"))
	status, list := s.do(t, http.MethodGet, collectionPath+"/jobs", nil)
	require.Equal(t, http.StatusOK, status, list)
	requireNoSecret(t, list, password)

	// A PATCH that does not mention the authentication keeps its secret.
	status, job = s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{
		"action": map[string]any{"request": map[string]any{"body": "patched"}},
	}})
	require.Equal(t, http.StatusOK, status, job)
	requireNoSecret(t, job, password)
	runNow("patched")
}

func TestClientCertificateBadPFXIsRejected(t *testing.T) {
	const password = "e2e-pfx-pa55"
	s := newStack(t)
	status, _ := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status)
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/cert", map[string]any{"properties": map[string]any{
		"action": map[string]any{"type": "https", "request": map[string]any{
			"uri": "https://example.invalid", "method": "GET",
			"authentication": map[string]any{"type": "ClientCertificate",
				"pfx": base64.StdEncoding.EncodeToString([]byte("not a pfx")), "password": password},
		}},
	}})
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "properties.action.request.authentication.pfx", path(body, "error", "target"))
	requireNoSecret(t, body, password)
}
