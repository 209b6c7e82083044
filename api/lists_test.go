package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/recurhq/recur/jobs"
)

func TestParseJobStateFilter(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
		ok        bool
	}{
		{"", "", true},
		{"state eq 'Enabled'", "Enabled", true},
		{"state eq Enabled", "Enabled", true},
		{"state eq disabled", "Disabled", true},
		{"STATE Eq 'COMPLETED'", "Completed", true},
		{"state eq faulted", "Faulted", true},
		{"state eq 'Enabled", "", false},
		{"state eq Enabled'", "", false},
		{"state eq ''", "", false},
		{"state eq Running", "", false},
		{"status eq 'Enabled'", "", false},
		{"state ne 'Enabled'", "", false},
		{"state eq 'Enabled' or state eq 'Disabled'", "", false},
	} {
		got, err := parseEqFilter(tc.raw, "state", jobStates, true)
		if !tc.ok {
			var apiErr *apiError
			require.ErrorAs(t, err, &apiErr, tc.raw)
			assert.Equal(t, codeInvalidFilter, apiErr.code, tc.raw)
			continue
		}
		require.NoError(t, err, tc.raw)
		assert.Equal(t, tc.want, got, tc.raw)
	}
}

// listFake is a Temporal client with collection and job workflows: it
// lists the executions whose kind or workflow IDs the query names.
type listFake struct {
	client.Client
	executions []*workflowpb.WorkflowExecutionInfo // in the store's order
	views      map[string]any                      // workflow ID -> CollectionView or JobView
	undefined  map[string]bool                     // started, never defined
	failing    string                              // a workflow whose query fails
	// Workflows whose start the store has not taken yet (absent from its
	// lists), or whose memo it has not (listed without one); describe
	// reads them whole.
	unlisted, memoless map[string]bool
	mu                 sync.Mutex
	queries            []string
}

func newListFake() *listFake {
	return &listFake{views: map[string]any{}, undefined: map[string]bool{}, unlisted: map[string]bool{}, memoless: map[string]bool{}}
}

func (f *listFake) addCollection(t *testing.T, rg, name string) {
	k := jobs.Key{Subscription: "sub1", ResourceGroup: rg, Collection: name}
	coll := jobs.Collection{Properties: jobs.CollectionProperties{}}
	require.NoError(t, coll.Accept(k))
	f.views[k.CollectionWorkflowID()] = jobs.CollectionView{Collection: coll}
	f.executions = append(f.executions, execution(t, k, jobs.KindCollection))
}

// addJob adds a job of coll1, to its collection's sorted names too: a
// deleted one stays there, as when the list comes between the job's
// delete and its collection's.
func (f *listFake) addJob(t *testing.T, name string, deleted bool) {
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: name}
	f.views[k.JobWorkflowID()] = jobs.JobView{Job: jobs.Job{ID: k.JobID(), Name: "coll1/" + name}, Deleted: deleted}
	f.executions = append(f.executions, execution(t, k, jobs.KindJob))
	view := f.views[k.CollectionWorkflowID()].(jobs.CollectionView)
	i, _ := slices.BinarySearch(view.Jobs, name)
	view.Jobs = slices.Insert(slices.Clone(view.Jobs), i, name)
	f.views[k.CollectionWorkflowID()] = view
}

func execution(t *testing.T, k jobs.Key, kind string) *workflowpb.WorkflowExecutionInfo {
	t.Helper()
	id := k.JobWorkflowID()
	if kind == jobs.KindCollection {
		id = k.CollectionWorkflowID()
	}
	fields := map[string]*commonpb.Payload{}
	for name, v := range map[string]string{
		jobs.AttrKind.GetName(): kind, jobs.AttrSubscription.GetName(): k.Subscription,
		jobs.AttrResourceGroup.GetName(): k.ResourceGroup, jobs.AttrCollection.GetName(): k.Collection,
	} {
		p, err := converter.GetDefaultDataConverter().ToPayload(v)
		require.NoError(t, err)
		fields[name] = p
	}
	if k.Job != "" {
		p, err := converter.GetDefaultDataConverter().ToPayload(k.Job)
		require.NoError(t, err)
		fields[jobs.AttrJob.GetName()] = p
	}
	return &workflowpb.WorkflowExecutionInfo{
		Execution:        &commonpb.WorkflowExecution{WorkflowId: id},
		SearchAttributes: &commonpb.SearchAttributes{IndexedFields: fields},
	}
}

