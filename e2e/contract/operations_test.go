package contract

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// Each test names the operations it covers; the recorder checks every
// answer against the contract and TestMain checks that every operation
// not pending was covered.

// TestJobCollectionsCreateOrUpdateAndGet covers JobCollections_CreateOrUpdate
// (201, then 200) and JobCollections_Get.
func TestJobCollectionsCreateOrUpdateAndGet(t *testing.T) {
	s := newStack(t)
	name := unique("colls")
	p := armPrefix + "/jobCollections/" + name
	status, coll := s.do(t, http.MethodPut, p, map[string]any{
		"location": "westus", "tags": map[string]string{"team": "ops"},
		"properties": map[string]any{"sku": map[string]any{"name": "standard"},
			"quota": map[string]any{"maxJobCount": 10, "maxRecurrence": map[string]any{"frequency": "Minute", "interval": 1}}},
	})
	require.Equal(t, http.StatusCreated, status, coll)
	assert.Equal(t, p, coll["id"])
	assert.Equal(t, name, coll["name"])
	assert.Equal(t, "Standard", field(coll, "properties", "sku", "name"))

	status, coll = s.do(t, http.MethodPut, p, map[string]any{"location": "westus", "properties": map[string]any{"state": "disabled"}})
	require.Equal(t, http.StatusOK, status, coll)
	assert.Equal(t, "disabled", field(coll, "properties", "state"))

	status, coll = s.do(t, http.MethodGet, p, nil)
	require.Equal(t, http.StatusOK, status, coll)
	assert.Equal(t, p, coll["id"])
	assert.Equal(t, "westus", coll["location"])

	status, body := s.do(t, http.MethodGet, armPrefix+"/jobCollections/missing", nil)
	require.Equal(t, http.StatusNotFound, status, body)
	status, body = s.do(t, http.MethodPut, p, map[string]any{"properties": map[string]any{"sku": map[string]any{"name": "gold"}}})
	require.Equal(t, http.StatusBadRequest, status, body)
	assert.Equal(t, "properties.sku.name", field(body, "error", "target"))
}

// TestJobLifecycle covers Jobs_CreateOrUpdate (201, then 200), Jobs_Get,
// Jobs_Patch, Jobs_Run, Jobs_ListJobHistory and Jobs_Delete.
func TestJobLifecycle(t *testing.T) {
	s := newStack(t)
	tg := newTarget(t)
	jobPath := s.newCollection(t, "lifecycle") + "/jobs/hourly"
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second).Format(time.RFC3339)
	def := map[string]any{"properties": map[string]any{
		"startTime": start,
		"action": map[string]any{
			"type":        "http",
			"request":     map[string]any{"uri": tg.URL + "/run", "method": "post", "body": "b", "headers": map[string]string{"X-A": "1"}},
			"retryPolicy": map[string]any{"retryType": "fixed", "retryInterval": "PT30S", "retryCount": 2},
			"errorAction": map[string]any{"type": "Http", "request": map[string]any{"uri": tg.URL + "/error", "method": "POST"},
				"retryPolicy": map[string]any{"retryType": "none"}},
		},
		"recurrence": map[string]any{"frequency": "Hour", "interval": 2, "count": 5},
	}}
	status, job := s.do(t, http.MethodPut, jobPath, def)
	require.Equal(t, http.StatusCreated, status, job)
	assert.Equal(t, "hour", field(job, "properties", "recurrence", "frequency"))
	assert.Equal(t, start, field(job, "properties", "status", "nextExecutionTime"))

	status, job = s.do(t, http.MethodPut, jobPath, def)
	require.Equal(t, http.StatusOK, status, job)

	status, job = s.do(t, http.MethodGet, jobPath, nil)
	require.Equal(t, http.StatusOK, status, job)
	assert.Equal(t, "enabled", field(job, "properties", "state"))

	status, job = s.do(t, http.MethodPatch, jobPath, map[string]any{"properties": map[string]any{"state": "disabled"}})
	require.Equal(t, http.StatusOK, status, job)
	assert.Equal(t, "disabled", field(job, "properties", "state"))

	status, body := s.do(t, http.MethodPost, jobPath+"/run", nil)
	require.Equal(t, http.StatusOK, status, body)
	select {
	case p := <-tg.got:
		assert.Equal(t, "/run", p)
	case <-time.After(30 * time.Second):
		t.Fatal("run now ran nothing")
	}
	var history map[string]any
	require.Eventually(t, func() bool {
		status, history = s.do(t, http.MethodGet, jobPath+"/history", nil)
		rows, _ := history["value"].([]any)
		return status == http.StatusOK && len(rows) > 0
	}, 30*time.Second, 250*time.Millisecond, "history: %v", history)
	assert.Equal(t, "Completed", field(history["value"].([]any)[0].(map[string]any), "properties", "status"))
	status, history = s.do(t, http.MethodGet, jobPath+"/history?$filter=status%20eq%20'Failed'&$top=1", nil)
	require.Equal(t, http.StatusOK, status, history)
	assert.Empty(t, history["value"])

	status, body = s.do(t, http.MethodDelete, jobPath, nil)
	require.Equal(t, http.StatusOK, status, body)
	status, body = s.do(t, http.MethodGet, jobPath, nil)
	require.Equal(t, http.StatusNotFound, status, body)
	assert.Equal(t, jobs.CodeNotFound, field(body, "error", "code"))
	status, body = s.do(t, http.MethodDelete, jobPath, nil)
	require.Equal(t, http.StatusNotFound, status, body)
}

