package e2e

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/codec"
)

// twinPath is the job the tests of runs define, read and write.
const twinPath = collectionPath + "/jobs/twin"

// twoAPIs returns two API processes on one Temporal server and worker,
// with the collection defined.
func twoAPIs(t *testing.T) (s, other *stack) {
	s = newStack(t)
	other = &stack{temporal: s.temporal, recur: s.recur, api: httptest.NewServer(api.New(s.temporal.GetDefaultClient(), api.Options{
		Namespace: s.temporal.GetDefaultNamespace(), DataConverter: codec.DataConverter(s.recur.Keys)}))}
	t.Cleanup(other.api.Close)
	s.putCollection(t)
	return s, other
}

// defineTwin puts twinPath through via, to call uri, and expects want.
func defineTwin(t *testing.T, via *stack, uri string, want int) {
	t.Helper()
	status, body := via.do(t, http.MethodPut, twinPath, httpJob(uri, map[string]any{"frequency": "Hour"}))
	require.Equal(t, want, status, body)
}

// twinURI reads twinPath's action's URI through via.
func twinURI(t *testing.T, via *stack) any {
	t.Helper()
	status, body := via.do(t, http.MethodGet, twinPath, nil)
	require.Equal(t, http.StatusOK, status, body)
	return path(body, "properties", "action", "request", "uri")
}

// TestReadsFollowTheCurrentRun: an API process reads a job through the
// run it last saw running; another process deletes the job and defines
// it anew, in a new run. The first one's reads answer with the new
// definition and, once that is deleted too, 404, never the ended run's.
func TestReadsFollowTheCurrentRun(t *testing.T) {
	t.Parallel()
	s, other := twoAPIs(t)

	defineTwin(t, s, "http://127.0.0.1:1/first", http.StatusCreated)
	require.Equal(t, "http://127.0.0.1:1/first", twinURI(t, s))
	require.Equal(t, "http://127.0.0.1:1/first", twinURI(t, other))

	status, body := other.do(t, http.MethodDelete, twinPath, nil)
	require.Equal(t, http.StatusOK, status, body)
	defineTwin(t, other, "http://127.0.0.1:1/second", http.StatusCreated)
	require.Equal(t, "http://127.0.0.1:1/second", twinURI(t, s), "a read through the ended run")

	status, body = other.do(t, http.MethodDelete, twinPath, nil)
	require.Equal(t, http.StatusOK, status, body)
	status, body = s.do(t, http.MethodGet, twinPath, nil)
	require.Equal(t, http.StatusNotFound, status, body)
}

// TestWritesFollowTheCurrentRun: an API process writes a job through the
// run it last saw running; another process deletes the job and defines it
// anew, in a new run. The first one's PUT and PATCH reach the new run,
// and once the job is deleted for good its PUT creates it again.
func TestWritesFollowTheCurrentRun(t *testing.T) {
	t.Parallel()
	s, other := twoAPIs(t)
	redefine := func() {
		t.Helper()
		status, body := other.do(t, http.MethodDelete, twinPath, nil)
		require.Equal(t, http.StatusOK, status, body)
		defineTwin(t, other, "http://127.0.0.1:1/other", http.StatusCreated)
	}

	defineTwin(t, s, "http://127.0.0.1:1/first", http.StatusCreated)
	redefine()
	defineTwin(t, s, "http://127.0.0.1:1/put", http.StatusOK) // the job other defined, through its run
	require.Equal(t, "http://127.0.0.1:1/put", twinURI(t, other))

	redefine()
	status, body := s.do(t, http.MethodPatch, twinPath, map[string]any{"properties": map[string]any{
		"action": map[string]any{"request": map[string]any{"uri": "http://127.0.0.1:1/patch"}}}})
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "http://127.0.0.1:1/patch", twinURI(t, other))

	status, body = other.do(t, http.MethodDelete, twinPath, nil)
	require.Equal(t, http.StatusOK, status, body)
	defineTwin(t, s, "http://127.0.0.1:1/again", http.StatusCreated)
	require.Equal(t, "http://127.0.0.1:1/again", twinURI(t, other))
	status, body = s.do(t, http.MethodDelete, twinPath, nil)
	require.Equal(t, http.StatusOK, status, body)
	status, body = other.do(t, http.MethodGet, twinPath, nil)
	require.Equal(t, http.StatusNotFound, status, body)
}