// stored returns the execution as the store holds it: running, with its
// view in its memo unless it was never defined; the failing one's memo
// is not JSON.
func (f *listFake) stored(e *workflowpb.WorkflowExecutionInfo) *workflowpb.WorkflowExecutionInfo {
	id := e.GetExecution().GetWorkflowId()
	out := proto.Clone(e).(*workflowpb.WorkflowExecutionInfo)
	out.Status = enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	v, ok := f.views[id]
	if !ok || f.undefined[id] {
		return out
	}
	fields := map[string]any{jobs.MemoJob: v}
	if job, ok := v.(jobs.JobView); ok && job.Job.Properties.Status != nil {
		fields[jobs.MemoStatus] = jobs.StatusView{Status: *job.Job.Properties.Status}
	}
	if coll, ok := v.(jobs.CollectionView); ok {
		fields = map[string]any{jobs.MemoCollection: jobs.CollectionView{Collection: coll.Collection}}
		for _, name := range coll.Jobs {
			key := jobs.JobNamesKey(name)
			shard, _ := fields[key].([]string)
			fields[key] = append(shard, name)
		}
	}
	out.Memo = &commonpb.Memo{Fields: map[string]*commonpb.Payload{}}
	for key, v := range fields {
		p, err := converter.GetDefaultDataConverter().ToPayload(v)
		if err != nil {
			panic(err)
		}
		if id == f.failing {
			p.Data = []byte("{not json")
		}
		out.Memo.Fields[key] = p
	}
	return out
}

// quoted matches the quoted strings of a visibility query.
var quoted = regexp.MustCompile(`'([^']*)'`)

func (f *listFake) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	for _, e := range f.executions {
		if e.GetExecution().GetWorkflowId() == id {
			return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: f.stored(e)}, nil
		}
	}
	return nil, serviceerror.NewNotFound("workflow not found for ID: " + id)
}

func (f *listFake) ListWorkflow(_ context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	f.mu.Lock()
	f.queries = append(f.queries, req.Query)
	f.mu.Unlock()
	var matching []*workflowpb.WorkflowExecutionInfo
	if strings.HasPrefix(req.Query, "WorkflowId BETWEEN ") {
		bounds := quoted.FindAllStringSubmatch(req.Query, 2)
		for _, e := range f.executions {
			id := e.GetExecution().GetWorkflowId()
			if bounds[0][1] <= id && id <= bounds[1][1] && !f.unlisted[id] {
				listed := f.stored(e)
				if f.memoless[id] {
					listed.Memo = nil
				}
				matching = append(matching, listed)
			}
		}
	}
	for _, e := range f.executions {
		var kind, rg string
		fields := e.GetSearchAttributes().GetIndexedFields()
		_ = converter.GetDefaultDataConverter().FromPayload(fields[jobs.AttrKind.GetName()], &kind)
		_ = converter.GetDefaultDataConverter().FromPayload(fields[jobs.AttrResourceGroup.GetName()], &rg)
		if strings.Contains(req.Query, "RecurKind = "+jobs.Quote(kind)) &&
			(!strings.Contains(req.Query, "RecurResourceGroup") || strings.Contains(req.Query, "RecurResourceGroup = "+jobs.Quote(rg))) {
			matching = append(matching, f.stored(e))
		}
	}
	// Two executions a page, to exercise paging.
	start := 0
	if len(req.NextPageToken) > 0 {
		start = int(req.NextPageToken[0])
	}
	end := min(start+2, len(matching))
	resp := &workflowservice.ListWorkflowExecutionsResponse{Executions: matching[start:end]}
	if end < len(matching) {
		resp.NextPageToken = []byte{byte(end)}
	}
	return resp, nil
}

