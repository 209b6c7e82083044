package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// doIf sends a request with the conditional headers given ("" for none)
// and returns the status, the ETag header and the decoded body.
func (s *stack) doIf(t *testing.T, method, path string, body any, ifMatch, ifNoneMatch string) (int, string, map[string]any) {
	t.Helper()
	var data []byte
	if body != nil {
		var err error
		data, err = json.Marshal(body)
		require.NoError(t, err)
	}
	req, err := http.NewRequest(method, s.api.URL+path+"?api-version=2016-03-01", bytes.NewReader(data))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	resp, err := followed(http.DefaultClient, req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, resp.Header.Get("ETag"), out
}

// TestETagsGuardWrites: every answer about a job or a collection carries
// its ETag, in the header and the body; a write with a stale If-Match is
// refused with 412 and changes nothing, one with the current ETag goes
// through and gets a new one; If-None-Match: * only creates. A run
// changes the status, not the definition: the ETag stays.
func TestETagsGuardWrites(t *testing.T) {
	s := newStack(t)
	collBody := map[string]any{"properties": map[string]any{"sku": map[string]any{"name": "Standard"}}}

	status, collTag, body := s.doIf(t, http.MethodPut, collectionPath, collBody, "", "*")
	require.Equal(t, http.StatusCreated, status, body)
	require.NotEmpty(t, collTag)
	require.Equal(t, collTag, body["etag"])
	status, _, body = s.doIf(t, http.MethodPut, collectionPath, collBody, "", "*")
	require.Equal(t, http.StatusPreconditionFailed, status, "If-None-Match: * on an existing collection: %v", body)
	require.Equal(t, "PreconditionFailed", path(body, "error", "code"))
	status, tag, _ := s.doIf(t, http.MethodGet, collectionPath, nil, "", "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, collTag, tag, "GET reads the ETag the PUT answered")

	target, _ := newTarget(t)
	jobPath := collectionPath + "/jobs/guarded"
	job := httpJob(target.URL, map[string]any{"frequency": "Hour"})
	status, jobTag, body := s.doIf(t, http.MethodPut, jobPath, job, "", "*")
	require.Equal(t, http.StatusCreated, status, body)
	require.NotEmpty(t, jobTag)
	require.Equal(t, jobTag, body["etag"])
	status, tag, body = s.doIf(t, http.MethodGet, jobPath, nil, "", "")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, jobTag, tag)
	require.Equal(t, jobTag, body["etag"])

	status, _, body = s.doIf(t, http.MethodPut, jobPath, job, "", "*")
	require.Equal(t, http.StatusPreconditionFailed, status, "If-None-Match: * on an existing job: %v", body)

	status, newTag, body := s.doIf(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"state": "Disabled"}}, jobTag, "")
	require.Equal(t, http.StatusOK, status, body)
	require.NotEqual(t, jobTag, newTag, "a change gets a new ETag")
	status, _, body = s.doIf(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"state": "Enabled"}}, jobTag, "")
	require.Equal(t, http.StatusPreconditionFailed, status, "the old ETag is stale: %v", body)
	require.Contains(t, path(body, "error", "message"), newTag)
	status, _, body = s.doIf(t, http.MethodPut, jobPath, job, jobTag, "")
	require.Equal(t, http.StatusPreconditionFailed, status, "PUT with a stale If-Match: %v", body)
	status, _, body = s.doIf(t, http.MethodGet, jobPath, nil, "", "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "disabled", path(body, "properties", "state"), "the refused writes changed nothing")

	status, _, body = s.doIf(t, http.MethodPost, jobPath+"/run", nil, "", "")
	require.Equal(t, http.StatusOK, status, body)
	var runTag string
	require.Eventually(t, func() bool {
		_, tag, body := s.doIf(t, http.MethodGet, jobPath, nil, "", "")
		count, _ := path(body, "properties", "status", "executionCount").(float64)
		runTag = tag
		return count == 1
	}, 20*time.Second, 200*time.Millisecond, "the run is counted")
	require.Equal(t, newTag, runTag, "a run leaves the ETag as it was")

	status, _, body = s.doIf(t, http.MethodDelete, jobPath, nil, jobTag, "")
	require.Equal(t, http.StatusPreconditionFailed, status, "DELETE with a stale If-Match: %v", body)
	status, _, body = s.doIf(t, http.MethodDelete, jobPath, nil, newTag, "")
	require.Equal(t, http.StatusOK, status, body)

	status, _, body = s.doIf(t, http.MethodDelete, collectionPath, nil, `"stale-1"`, "")
	require.Equal(t, http.StatusPreconditionFailed, status, body)
	status, _, body = s.doIf(t, http.MethodDelete, collectionPath, nil, collTag, "")
	require.Equal(t, http.StatusOK, status, body)
}

