package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStateReason: a PATCH that disables a job may say why; GET and the
// job list show it, enabling clears it, a reason past 1024 characters is
// refused, and recur writes its own when a collection disables its jobs
// (those defined into it while disabled too) and when a job faults.
func TestStateReason(t *testing.T) {
	s := newStack(t)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	jobPath := collectionPath + "/jobs/paused"
	status, body = s.do(t, http.MethodPut, jobPath, httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"}))
	require.Equal(t, http.StatusCreated, status, body)

	status, body = s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{
		"state": "Disabled", "stateReason": "the target is being migrated"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "the target is being migrated", path(body, "properties", "stateReason"))
	status, body = s.do(t, http.MethodGet, jobPath, nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "disabled", path(body, "properties", "state"))
	require.Equal(t, "the target is being migrated", path(body, "properties", "stateReason"))
	require.Eventually(t, func() bool {
		_, list := s.do(t, http.MethodGet, collectionPath+"/jobs", nil)
		items, _ := list["value"].([]any)
		return len(items) == 1 && path(items[0].(map[string]any), "properties", "stateReason") == "the target is being migrated"
	}, 10*time.Second, 200*time.Millisecond, "the list shows the reason")

	status, body = s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"stateReason": strings.Repeat("é", 1025)}})
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "properties.stateReason", path(body, "error", "target"))

	status, body = s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"state": "Enabled"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Nil(t, path(body, "properties", "stateReason"), "enabling clears the reason")

	t.Run("a collection disabling its jobs says so", func(t *testing.T) {
		status, body := s.do(t, http.MethodPost, collectionPath+"/disable", nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Eventually(t, func() bool {
			_, job := s.do(t, http.MethodGet, jobPath, nil)
			return path(job, "properties", "stateReason") == "job collection coll1 was disabled"
		}, 10*time.Second, 200*time.Millisecond)
		status, body = s.do(t, http.MethodPost, collectionPath+"/enable", nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Eventually(t, func() bool {
			_, job := s.do(t, http.MethodGet, jobPath, nil)
			return path(job, "properties", "state") == "enabled" && path(job, "properties", "stateReason") == nil
		}, 10*time.Second, 200*time.Millisecond)
	})
	t.Run("a job defined into a disabled collection starts disabled", func(t *testing.T) {
		status, body := s.do(t, http.MethodPost, collectionPath+"/disable", nil)
		require.Equal(t, http.StatusOK, status, body)
		status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/late", httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"}))
		require.Equal(t, http.StatusCreated, status, body)
		require.Equal(t, "disabled", path(body, "properties", "state"))
		require.Equal(t, "job collection coll1 was disabled", path(body, "properties", "stateReason"))
		status, body = s.do(t, http.MethodPost, collectionPath+"/enable", nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Eventually(t, func() bool {
			_, job := s.do(t, http.MethodGet, collectionPath+"/jobs/late", nil)
			return path(job, "properties", "state") == "enabled" && path(job, "properties", "stateReason") == nil
		}, 10*time.Second, 200*time.Millisecond)
	})
	t.Run("a job that faults says why", func(t *testing.T) {
		once := httpJob("http://127.0.0.1:9/", nil)
		once["properties"].(map[string]any)["startTime"] = time.Now().UTC().Format(time.RFC3339)
		once["properties"].(map[string]any)["action"].(map[string]any)["retryPolicy"] = map[string]any{"retryType": "None"}
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/once", once)
		require.Equal(t, http.StatusCreated, status, body)
		require.Eventually(t, func() bool {
			_, job := s.do(t, http.MethodGet, collectionPath+"/jobs/once", nil)
			return path(job, "properties", "state") == "faulted" &&
				path(job, "properties", "stateReason") == "its one run failed after its retries"
		}, 20*time.Second, 200*time.Millisecond)
	})
}