// queriesSince returns the queries listed since the first n.
func (f *listFake) queriesSince(n int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.queries[n:])
}

func (f *listFake) lastQuery() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queries) == 0 {
		return ""
	}
	return f.queries[len(f.queries)-1]
}

func getList(t *testing.T, f client.Client, target string) (int, map[string]any) {
	t.Helper()
	h := New(f, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, newRequest(http.MethodGet, target, nil))
	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	return rec.Code, body
}

// names returns the name of each value of a list answer.
func names(t *testing.T, body map[string]any) []string {
	t.Helper()
	value, ok := body["value"].([]any)
	require.True(t, ok, "value is an array: %v", body)
	out := []string{}
	for _, v := range value {
		out = append(out, v.(map[string]any)["name"].(string))
	}
	return out
}

const (
	subPath  = "/subscriptions/sub1/providers/Microsoft.Scheduler/jobCollections"
	rgPath   = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections"
	jobsPath = rgPath + "/coll1/jobs"
	version  = "?api-version=2016-03-01"
)

func TestListCollections(t *testing.T) {
	f := newListFake()
	f.addCollection(t, "rg2", "beta")
	f.addCollection(t, "rg1", "coll1")
	f.addCollection(t, "rg2", "alpha")
	f.addCollection(t, "rg1", "beta")
	f.addCollection(t, "rg1", "never-defined")
	f.undefined["collection:sub1/rg1/never-defined"] = true
	f.executions = append(f.executions, f.executions[0]) // seen twice, as in a continue-as-new

	status, body := getList(t, f, subPath+version)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"alpha", "beta", "beta", "coll1"}, names(t, body))
	value := body["value"].([]any)
	assert.Equal(t, "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/beta",
		value[1].(map[string]any)["id"], "same names sort by resource group")
	assert.NotContains(t, body, "nextLink")
	assert.Equal(t, "RecurKind = 'collection' AND RecurSubscription = 'sub1' AND ExecutionStatus = 'Running'", f.lastQuery())

	status, body = getList(t, f, rgPath+version)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"beta", "coll1"}, names(t, body))
	assert.Contains(t, f.lastQuery(), "RecurResourceGroup = 'rg1'")

	status, body = getList(t, f, subPath+version+"&$top=2")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"alpha", "beta"}, names(t, body))
	next, ok := body["nextLink"].(string)
	require.True(t, ok, body)
	assert.Equal(t, "http://localhost"+subPath+"?$skip=2&$top=2&api-version=2016-03-01", next)
	// The never-defined collection is left out before paging.
	_, body = getList(t, f, strings.TrimPrefix(next, "http://localhost"))
	assert.Equal(t, []string{"beta", "coll1"}, names(t, body))
	assert.NotContains(t, body, "nextLink")
	_, body = getList(t, f, subPath+version+"&$top=2&$skip=4")
	assert.Equal(t, []string{}, names(t, body))
	assert.NotContains(t, body, "nextLink")

	for _, tc := range []struct {
		target, code string
		status       int
	}{
		{subPath, "MissingApiVersionParameter", http.StatusBadRequest},
		{subPath + version + "&$top=101", codeInvalidQuery, http.StatusBadRequest},
		{subPath + version + "&$skip=-1", codeInvalidQuery, http.StatusBadRequest},
		{"/subscriptions/bad%20name/providers/Microsoft.Scheduler/jobCollections" + version, jobs.CodeInvalidName, http.StatusBadRequest},
		{"/subscriptions/sub1/resourceGroups/-rg/providers/Microsoft.Scheduler/jobCollections" + version, jobs.CodeInvalidName, http.StatusBadRequest},
	} {
		status, body := getList(t, f, tc.target)
		assert.Equal(t, tc.status, status, tc.target)
		assert.Equal(t, tc.code, body["error"].(map[string]any)["code"], tc.target)
	}

	f.failing = "collection:sub1/rg1/beta"
	status, body = getList(t, f, subPath+version)
	assert.Equal(t, http.StatusInternalServerError, status, body)
}

