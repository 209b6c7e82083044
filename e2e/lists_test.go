package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	subscriptionPath = "/subscriptions/sub1/providers/Microsoft.Scheduler/jobCollections"
	rg1Path          = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections"
	rg2Path          = "/subscriptions/sub1/resourceGroups/rg2/providers/Microsoft.Scheduler/jobCollections"
)

// listIDs returns the ID of each value of a list answer.
func listIDs(t testing.TB, body map[string]any) []string {
	t.Helper()
	value, ok := body["value"].([]any)
	require.True(t, ok, "value is an array: %v", body)
	ids := []string{}
	for _, v := range value {
		ids = append(ids, v.(map[string]any)["id"].(string))
	}
	return ids
}

// jobNames returns the job names of a job list answer.
func jobNames(t testing.TB, body map[string]any) []string {
	t.Helper()
	out := []string{}
	for _, id := range listIDs(t, body) {
		out = append(out, id[strings.LastIndex(id, "/")+1:])
	}
	return out
}

// listEventually lists until the answer's values are want; visibility
// lags behind the workflows.
func (s *stack) listEventually(t testing.TB, path string, query url.Values, names func(testing.TB, map[string]any) []string, want []string) map[string]any {
	t.Helper()
	var (
		status int
		body   map[string]any
		got    []string
	)
	require.Eventually(t, func() bool {
		status, body = s.get(t, path, query)
		if status != http.StatusOK {
			return false
		}
		got = names(t, body)
		return assert.ObjectsAreEqual(want, got)
	}, 20*time.Second, 200*time.Millisecond, "%s %v: want %v, last answer %d %v", path, query, want, status, body)
	return body
}

