package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/internal/recurtest"
)

// Bearer tokens of the tenants of TestCrossTenantAccess.
const (
	tokenTenantA = "tenant-a-token-0123456789"
	tokenTenantB = "tenant-b-token-0123456789"
	tokenOps     = "operators-token-0123456789"
)

// tenantAPI sends requests with one bearer token.
type tenantAPI struct {
	base, token string
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var out map[string]any
	require.NoError(t, json.Unmarshal(a.body, &out), string(a.body))
	return out
}

func (a tenantAPI) do(t *testing.T, method, path string, body any) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(data)
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	req, err := http.NewRequest(method, a.base+path+sep+"api-version=2016-03-01", rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: data}
}

// TestCrossTenantAccess: tenant B's token reaches nothing of tenant A's
// subscription, whatever the method or route, and learns nothing from
// the answers; requests without a valid token get 401; the operator's
// token reaches both.
func TestCrossTenantAccess(t *testing.T) {
	tokens, err := api.ParseTokenList(tokenTenantA + "=sub-a;" + tokenTenantB + "=sub-b;" + tokenOps + "=*")
	require.NoError(t, err)
	st, err := recurtest.StartWith(recurtest.Config{Auth: tokens})
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	a := tenantAPI{st.API.URL, tokenTenantA}
	b := tenantAPI{st.API.URL, tokenTenantB}
	ops := tenantAPI{st.API.URL, tokenOps}
	target, got := newTarget(t)

	// A's collection and job; the marker is in A's data only.
	const marker = "tenant-a-private-marker"
	const rgA = "/subscriptions/sub-a/resourceGroups/rg"
	collA := rgA + "/providers/Microsoft.Scheduler/jobCollections/shared-name"
	jobA := collA + "/jobs/nightly"
	res := a.do(t, http.MethodPut, collA, map[string]any{"location": "westeurope", "properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, res.status, string(res.body))
	jobBody := func(body string) map[string]any {
		return map[string]any{"properties": map[string]any{
			"startTime": time.Now().UTC().Add(time.Hour).Format(time.RFC3339),
			"action": map[string]any{"type": "http", "request": map[string]any{
				"uri": target.URL + "/" + marker, "method": "post", "body": body}},
			"recurrence": map[string]any{"frequency": "Hour", "interval": 1},
		}}
	}
	res = a.do(t, http.MethodPut, jobA, jobBody(marker))
	require.Equal(t, http.StatusCreated, res.status, string(res.body))
	res = a.do(t, http.MethodPost, jobA+"/run", nil)
	require.Equal(t, http.StatusOK, res.status, string(res.body))
	select {
	case r := <-got:
		require.Equal(t, marker, r.body)
	case <-time.After(30 * time.Second):
		t.Fatal("A's run reached no target")
	}
	require.Eventually(t, func() bool {
		return strings.Contains(string(a.do(t, http.MethodGet, jobA+"/history", nil).body), `"status":"Completed"`)
	}, 30*time.Second, 200*time.Millisecond, "A's run is in A's history")

	// B, on every route of A's subscription: 404, the same answer whether
	// or not the resource exists, with nothing of A's in it.
	preview := "/recur/v1/subscriptions/sub-a/resourceGroups/rg/jobCollections/shared-name/jobs/nightly/preview"
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, collA, nil},
		{http.MethodPut, collA, map[string]any{"properties": map[string]any{}}},
		{http.MethodPatch, collA, map[string]any{"properties": map[string]any{"state": "Disabled"}}},
		{http.MethodPost, collA + "/disable", nil},
		{http.MethodPost, collA + "/enable", nil},
		{http.MethodGet, collA + "/jobs", nil},
		{http.MethodGet, jobA, nil},
		{http.MethodPut, jobA, jobBody("from-b")},
		{http.MethodPatch, jobA, map[string]any{"properties": map[string]any{"state": "Disabled"}}},
		{http.MethodPost, jobA + "/run", nil},
		{http.MethodGet, jobA + "/history", nil},
		{http.MethodGet, preview, nil},
		{http.MethodPut, rgA + "/providers/Microsoft.Scheduler/jobCollections/planted-by-b", map[string]any{"properties": map[string]any{}}},
		{http.MethodGet, rgA + "/providers/Microsoft.Scheduler/jobCollections", nil},
		{http.MethodGet, "/subscriptions/sub-a/providers/Microsoft.Scheduler/jobCollections", nil},
		{http.MethodGet, strings.ToUpper(jobA[:14]) + jobA[14:], nil}, // ARM's segments in another case
		{http.MethodGet, collA + "/jobs/no-such-job", nil},
		{http.MethodDelete, jobA, nil},
		{http.MethodDelete, collA, nil},
	} {
		res := b.do(t, r.method, r.path, r.body)
		require.Equal(t, http.StatusNotFound, res.status, "%s %s: %s", r.method, r.path, res.body)
		require.Equal(t, "SubscriptionNotFound", res.json(t)["error"].(map[string]any)["code"], "%s %s", r.method, r.path)
		requireNothingOfA(t, res, marker, target.URL)
	}

	// Without a valid token: 401, and nothing of A's either.
	for _, token := range []string{"", "not-a-token-0123456789", tokenTenantA + "x", strings.ToUpper(tokenTenantA)} {
		for _, path := range []string{jobA, jobA + "/history", "/subscriptions/sub-a/providers/Microsoft.Scheduler/jobCollections"} {
			res := tenantAPI{st.API.URL, token}.do(t, http.MethodGet, path, nil)
			require.Equal(t, http.StatusUnauthorized, res.status, "token %q, %s: %s", token, path, res.body)
			require.Equal(t, "AuthenticationFailed", res.json(t)["error"].(map[string]any)["code"])
			require.True(t, strings.HasPrefix(res.header.Get("WWW-Authenticate"), "Bearer"))
			requireNothingOfA(t, res, marker, target.URL)
		}
	}

	// A's job is as A left it: B's PUT, PATCH, DELETE and run changed
	// nothing and ran nothing.
	res = a.do(t, http.MethodGet, jobA, nil)
	require.Equal(t, http.StatusOK, res.status, string(res.body))
	job := res.json(t)
	require.Equal(t, "enabled", path(job, "properties", "state"))
	require.Equal(t, marker, path(job, "properties", "action", "request", "body"))
	require.EqualValues(t, 1, path(job, "properties", "status", "executionCount"))
	select {
	case r := <-got:
		t.Fatalf("the target got a request after A's run: %+v", r)
	case <-time.After(500 * time.Millisecond):
	}
	require.Equal(t, []string{"shared-name"}, collectionNames(t, a.do(t, http.MethodGet, "/subscriptions/sub-a/providers/Microsoft.Scheduler/jobCollections", nil)),
		"B planted nothing in A's subscription")

	// B's own subscription: empty, then B's own collection of the same
	// name, which is not A's.
	listB := "/subscriptions/sub-b/providers/Microsoft.Scheduler/jobCollections"
	require.Empty(t, collectionNames(t, b.do(t, http.MethodGet, listB, nil)))
	collB := "/subscriptions/sub-b/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/shared-name"
	res = b.do(t, http.MethodPut, collB, map[string]any{"location": "northeurope", "properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, res.status, "same names, another tenant: a new collection: %s", res.body)
	res = b.do(t, http.MethodGet, collB+"/jobs", nil)
	require.Equal(t, http.StatusOK, res.status)
	require.NotContains(t, string(res.body), "nightly")
	// Lists read the visibility store, which has a new collection a
	// moment after its PUT answers.
	require.Eventually(t, func() bool {
		return slices.Equal([]string{"shared-name"}, collectionNames(t, b.do(t, http.MethodGet, listB, nil)))
	}, 10*time.Second, 50*time.Millisecond, "B lists its own collection")
	res = a.do(t, http.MethodGet, collB, nil)
	require.Equal(t, http.StatusNotFound, res.status, "and A cannot reach B's")

	// The operator reaches both.
	res = ops.do(t, http.MethodGet, jobA, nil)
	require.Equal(t, http.StatusOK, res.status)
	require.Contains(t, string(res.body), marker)
	require.Equal(t, []string{"shared-name"}, collectionNames(t, ops.do(t, http.MethodGet, "/subscriptions/sub-a/providers/Microsoft.Scheduler/jobCollections", nil)))
	require.Equal(t, "northeurope", ops.do(t, http.MethodGet, collB, nil).json(t)["location"])

	// Probes stay open.
	resp, err := http.Get(st.API.URL + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// requireNothingOfA fails when a refused answer shows anything of tenant
// A's data.
func requireNothingOfA(t *testing.T, res answer, marker, targetURL string) {
	t.Helper()
	for _, secret := range []string{marker, targetURL, "nightly", "westeurope", "executionCount", "properties"} {
		require.NotContains(t, string(res.body), secret)
		for name, values := range res.header {
			require.NotContains(t, strings.Join(values, ","), secret, "header %s", name)
		}
	}
}

func collectionNames(t *testing.T, res answer) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, res.status, string(res.body))
	var list struct {
		Value []struct {
			Name string `json:"name"`
		} `json:"value"`
	}
	require.NoError(t, json.Unmarshal(res.body, &list))
	names := []string{}
	for _, c := range list.Value {
		names = append(names, c.Name)
	}
	return names
}