func TestListJobs(t *testing.T) {
	f := newListFake()
	f.addCollection(t, "rg1", "coll1")
	for _, name := range []string{"j3", "j1", "gone", "j5", "j2", "j4", "new"} {
		f.addJob(t, name, name == "gone")
	}
	f.undefined["job:sub1/rg1/coll1/new"] = true
	// A job the collection has not admitted yet: its workflow is in the
	// range of the query, its name not in the collection's memo.
	unadmitted := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "j25"}
	f.views[unadmitted.JobWorkflowID()] = jobs.JobView{Job: jobs.Job{ID: unadmitted.JobID(), Name: "coll1/j25"}}
	f.executions = append(f.executions, execution(t, unadmitted, jobs.KindJob))

	status, body := getList(t, f, jobsPath+version)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"coll1/j1", "coll1/j2", "coll1/j3", "coll1/j4", "coll1/j5"}, names(t, body),
		"sorted; the deleted job, the undefined one and the one not admitted left out")
	assert.NotContains(t, body, "nextLink")
	assert.Equal(t, "WorkflowId BETWEEN 'job:sub1/rg1/coll1/gone' AND 'job:sub1/rg1/coll1/new' AND ExecutionStatus = 'Running'", f.lastQuery(),
		"the collection's names, read from its memo, name the jobs listed")

	// The deleted and the undefined job are left out before paging; the
	// nextLink resumes after the page's last job.
	status, body = getList(t, f, jobsPath+version+"&$top=2&$skip=1")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"coll1/j2", "coll1/j3"}, names(t, body))
	assert.Equal(t, "http://localhost"+jobsPath+"?$skiptoken=j3&$top=2&api-version=2016-03-01", body["nextLink"])
	status, body = getList(t, f, jobsPath+version+"&$top=2&$skiptoken=j3")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"coll1/j4", "coll1/j5"}, names(t, body))
	assert.NotContains(t, body, "nextLink", "the last page ends the list")
	// A job deleted since the page before does not shift the next.
	status, body = getList(t, f, jobsPath+version+"&$top=2&$skiptoken=j35")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"coll1/j4", "coll1/j5"}, names(t, body))

	// A page reads its names in chunks, each twice the one before, until
	// it knows whether a job follows it.
	n := len(f.queries)
	status, body = getList(t, f, jobsPath+version+"&$top=1&$skip=4")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"coll1/j5"}, names(t, body))
	assert.NotContains(t, body, "nextLink")
	assert.Equal(t, []string{
		"WorkflowId BETWEEN 'job:sub1/rg1/coll1/gone' AND 'job:sub1/rg1/coll1/j5' AND ExecutionStatus = 'Running'",
		"WorkflowId BETWEEN 'job:sub1/rg1/coll1/new' AND 'job:sub1/rg1/coll1/new' AND ExecutionStatus = 'Running'",
	}, slices.Compact(f.queriesSince(n)),
		"each chunk's query, once a visibility page")

	status, body = getList(t, f, jobsPath+version+"&$filter=state%20eq%20disabled")
	require.Equal(t, http.StatusOK, status, body)
	assert.True(t, strings.HasSuffix(f.lastQuery(), " AND RecurState = 'Disabled'"), f.lastQuery())

	for _, tc := range []struct {
		target, code string
		status       int
	}{
		{jobsPath + version + "&$filter=state%20eq%20Running", codeInvalidFilter, http.StatusBadRequest},
		{jobsPath + version + "&$top=0", codeInvalidQuery, http.StatusBadRequest},
		{jobsPath + version + "&$skiptoken=a/b", codeInvalidQuery, http.StatusBadRequest},
		{rgPath + "/nope/jobs" + version, jobs.CodeNotFound, http.StatusNotFound},
	} {
		n := len(f.queries)
		status, body := getList(t, f, tc.target)
		assert.Equal(t, tc.status, status, tc.target)
		assert.Equal(t, tc.code, body["error"].(map[string]any)["code"], tc.target)
		assert.Len(t, f.queries, n, "%s: nothing listed", tc.target)
	}

	f.undefined["collection:sub1/rg1/coll1"] = true
	status, body = getList(t, f, jobsPath+version)
	assert.Equal(t, http.StatusNotFound, status, "a collection never defined: %v", body)
	delete(f.undefined, "collection:sub1/rg1/coll1")

	// A view that cannot be read fails the page that holds it; the pages
	// before it, which never decode it, answer.
	f.failing = "job:sub1/rg1/coll1/j4"
	status, body = getList(t, f, jobsPath+version)
	assert.Equal(t, http.StatusInternalServerError, status, body)
	status, body = getList(t, f, jobsPath+version+"&$top=2")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"coll1/j1", "coll1/j2"}, names(t, body))
}

