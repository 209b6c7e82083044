package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/temporalio/sqlparser"

	"github.com/recurhq/recur/jobs"
)

func TestParseFilter(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
		ok        bool
	}{
		{"", "", true},
		{"   ", "", true},
		{"status eq 'Failed'", "Failed", true},
		{"status eq 'failed'", "Failed", true},
		{"Status EQ 'COMPLETED'", "Completed", true},
		{"  status   eq  'postponed' ", "Postponed", true},
		{"status eq 'Succeeded'", "", false},
		{"status eq Failed", "", false},
		{"status eq 'Failed", "", false},
		{"status ne 'Failed'", "", false},
		{"state eq 'Failed'", "", false},
		{"status eq 'Failed' or status eq 'Completed'", "", false},
		{"status eq ''", "", false},
	} {
		got, err := parseFilter(tc.raw, "status", historyStatuses)
		if !tc.ok {
			var apiErr *apiError
			require.ErrorAs(t, err, &apiErr, tc.raw)
			assert.Equal(t, http.StatusBadRequest, apiErr.status, tc.raw)
			assert.Equal(t, codeInvalidFilter, apiErr.code, tc.raw)
			assert.Equal(t, "$filter", apiErr.target, tc.raw)
			continue
		}
		require.NoError(t, err, tc.raw)
		assert.Equal(t, tc.want, got, tc.raw)
	}
}

