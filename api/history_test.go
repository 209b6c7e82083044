package api

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/temporalio/sqlparser"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

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
		stmt, err := sqlparser.Parse("select * from t where RecurJob = " + jobs.Quote(v))
		require.NoError(t, err, v)
		cmp, ok := stmt.(*sqlparser.Select).Where.Expr.(*sqlparser.ComparisonExpr)
		require.True(t, ok, "%q: one comparison", v)
		val, ok := cmp.Right.(*sqlparser.SQLVal)
		require.True(t, ok, v)
		assert.Equal(t, sqlparser.StrVal, val.Type, v)
		assert.Equal(t, v, string(val.Val))
	}
}

// fakeTemporal describes the job and serves the histories of its runs in
// reverse, two events a page: runs[runID] in the order they were written,
// current the running one.
type fakeTemporal struct {
	client.Client
	missing bool
	deleted bool
	failing bool // every history read fails
	// refusals are the answers of the next history reads, before they
	// serve: Temporal unavailable or refusing for a moment.
	refusals []error
	current  string
	runs     map[string][]*historypb.HistoryEvent
	reads    []string // the runs read, in order
	asked    []string // the run IDs those reads named, "" for the current run
}

func (f *fakeTemporal) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	if f.missing {
		return nil, serviceerror.NewNotFound("workflow not found for ID: " + id)
	}
	resp, err := describedJob(jobs.JobView{Deleted: f.deleted})
	if err == nil {
		resp.WorkflowExecutionInfo.Execution = &commonpb.WorkflowExecution{WorkflowId: id, RunId: f.current}
	}
	return resp, err
}

// describedJob is what describe answers of a running job workflow with
// view in its memo.
func describedJob(view jobs.JobView) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	p, err := converter.GetDefaultDataConverter().ToPayload(view)
	if err != nil {
		return nil, err
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Status: enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING,
		Memo:   &commonpb.Memo{Fields: map[string]*commonpb.Payload{jobs.MemoJob: p}},
	}}, nil
}

func (f *fakeTemporal) WorkflowService() workflowservice.WorkflowServiceClient {
	return fakeService{f: f}
}

type fakeService struct {
	idleTaskQueue
	f *fakeTemporal
}

func (s fakeService) GetWorkflowExecutionHistoryReverse(_ context.Context, req *workflowservice.GetWorkflowExecutionHistoryReverseRequest, _ ...grpc.CallOption) (*workflowservice.GetWorkflowExecutionHistoryReverseResponse, error) {
	f := s.f
	if f.failing {
		return nil, errors.New("the history store is down")
	}
	if len(f.refusals) > 0 {
		err := f.refusals[0]
		f.refusals = f.refusals[1:]
		return nil, err
	}
	run := cmp.Or(req.GetExecution().GetRunId(), f.current)
	events, ok := f.runs[run]
	if !ok {
		return nil, serviceerror.NewNotFound("workflow run " + run + " not found")
	}
	skip := 0
	if len(req.NextPageToken) > 0 {
		skip = int(req.NextPageToken[0])
	} else {
		f.reads = append(f.reads, run)
		f.asked = append(f.asked, req.GetExecution().GetRunId())
	}
	var page []*historypb.HistoryEvent
	for i := len(events) - 1 - skip; i >= 0 && len(page) < 2; i-- {
		page = append(page, events[i])
	}
	resp := &workflowservice.GetWorkflowExecutionHistoryReverseResponse{History: &historypb.History{Events: page}}
	if skip+len(page) < len(events) {
		resp.NextPageToken = []byte{byte(skip + len(page))}
	}
	return resp, nil
}

// started is the first event of a run continued from previous ("" for none).
func started(previous string) *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
		Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{
			WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{ContinuedExecutionRunId: previous}}}
}

// timer is an event that holds no rows.
func timer() *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_TIMER_FIRED}
}

// upsert is the memo upsert of one workflow task: the rows of the
// occurrences it handled, each an occurrence's statuses (main action,
// then error action) at its nominal time.
func upsert(t *testing.T, occurrences ...fakeOccurrence) *historypb.HistoryEvent {
	t.Helper()
	var rows []jobs.HistoryRow
	for _, o := range occurrences {
		for i, st := range o.statuses {
			name := jobs.MainAction
			if i > 0 {
				name = jobs.ErrorAction
			}
			rows = append(rows, jobs.HistoryRow{ExpectedExecutionTime: o.nominal, ActionName: name, Status: st})
		}
	}
	p, err := converter.GetDefaultDataConverter().ToPayload(rows)
	require.NoError(t, err)
	return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED,
		Attributes: &historypb.HistoryEvent_WorkflowPropertiesModifiedEventAttributes{
			WorkflowPropertiesModifiedEventAttributes: &historypb.WorkflowPropertiesModifiedEventAttributes{
				UpsertedMemo: &commonpb.Memo{Fields: map[string]*commonpb.Payload{jobs.MemoRows: p}}}}}
}