// TestAListShowsTheJobsTheStoreHasNotCaughtUpWith: the visibility store
// takes a workflow's start and memo a moment after Temporal. A job its
// collection lists whose run the store shows without its memo, or not at
// all, is read from its workflow, as a GET reads it: a list right after a
// creation answered shows the job. One never defined, or deleted, stays
// out; so does one of another state than the list's.
func TestAListShowsTheJobsTheStoreHasNotCaughtUpWith(t *testing.T) {
	f := newListFake()
	f.addCollection(t, "rg1", "coll1")
	for _, name := range []string{"j1", "j2", "j3", "gone", "new"} {
		f.addJob(t, name, name == "gone")
	}
	id := func(name string) string {
		return jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: name}.JobWorkflowID()
	}
	f.undefined[id("new")] = true
	f.memoless[id("j2")], f.memoless[id("gone")], f.memoless[id("new")] = true, true, true
	f.unlisted[id("j3")] = true
	j1 := f.views[id("j1")].(jobs.JobView)
	j1.Job.Properties.State = jobs.Disabled
	f.views[id("j1")] = j1
	status, body := getList(t, f, jobsPath+version)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"coll1/j1", "coll1/j2", "coll1/j3"}, names(t, body))

	status, body = getList(t, f, jobsPath+version+"&$filter=state%20eq%20disabled")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"coll1/j1"}, names(t, body),
		"j1, disabled, as the store lists it; j2, read from its workflow, is not disabled, and j3 is not in the store")
}

// TestListPagingOutOfRange: a $skip or $top no list can reach is a 400 in
// ARM's envelope on every list route, before any arithmetic on it: a
// $skip near 2^63 once overflowed the page's bounds into a panic.
func TestListPagingOutOfRange(t *testing.T) {
	f := newListFake()
	f.addCollection(t, "rg1", "coll1")
	f.addJob(t, "j1", false)
	for _, route := range []string{subPath, rgPath, jobsPath, jobsPath + "/j1/history"} {
		for _, query := range []string{
			"$skip=9223372036854775707", "$skip=9223372036854775807", "$skip=9223372036854775808",
			"$skip=1000000001", "$skip=-1", "$skip=", "$skip=1e3",
			"$top=9223372036854775807", "$top=0", "$top=101", "$top=-1",
			"$top=100&$skip=9223372036854775707",
		} {
			target := route + version + "&" + query
			status, body := getList(t, f, target)
			require.Equal(t, http.StatusBadRequest, status, "%s: %v", target, body)
			errBody, ok := body["error"].(map[string]any)
			require.True(t, ok, "%s: %v", target, body)
			assert.Equal(t, codeInvalidQuery, errBody["code"], target)
			assert.NotEmpty(t, errBody["message"], target)
		}
		if strings.HasSuffix(route, "/history") {
			continue // the fake has no histories: e2e FuzzListParameters reads them
		}
		status, body := getList(t, f, route+version+"&$skip=1000000000")
		require.Equal(t, http.StatusOK, status, "%s: the largest $skip: %v", route, body)
		assert.Equal(t, []string{}, names(t, body), route)
		assert.NotContains(t, body, "nextLink", route)
	}
}