// TestListOperations covers JobCollections_ListBySubscription,
// JobCollections_ListByResourceGroup and Jobs_List, in a subscription of
// their own so that the lists are exactly what the test created. Lists
// read Temporal's visibility store, which lags behind, so they are polled.
func TestListOperations(t *testing.T) {
	s := newStack(t)
	tg := newTarget(t)
	sub := "/subscriptions/" + unique("sub-lists")
	colls := []string{"/resourceGroups/rga/providers/Microsoft.Scheduler/jobCollections/a1",
		"/resourceGroups/rga/providers/Microsoft.Scheduler/jobCollections/a2",
		"/resourceGroups/rgb/providers/Microsoft.Scheduler/jobCollections/b1"}
	for _, c := range colls {
		status, body := s.do(t, http.MethodPut, sub+c, map[string]any{"location": "westus", "properties": map[string]any{}})
		require.Equal(t, http.StatusCreated, status, body)
	}
	for name, state := range map[string]string{"j1": "Enabled", "j2": "Disabled"} {
		status, body := s.do(t, http.MethodPut, sub+colls[0]+"/jobs/"+name, map[string]any{"properties": map[string]any{
			"startTime": time.Now().UTC().Add(time.Hour).Format(time.RFC3339),
			"state":     state,
			"action":    map[string]any{"type": "Http", "request": map[string]any{"uri": tg.URL, "method": "GET"}},
		}})
		require.Equal(t, http.StatusCreated, status, body)
	}
	ids := func(body map[string]any) []string {
		var out []string
		value, _ := body["value"].([]any)
		for _, v := range value {
			id, _ := field(v.(map[string]any), "id").(string)
			out = append(out, strings.TrimPrefix(id, sub))
		}
		return out
	}
	eventuallyLists := func(path string, want ...string) map[string]any {
		t.Helper()
		var body map[string]any
		require.Eventually(t, func() bool {
			var status int
			status, body = s.do(t, http.MethodGet, path, nil)
			return status == http.StatusOK && assert.ObjectsAreEqual(want, ids(body))
		}, 20*time.Second, 200*time.Millisecond, "GET %s: %v", path, body)
		return body
	}
	eventuallyLists(sub+"/providers/Microsoft.Scheduler/jobCollections", colls...)
	eventuallyLists(sub+"/resourceGroups/rga/providers/Microsoft.Scheduler/jobCollections", colls[:2]...)
	eventuallyLists(sub+colls[0]+"/jobs", colls[0]+"/jobs/j1", colls[0]+"/jobs/j2")
	eventuallyLists(sub+colls[0]+"/jobs?$filter=state%20eq%20'Disabled'", colls[0]+"/jobs/j2")
	page := eventuallyLists(sub+colls[0]+"/jobs?$top=1", colls[0]+"/jobs/j1")
	next, ok := page["nextLink"].(string)
	require.True(t, ok, "a first page of one has a nextLink: %v", page)
	status, body, _ := s.send(t, http.MethodGet, next, nil)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{colls[0] + "/jobs/j2"}, ids(body))
}