// TestQuoteParses parses quoted values with the parser Temporal's
// visibility queries go through: each stays one string literal.
func TestQuoteParses(t *testing.T) {
	for _, v := range []string{"job-1", "it's", `back\slash`, `\' OR RecurJob = 'x`, `'`, `\`, "ünïcode"} {
		stmt, err := sqlparser.Parse("select * from t where RecurJob = " + quote(v))
		require.NoError(t, err, v)
		cmp, ok := stmt.(*sqlparser.Select).Where.Expr.(*sqlparser.ComparisonExpr)
		require.True(t, ok, "%q: one comparison", v)
		val, ok := cmp.Right.(*sqlparser.SQLVal)
		require.True(t, ok, v)
		assert.Equal(t, sqlparser.StrVal, val.Type, v)
		assert.Equal(t, v, string(val.Val))
	}
}

func TestHistoryQuery(t *testing.T) {
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "j.1"}
	assert.Equal(t, "RecurKind = 'run' AND RecurSubscription = 'sub1' AND RecurResourceGroup = 'rg1' "+
		"AND RecurCollection = 'coll1' AND RecurJob = 'j.1'", historyQuery(k, ""))
	assert.True(t, strings.HasSuffix(historyQuery(k, "Failed"), " AND RecurJob = 'j.1' AND RecurStatus = 'Failed'"))
}

// fakeTemporal describes the job and lists its runs; it rejects ORDER BY
// as the SQL visibility stores do unless ordered is set.
type fakeTemporal struct {
	client.Client
	missing bool
	deleted bool
	ordered bool
	runs    []*workflowpb.WorkflowExecutionInfo // in the store's order
	queries []string
}

func (f *fakeTemporal) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	if f.missing {
		return nil, serviceerror.NewNotFound("workflow not found for ID: " + id)
	}
	p, err := converter.GetDefaultDataConverter().ToPayload(jobs.JobView{Deleted: f.deleted})
	if err != nil {
		return nil, err
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Status: enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING,
		Memo:   &commonpb.Memo{Fields: map[string]*commonpb.Payload{jobs.MemoJob: p}},
	}}, nil
}

func (f *fakeTemporal) ListWorkflow(_ context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	f.queries = append(f.queries, req.Query)
	if strings.Contains(req.Query, "ORDER BY") && !f.ordered {
		return nil, serviceerror.NewInvalidArgument("invalid query: operation is not supported: 'ORDER BY' clause")
	}
	// Two executions a page, to exercise paging.
	start := 0
	if len(req.NextPageToken) > 0 {
		start = int(req.NextPageToken[0])
	}
	end := min(start+2, len(f.runs))
	resp := &workflowservice.ListWorkflowExecutionsResponse{Executions: f.runs[start:end]}
	if end < len(f.runs) {
		resp.NextPageToken = []byte{byte(end)}
	}
	return resp, nil
}

func fakeRun(t *testing.T, nominal time.Time, statuses ...jobs.ExecutionStatus) *workflowpb.WorkflowExecutionInfo {
	t.Helper()
	var rows []jobs.HistoryRow
	for i, st := range statuses {
		name := jobs.MainAction
		if i > 0 {
			name = jobs.ErrorAction
		}
		rows = append(rows, jobs.HistoryRow{ExpectedExecutionTime: nominal, ActionName: name, Status: st})
	}
	info := &workflowpb.WorkflowExecutionInfo{
		Execution: &commonpb.WorkflowExecution{WorkflowId: jobs.OccurrenceID("job:sub1/rg1/coll1/j", nominal)},
	}
	if rows != nil {
		p, err := converter.GetDefaultDataConverter().ToPayload(rows)
		require.NoError(t, err)
		info.Memo = &commonpb.Memo{Fields: map[string]*commonpb.Payload{jobs.MemoHistory: p}}
	}
	return info
}

const historyPath = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/coll1/jobs/j/history"

func getHistory(t *testing.T, f client.Client, query string) (int, map[string]any) {
	t.Helper()
	h := New(f, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, historyPath+"?api-version=2016-03-01"+query, nil))
	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	return rec.Code, body
}

// rowNames returns the history rows' names, without the job's prefix.
func rowNames(t *testing.T, body map[string]any) []string {
	t.Helper()
	names := []string{}
	for _, v := range body["value"].([]any) {
		name := v.(map[string]any)["name"].(string)
		names = append(names, strings.TrimPrefix(name, "coll1/j/"))
	}
	return names
}

func TestListHistory(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	runs := func(t *testing.T) []*workflowpb.WorkflowExecutionInfo {
		// The SQL store's order: most recently closed first, running first
		// of all; not the nominal order.
		return []*workflowpb.WorkflowExecutionInfo{
			fakeRun(t, t0.Add(3*time.Minute)), // still running: no rows yet
			fakeRun(t, t0.Add(time.Minute), jobs.Failed, jobs.Succeeded),
			fakeRun(t, t0.Add(2*time.Minute), jobs.Succeeded),
			fakeRun(t, t0, jobs.Postponed),
		}
	}
	all := []string{
		"20250301T120200Z-MainAction",
		"20250301T120100Z-ErrorAction",
		"20250301T120100Z-MainAction",
		"20250301T120000Z-MainAction",
	}
	for _, ordered := range []bool{false, true} {
		f := &fakeTemporal{runs: runs(t), ordered: ordered}
		if ordered {
			f.runs = []*workflowpb.WorkflowExecutionInfo{f.runs[0], f.runs[2], f.runs[1], f.runs[3]}
		}
		status, body := getHistory(t, f, "")
		require.Equal(t, http.StatusOK, status, body)
		assert.Equal(t, all, rowNames(t, body), "ordered %v", ordered)
		assert.NotContains(t, body, "nextLink")
		assert.Contains(t, f.queries[len(f.queries)-1], "RecurJob = 'j'")
	}

	f := &fakeTemporal{runs: runs(t)}
	_, body := getHistory(t, f, "")
	first := body["value"].([]any)[0].(map[string]any)
	assert.Equal(t, "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/coll1/jobs/j/history/20250301T120200Z-MainAction", first["id"])
	assert.Equal(t, "Microsoft.Scheduler/jobCollections/jobs/history", first["type"])
	assert.Equal(t, "Completed", first["properties"].(map[string]any)["status"])
	assert.Equal(t, "2025-03-01T12:02:00Z", first["properties"].(map[string]any)["expectedExecutionTime"])

	status, body := getHistory(t, f, "&$top=2&$skip=1")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, all[1:3], rowNames(t, body))
	next, ok := body["nextLink"].(string)
	require.True(t, ok, body)
	assert.Contains(t, next, "$skip=3")
	assert.Contains(t, next, "$top=2")
	assert.Contains(t, next, "api-version=2016-03-01")
	assert.True(t, strings.HasPrefix(next, "http://example.com"+historyPath+"?"), next)

	_, body = getHistory(t, f, "&$top=2&$skip=3")
	assert.Equal(t, all[3:], rowNames(t, body))
	assert.NotContains(t, body, "nextLink")

	_, body = getHistory(t, f, "&$skip=10")
	assert.Equal(t, []string{}, rowNames(t, body))

	getHistory(t, f, "&$filter=status%20eq%20%27failed%27")
	assert.True(t, strings.HasSuffix(f.queries[len(f.queries)-1], " AND RecurStatus = 'Failed'"), f.queries)
}

func TestListHistoryErrors(t *testing.T) {
	for _, tc := range []struct {
		query, code string
		status      int
	}{
		{"&$top=0", codeInvalidQuery, http.StatusBadRequest},
		{"&$top=101", codeInvalidQuery, http.StatusBadRequest},
		{"&$top=x", codeInvalidQuery, http.StatusBadRequest},
		{"&$skip=-1", codeInvalidQuery, http.StatusBadRequest},
		{"&$filter=state%20eq%20%27Enabled%27", codeInvalidFilter, http.StatusBadRequest},
	} {
		f := &fakeTemporal{}
		status, body := getHistory(t, f, tc.query)
		assert.Equal(t, tc.status, status, tc.query)
		assert.Equal(t, tc.code, body["error"].(map[string]any)["code"], tc.query)
		assert.Empty(t, f.queries, "a bad request lists nothing")
	}

	status, body := getHistory(t, &fakeTemporal{missing: true}, "")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, jobs.CodeNotFound, body["error"].(map[string]any)["code"])

	status, body = getHistory(t, &fakeTemporal{deleted: true}, "")
	assert.Equal(t, http.StatusNotFound, status, "a deleted job has no history")
	assert.Equal(t, jobs.CodeNotFound, body["error"].(map[string]any)["code"])

	status, body = getHistory(t, &listFails{fakeTemporal: &fakeTemporal{}}, "")
	assert.Equal(t, http.StatusInternalServerError, status, body)
}

// listFails fails every list with an error that is not InvalidArgument.
type listFails struct{ *fakeTemporal }

func (l *listFails) ListWorkflow(context.Context, *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	return nil, errors.New("visibility is down")
}