type fakeOccurrence struct {
	nominal  time.Time
	statuses []jobs.ExecutionStatus
}

func at(nominal time.Time, statuses ...jobs.ExecutionStatus) fakeOccurrence {
	return fakeOccurrence{nominal, statuses}
}

const historyPath = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/coll1/jobs/j/history"

func getHistory(t *testing.T, f client.Client, query string) (int, map[string]any) {
	t.Helper()
	h := New(f, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, newRequest(http.MethodGet, historyPath+"?api-version=2016-03-01"+query, nil))
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

// fakeJob is a job of three runs: the first postponed an occurrence, the
// second ran two (the first failed, its error action completed), the
// current one caught up two in one task, after a timer.
func fakeJob(t *testing.T) *fakeTemporal {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	m := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	return &fakeTemporal{current: "r3", runs: map[string][]*historypb.HistoryEvent{
		"r1": {started(""), timer(), upsert(t, at(m(0), jobs.ExecutionPostponed))},
		"r2": {started("r1"), upsert(t, at(m(1), jobs.ExecutionFailed, jobs.ExecutionCompleted)), timer(), upsert(t, at(m(2), jobs.ExecutionCompleted))},
		"r3": {started("r2"), timer(), upsert(t, at(m(3), jobs.ExecutionPostponed), at(m(4), jobs.ExecutionCompleted)), timer()},
	}}
}

func TestListHistory(t *testing.T) {
	all := []string{
		"20250301T120400Z-MainAction",
		"20250301T120300Z-MainAction",
		"20250301T120200Z-MainAction",
		"20250301T120100Z-ErrorAction",
		"20250301T120100Z-MainAction",
		"20250301T120000Z-MainAction",
	}
	f := fakeJob(t)
	status, body := getHistory(t, f, "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, all, rowNames(t, body))
	assert.NotContains(t, body, "nextLink")
	assert.Equal(t, []string{"r3", "r2", "r1"}, f.reads, "back along the chain")

	first := body["value"].([]any)[0].(map[string]any)
	assert.Equal(t, "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/coll1/jobs/j/history/20250301T120400Z-MainAction", first["id"])
	assert.Equal(t, "Microsoft.Scheduler/jobCollections/jobs/history", first["type"])
	assert.Equal(t, "Completed", first["properties"].(map[string]any)["status"])
	assert.Equal(t, "2025-03-01T12:04:00Z", first["properties"].(map[string]any)["expectedExecutionTime"])

	f = fakeJob(t)
	status, body = getHistory(t, f, "&$top=1")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, all[:1], rowNames(t, body))
	assert.Equal(t, []string{"r3"}, f.reads, "a page reads no further back than it needs (a row past it, for nextLink)")

	status, body = getHistory(t, fakeJob(t), "&$top=2&$skip=2")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, all[2:4], rowNames(t, body))
	next, ok := body["nextLink"].(string)
	require.True(t, ok, body)
	assert.Contains(t, next, "$skip=4")
	assert.Contains(t, next, "$top=2")
	assert.Contains(t, next, "api-version=2016-03-01")
	assert.True(t, strings.HasPrefix(next, "http://localhost"+historyPath+"?"), next)

	_, body = getHistory(t, fakeJob(t), "&$top=2&$skip=4")
	assert.Equal(t, all[4:], rowNames(t, body))
	assert.NotContains(t, body, "nextLink")

	_, body = getHistory(t, fakeJob(t), "&$skip=10")
	assert.Equal(t, []string{}, rowNames(t, body))

	_, body = getHistory(t, fakeJob(t), "&$filter=status%20eq%20%27failed%27")
	assert.Equal(t, all[3:5], rowNames(t, body), "an occurrence's rows stay together")
	_, body = getHistory(t, fakeJob(t), "&$filter=status%20eq%20%27Postponed%27&$top=1")
	assert.Equal(t, all[1:2], rowNames(t, body))
	assert.Contains(t, body["nextLink"], "$skip=1")
}