// TestErrorAnswersHaveTheARMEnvelope sends requests the API refuses; the
// recorder checks each answer's envelope.
func TestErrorAnswersHaveTheARMEnvelope(t *testing.T) {
	s := newStack(t)
	coll := s.newCollection(t, "errors")
	queueAction := map[string]any{"properties": map[string]any{"action": map[string]any{
		"type": "storageQueue", "queueMessage": map[string]any{"storageAccount": "a", "queueName": "q", "sasToken": "t", "message": "m"},
	}}}
	tests := []struct {
		name, method, url string
		body              any
		status            int
		code              string
	}{
		{"no api-version", http.MethodGet, s.API.URL + coll, nil, http.StatusBadRequest, "MissingApiVersionParameter"},
		{"other api-version", http.MethodGet, s.API.URL + coll + "?api-version=2014-08-01-preview", nil, http.StatusBadRequest, "InvalidApiVersionParameter"},
		{"no route", http.MethodGet, s.API.URL + "/nothing", nil, http.StatusNotFound, "NotFound"},
		{"bad JSON", http.MethodPut, s.API.URL + coll + "/jobs/j?api-version=2016-03-01", "{", http.StatusBadRequest, "InvalidRequestContent"},
		{"invalid storage queue action", http.MethodPut, s.API.URL + coll + "/jobs/j?api-version=2016-03-01", queueAction, http.StatusBadRequest, jobs.CodeInvalidRequest},
		{"no job", http.MethodPost, s.API.URL + coll + "/jobs/none/run?api-version=2016-03-01", nil, http.StatusNotFound, jobs.CodeNotFound},
		{"bad $top", http.MethodGet, s.API.URL + coll + "/jobs/none/history?api-version=2016-03-01&$top=0", nil, http.StatusBadRequest, "InvalidQueryParameterValue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := s.send(t, tt.method, tt.url, tt.body)
			assert.Equal(t, tt.status, status, body)
			assert.Equal(t, tt.code, field(body, "error", "code"), body)
		})
	}
}

// TestCollectionPatchEnableDisableDelete: PATCH merges, disable and
// enable (by POST or by PATCH) reach the collection's jobs, DELETE removes
// the collection and its jobs.
func TestCollectionPatchEnableDisableDelete(t *testing.T) {
	s := newStack(t)
	tg := newTarget(t)
	coll := s.newCollection(t, "ops")
	status, body := s.do(t, http.MethodPut, coll+"/jobs/j", map[string]any{"properties": map[string]any{
		"startTime":  time.Now().UTC().Add(time.Hour).Format(time.RFC3339),
		"action":     map[string]any{"type": "Http", "request": map[string]any{"uri": tg.URL, "method": "GET"}},
		"recurrence": map[string]any{"frequency": "Hour"},
	}})
	require.Equal(t, http.StatusCreated, status, body)

	status, body = s.do(t, http.MethodPatch, coll, map[string]any{"tags": map[string]string{"team": "reports"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "reports", field(body, "tags", "team"))
	require.Equal(t, "Standard", field(body, "properties", "sku", "name"), "PATCH keeps what it does not name")

	jobState := func() any {
		status, body := s.do(t, http.MethodGet, coll+"/jobs/j", nil)
		require.Equal(t, http.StatusOK, status, body)
		return field(body, "properties", "state")
	}
	status, body = s.do(t, http.MethodPost, coll+"/disable", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Eventually(t, func() bool { return jobState() == "disabled" }, 10*time.Second, 100*time.Millisecond)
	_, body = s.do(t, http.MethodGet, coll, nil)
	require.Equal(t, "disabled", field(body, "properties", "state"))

	status, body = s.do(t, http.MethodPost, coll+"/enable", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Eventually(t, func() bool { return jobState() == "enabled" }, 10*time.Second, 100*time.Millisecond)

	// A state set by PATCH (or PUT) reaches the jobs too.
	status, body = s.do(t, http.MethodPatch, coll, map[string]any{"properties": map[string]any{"state": "Disabled"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Eventually(t, func() bool { return jobState() == "disabled" }, 10*time.Second, 100*time.Millisecond)
	status, body = s.do(t, http.MethodPatch, coll, map[string]any{"properties": map[string]any{"state": "Enabled"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Eventually(t, func() bool { return jobState() == "enabled" }, 10*time.Second, 100*time.Millisecond)

	status, body = s.do(t, http.MethodDelete, coll, nil)
	require.Equal(t, http.StatusOK, status, body)
	status, _ = s.do(t, http.MethodGet, coll, nil)
	require.Equal(t, http.StatusNotFound, status)
	require.Eventually(t, func() bool {
		status, _ := s.do(t, http.MethodGet, coll+"/jobs/j", nil)
		return status == http.StatusNotFound
	}, 10*time.Second, 100*time.Millisecond, "deleting a collection deletes its jobs")
	status, _ = s.do(t, http.MethodPost, coll+"/enable", nil)
	require.Equal(t, http.StatusNotFound, status)
}