func TestListCollections(t *testing.T) {
	s := newStack(t)
	for _, p := range []string{rg1Path + "/zeta", rg2Path + "/alpha", rg1Path + "/coll1", rg2Path + "/coll1", rg2Path + "/mid"} {
		status, body := s.do(t, http.MethodPut, p, map[string]any{"location": "westus", "properties": map[string]any{}})
		require.Equal(t, http.StatusCreated, status, "%s: %v", p, body)
	}

	body := s.listEventually(t, subscriptionPath, nil, listIDs, []string{
		rg2Path + "/alpha", rg1Path + "/coll1", rg2Path + "/coll1", rg2Path + "/mid", rg1Path + "/zeta",
	})
	require.Nil(t, body["nextLink"])
	first := body["value"].([]any)[0].(map[string]any)
	require.Equal(t, "alpha", first["name"])
	require.Equal(t, "Microsoft.Scheduler/jobCollections", first["type"])
	require.Equal(t, "enabled", path(first, "properties", "state"))

	s.listEventually(t, rg1Path, nil, listIDs, []string{rg1Path + "/coll1", rg1Path + "/zeta"})
	s.listEventually(t, rg2Path, nil, listIDs, []string{rg2Path + "/alpha", rg2Path + "/coll1", rg2Path + "/mid"})

	// Paged with $top, following nextLink.
	status, body := s.get(t, subscriptionPath, url.Values{"$top": {"3"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, []string{rg2Path + "/alpha", rg1Path + "/coll1", rg2Path + "/coll1"}, listIDs(t, body))
	next, ok := body["nextLink"].(string)
	require.True(t, ok, "a nextLink: %v", body)
	status, body = getURL(t, next)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, []string{rg2Path + "/mid", rg1Path + "/zeta"}, listIDs(t, body))
	require.Nil(t, body["nextLink"])

	status, body = s.get(t, "/subscriptions/sub2/providers/Microsoft.Scheduler/jobCollections", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Empty(t, listIDs(t, body), "another subscription has none")

	resp, err := http.Get(s.api.URL + subscriptionPath)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "api-version is required")
}

func TestListJobs(t *testing.T) {
	s := newStack(t)
	target, _ := newTarget(t)
	status, _ := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status)
	jobsPath := collectionPath + "/jobs"

	// An hour away: none of them runs during the test.
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	for _, name := range []string{"j4", "j2", "j5", "j1", "j3"} {
		status, body := s.do(t, http.MethodPut, jobsPath+"/"+name, map[string]any{"properties": map[string]any{
			"startTime":  start.Format(time.RFC3339),
			"action":     map[string]any{"type": "Http", "request": map[string]any{"uri": target.URL, "method": "GET"}},
			"recurrence": map[string]any{"frequency": "Hour", "interval": 1},
		}})
		require.Equal(t, http.StatusCreated, status, "%s: %v", name, body)
	}

	all := []string{"j1", "j2", "j3", "j4", "j5"}
	body := s.listEventually(t, jobsPath, nil, jobNames, all)
	require.Nil(t, body["nextLink"])
	first := body["value"].([]any)[0].(map[string]any)
	require.Equal(t, "coll1/j1", first["name"])
	require.Equal(t, "enabled", path(first, "properties", "state"))
	require.Equal(t, start.Format(time.RFC3339), path(first, "properties", "status", "nextExecutionTime"))

	// $top=2 pages through with nextLink, which keeps api-version and $top.
	var paged []string
	status, body = s.get(t, jobsPath, url.Values{"$top": {"2"}})
	for pages := 1; ; pages++ {
		require.Equal(t, http.StatusOK, status, body)
		names := jobNames(t, body)
		require.LessOrEqual(t, len(names), 2)
		paged = append(paged, names...)
		next, ok := body["nextLink"].(string)
		if !ok {
			require.Equal(t, 3, pages)
			break
		}
		u, err := url.Parse(next)
		require.NoError(t, err)
		require.Equal(t, "2016-03-01", u.Query().Get("api-version"), next)
		require.Equal(t, "2", u.Query().Get("$top"), next)
		status, body = getURL(t, next)
	}
	require.Equal(t, all, paged)

	status, body = s.do(t, http.MethodPatch, jobsPath+"/j3", map[string]any{"properties": map[string]any{"state": "Disabled"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "disabled", path(body, "properties", "state"))

	s.listEventually(t, jobsPath, url.Values{"$filter": {"state eq 'Disabled'"}}, jobNames, []string{"j3"})
	for _, filter := range []string{"state eq Disabled", "state eq 'disabled'", "State EQ DISABLED"} {
		status, body = s.get(t, jobsPath, url.Values{"$filter": {filter}})
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, []string{"j3"}, jobNames(t, body), filter)
	}
	s.listEventually(t, jobsPath, url.Values{"$filter": {"state eq 'Enabled'"}}, jobNames, []string{"j1", "j2", "j4", "j5"})
	status, body = s.get(t, jobsPath, url.Values{"$filter": {"state eq 'Completed'"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Empty(t, jobNames(t, body))

	status, body = s.get(t, jobsPath, url.Values{"$filter": {"state eq 'Paused'"}})
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "InvalidFilter", path(body, "error", "code"))

	status, _ = s.do(t, http.MethodDelete, jobsPath+"/j2", nil)
	require.Equal(t, http.StatusOK, status)
	s.listEventually(t, jobsPath, nil, jobNames, []string{"j1", "j3", "j4", "j5"})
	s.listEventually(t, jobsPath, url.Values{"$filter": {"state eq 'Enabled'"}}, jobNames, []string{"j1", "j4", "j5"})

	status, body = s.get(t, "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/nope/jobs", nil)
	require.Equal(t, http.StatusNotFound, status, body)
}

// TestListJobsAcrossPagesByCollection lists every job of a subscription
// with no filter: sorted by resource group, collection and name, pages
// resuming within a collection and across collections, an empty
// collection, a deleted job and another subscription's jobs left out.
func TestListJobsAcrossPagesByCollection(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	target, _ := newTarget(t)
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	job := map[string]any{"properties": map[string]any{
		"startTime":  start.Format(time.RFC3339),
		"action":     map[string]any{"type": "Http", "request": map[string]any{"uri": target.URL, "method": "GET"}},
		"recurrence": map[string]any{"frequency": "Hour", "interval": 1},
	}}
	collections := map[string][]string{
		"sub1/rg2/a":     {"x"},
		"sub1/rg1/b":     {"j2", "j1", "gone"},
		"sub1/rg1/empty": nil,
		"sub1/rg1/a":     {"j3", "j1", "j2"},
		"sub2/rg1/a":     {"other"},
	}
	for coll, names := range collections {
		sub, rest, _ := strings.Cut(coll, "/")
		rg, name, _ := strings.Cut(rest, "/")
		p := "/subscriptions/" + sub + "/resourceGroups/" + rg + "/providers/Microsoft.Scheduler/jobCollections/" + name
		status, body := s.do(t, http.MethodPut, p, map[string]any{"properties": map[string]any{}})
		require.Equal(t, http.StatusCreated, status, body)
		for _, n := range names {
			status, body := s.do(t, http.MethodPut, p+"/jobs/"+n, job)
			require.Equal(t, http.StatusCreated, status, "%s/%s: %v", coll, n, body)
		}
	}
	status, body := s.do(t, http.MethodDelete, "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/b/jobs/gone", nil)
	require.Equal(t, http.StatusOK, status, body)

	// The resource group and collection of each job, and its name.
	where := func(t testing.TB, body map[string]any) []string {
		var out []string
		for _, id := range listIDs(t, body) {
			parts := strings.Split(id, "/")
			out = append(out, parts[4]+"/"+parts[8]+"/"+parts[10])
		}
		return out
	}
	all := []string{"rg1/a/j1", "rg1/a/j2", "rg1/a/j3", "rg1/b/j1", "rg1/b/j2", "rg2/a/x"}
	const across = "/recur/v1/subscriptions/sub1/jobs"
	body = s.listEventually(t, across, nil, where, all)
	require.Nil(t, body["nextLink"])

	for _, top := range []string{"1", "2", "4"} {
		var paged []string
		status, body = s.get(t, across, url.Values{"$top": {top}})
		for {
			require.Equal(t, http.StatusOK, status, body)
			paged = append(paged, where(t, body)...)
			next, ok := body["nextLink"].(string)
			if !ok {
				break
			}
			require.Less(t, len(paged), 20, "a nextLink that does not end")
			status, body = getURL(t, next)
		}
		assert.Equal(t, all, paged, "$top=%s", top)
	}
	status, body = s.get(t, across, url.Values{"$skip": {"2"}, "$top": {"3"}})
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, all[2:5], where(t, body))
	assert.NotNil(t, body["nextLink"])
	status, body = s.get(t, "/recur/v1/subscriptions/sub1/resourceGroups/rg2/jobs", nil)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"rg2/a/x"}, where(t, body))
}