// TestIfNoneMatchGuardsPatches: on a PATCH, If-None-Match with the
// resource's ETag, strong or weak (W/), or * fails with 412 and changes
// nothing; another ETag lets it through. A header that is no ETag (no
// quotes, a list, 5000 characters) is a 400 that does not quote it back,
// never a write that ignores it.
func TestIfNoneMatchGuardsPatches(t *testing.T) {
	s := newStack(t)
	status, collTag, body := s.doIf(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}}, "", "")
	require.Equal(t, http.StatusCreated, status, body)
	target, _ := newTarget(t)
	jobPath := collectionPath + "/jobs/guarded"
	status, jobTag, body := s.doIf(t, http.MethodPut, jobPath, httpJob(target.URL, map[string]any{"frequency": "Hour"}), "", "")
	require.Equal(t, http.StatusCreated, status, body)

	disable := map[string]any{"properties": map[string]any{"state": "Disabled"}}
	// The job first: disabling the collection disables its jobs, which
	// changes their ETags.
	for _, resource := range []struct{ path, etag string }{{jobPath, jobTag}, {collectionPath, collTag}} {
		for _, ifNoneMatch := range []string{resource.etag, "W/" + resource.etag, "*"} {
			status, _, body := s.doIf(t, http.MethodPatch, resource.path, disable, "", ifNoneMatch)
			require.Equal(t, http.StatusPreconditionFailed, status, "%s If-None-Match %s: %v", resource.path, ifNoneMatch, body)
			require.Equal(t, "PreconditionFailed", path(body, "error", "code"))
		}
		for _, ifNoneMatch := range []string{strings.Trim(resource.etag, `"`), `"other-1", ` + resource.etag} {
			status, _, body := s.doIf(t, http.MethodPatch, resource.path, disable, "", ifNoneMatch)
			require.Equal(t, http.StatusBadRequest, status, "%s If-None-Match %s: %v", resource.path, ifNoneMatch, body)
			require.Equal(t, "If-None-Match", path(body, "error", "target"))
		}
		long := `"` + strings.Repeat("x", 5000) + `"`
		for _, method := range []string{http.MethodPatch, http.MethodPut, http.MethodDelete} {
			status, _, body := s.doIf(t, method, resource.path, disable, long, "")
			require.Equal(t, http.StatusBadRequest, status, "%s %s with a 5000-character If-Match: %v", method, resource.path, body)
			require.NotContains(t, path(body, "error", "message"), "xxxxxxxxxx", "the header is not echoed")
		}
		status, _, body := s.doIf(t, http.MethodGet, resource.path, nil, "", "")
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, "enabled", path(body, "properties", "state"), "%s: the refused PATCHes changed nothing", resource.path)

		status, newTag, body := s.doIf(t, http.MethodPatch, resource.path, disable, "", `"other-1"`)
		require.Equal(t, http.StatusOK, status, "%s: another ETag lets it through: %v", resource.path, body)
		require.NotEqual(t, resource.etag, newTag)
	}
}