// TestListHistoryStartsAtTheRunItFoundRunning: the describe that finds
// the job names its running run, and the history is read from that run
// back, never by workflow ID alone (which costs Temporal a read of the
// current run).
func TestListHistoryStartsAtTheRunItFoundRunning(t *testing.T) {
	f := fakeJob(t)
	status, body := getHistory(t, f, "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, []string{"r3", "r2", "r1"}, f.asked)
}

func TestListHistoryOfARunRetentionRemoved(t *testing.T) {
	f := fakeJob(t)
	delete(f.runs, "r1")
	status, body := getHistory(t, f, "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Len(t, rowNames(t, body), 5, "the rows of the runs still kept")
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
		f := fakeJob(t)
		status, body := getHistory(t, f, tc.query)
		assert.Equal(t, tc.status, status, tc.query)
		assert.Equal(t, tc.code, body["error"].(map[string]any)["code"], tc.query)
		assert.Empty(t, f.reads, "a bad request reads nothing")
	}

	status, body := getHistory(t, &fakeTemporal{missing: true}, "")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, jobs.CodeNotFound, body["error"].(map[string]any)["code"])

	status, body = getHistory(t, &fakeTemporal{deleted: true}, "")
	assert.Equal(t, http.StatusNotFound, status, "a deleted job has no history")
	assert.Equal(t, jobs.CodeNotFound, body["error"].(map[string]any)["code"])

	status, body = getHistory(t, &fakeTemporal{failing: true}, "")
	assert.Equal(t, http.StatusInternalServerError, status, body)
}

// TestListHistoryRetriesAsTheSDKDoes: the history is a raw call of
// Temporal's service, with none of the retries the SDK gives the calls of
// every other read; the API retries it as the SDK would, while Temporal is
// unavailable or refuses for a moment, and answers once it serves.
func TestListHistoryRetriesAsTheSDKDoes(t *testing.T) {
	f := fakeJob(t)
	f.refusals = []error{
		serviceerror.NewUnavailable("a shard is moving"),
		grpcstatus.Error(codes.Unavailable, "connection refused"),
		serviceerror.NewResourceExhausted(enumspb.RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT, "namespace rate limit"),
	}
	status, body := getHistory(t, f, "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Len(t, rowNames(t, body), 6)
	assert.Empty(t, f.refusals, "each refusal was answered with another try")

	// Any other error is an answer: tried once.
	f = fakeJob(t)
	f.refusals = []error{serviceerror.NewInvalidArgument("bad page token"), serviceerror.NewUnavailable("never asked")}
	status, body = getHistory(t, f, "")
	assert.Equal(t, http.StatusInternalServerError, status, body)
	assert.Len(t, f.refusals, 1)
}

// TestListHistoryPagesAThousandDeep: a job of 12 runs of 100 occurrences
// each, every tenth failed; a page 1000 rows deep reads back only as far
// as it needs, newest first, and a filtered one too.
func TestListHistoryPagesAThousandDeep(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	f := &fakeTemporal{current: "r11", runs: map[string][]*historypb.HistoryEvent{}}
	for r := range 12 {
		previous := ""
		if r > 0 {
			previous = fmt.Sprintf("r%d", r-1)
		}
		events := []*historypb.HistoryEvent{started(previous)}
		for i := range 100 {
			n := r*100 + i
			status := jobs.ExecutionCompleted
			if n%10 == 0 {
				status = jobs.ExecutionFailed
			}
			events = append(events, timer(), upsert(t, at(t0.Add(time.Duration(n)*time.Minute), status)))
		}
		f.runs[fmt.Sprintf("r%d", r)] = events
	}
	nameOf := func(n int) string {
		return t0.Add(time.Duration(n)*time.Minute).Format(historyRowIDLayout) + "Z-MainAction"
	}

	status, body := getHistory(t, f, "&$top=100&$skip=1000")
	require.Equal(t, http.StatusOK, status, body)
	names := rowNames(t, body)
	require.Len(t, names, 100)
	require.Equal(t, nameOf(1199-1000), names[0], "newest first: the 1001st newest")
	require.Equal(t, nameOf(1199-1099), names[99])
	require.Contains(t, body["nextLink"], "$skip=1100")
	require.Equal(t, []string{"r11", "r10", "r9", "r8", "r7", "r6", "r5", "r4", "r3", "r2", "r1", "r0"}, f.reads,
		"rows 1001 to 1100, and the one after for nextLink, back to the first run")

	f.reads = nil
	status, body = getHistory(t, f, "&$top=10&$skip=100&$filter=status%20eq%20%27Failed%27")
	require.Equal(t, http.StatusOK, status, body)
	names = rowNames(t, body)
	require.Len(t, names, 10)
	require.Equal(t, nameOf(1190-1000), names[0], "the 101st newest failed occurrence")
	require.Equal(t, nameOf(1190-1090), names[9])
	require.Contains(t, body["nextLink"], "$skip=110")
}
