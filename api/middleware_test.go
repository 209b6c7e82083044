package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// These requests never reach Temporal: the router answers them first.
func serve(t *testing.T, method, path, contentType, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	h := New(nil, Options{Namespace: "default"})
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestARMPathSegmentsMatchInAnyCase(t *testing.T) {
	// Without api-version the answer is 400 once a route matched, 404 if
	// none did.
	for _, path := range []string{
		"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c",
		"/SUBSCRIPTIONS/s/resourcegroups/rg/PROVIDERS/microsoft.scheduler/JobCollections/c/JOBS/j",
		"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/j/HISTORY",
	} {
		rec := serve(t, http.MethodGet, path, "", "")
		require.Equal(t, http.StatusBadRequest, rec.Code, path)
		require.Contains(t, rec.Body.String(), "MissingApiVersionParameter", path)
	}
	rec := serve(t, http.MethodGet, "/subscriptions/s/resourceGroups/rg/providers/Other/jobCollections/c", "", "")
	require.Equal(t, http.StatusNotFound, rec.Code, "names stay case-sensitive where ARM's are fixed")
}

func TestEveryResponseCarriesARequestID(t *testing.T) {
	rec := serve(t, http.MethodGet, "/healthz", "", "", headerClientRequestID, "client-42")
	require.Len(t, rec.Header().Get(headerRequestID), 32)
	require.Equal(t, "client-42", rec.Header().Get(headerClientRequestID))
	other := serve(t, http.MethodGet, "/healthz", "", "")
	require.NotEqual(t, rec.Header().Get(headerRequestID), other.Header().Get(headerRequestID))
}

func TestNonJSONBodiesAre415(t *testing.T) {
	path := "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c?api-version=2016-03-01"
	rec := serve(t, http.MethodPut, path, "application/x-www-form-urlencoded", "properties=1")
	require.Equal(t, http.StatusUnsupportedMediaType, rec.Code)
	require.Contains(t, rec.Body.String(), `"code":"UnsupportedMediaType"`)
}

func TestUnknownAPIVersionIs400(t *testing.T) {
	rec := serve(t, http.MethodGet, "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c?api-version=2014-08-01-preview", "", "")
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Contains(t, rec.Body.String(), "InvalidApiVersionParameter")
}
