package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/recurhq/recur/jobs"
)

// History paging. Azure allows at most 100 rows a page.
const (
	maxHistoryTop = 100
	// maxHistoryRuns bounds the runs one history request reads. The SQL
	// visibility stores (SQLite, PostgreSQL, MySQL) reject ORDER BY, so
	// there the API reads the runs in the store's order (most recently
	// closed first), at most this many, and sorts them itself: history
	// through the API covers a job's newest maxHistoryRuns runs, and
	// `temporal workflow list --query "RecurJob='...'"` finds the rest.
	maxHistoryRuns     = 1000
	historyListPage    = 1000 // the frontend's default maximum page size
	historyType        = "Microsoft.Scheduler/jobCollections/jobs/history"
	codeInvalidFilter  = "InvalidFilter"
	codeInvalidQuery   = "InvalidQueryParameterValue"
	historyRowIDLayout = "20060102T150405.999999999"
)

// historyStatuses are the values of $filter=status eq '...'.
var historyStatuses = []string{string(jobs.Succeeded), string(jobs.Failed), string(jobs.Postponed)}

// historyEntry is one row of Azure's JobHistoryListResult.
type historyEntry struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	Properties jobs.HistoryRow `json:"properties"`
}

type historyList struct {
	Value    []historyEntry `json:"value"`
	NextLink string         `json:"nextLink,omitempty"`
}

// historyRun is the rows one run workflow recorded.
type historyRun struct {
	workflowID string
	nominal    time.Time
	rows       []jobs.HistoryRow // as recorded: main action, then error action
}

// listHistory answers GET .../jobs/{jobName}/history: the rows of the
// job's runs, newest run first. Within a run the error action's row comes
// before the main action's, since it ran later; a run's rows stay
// together. $filter selects runs by their outcome (RecurStatus), so a run
// whose main action failed and whose error action completed matches
// status eq 'Failed' with both its rows.
func (s *Server) listHistory(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
	defer cancel()
	k, err := key(c)
	var p historyParams
	if err == nil {
		p, err = parseHistoryParams(c)
	}
	if err == nil {
		_, err = s.job(ctx, k)
	}
	var runs []historyRun
	if err == nil {
		runs, err = s.historyRuns(ctx, historyQuery(k, p.status), p.skip+p.top+1)
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	var rows []historyEntry
	for _, r := range runs {
		for i := len(r.rows) - 1; i >= 0; i-- {
			rows = append(rows, newHistoryEntry(k, r.rows[i]))
		}
	}
	list := historyList{Value: []historyEntry{}}
	if p.skip < len(rows) {
		list.Value = rows[p.skip:min(p.skip+p.top, len(rows))]
	}
	if len(rows) > p.skip+p.top {
		list.NextLink = nextLink(c, p.skip+p.top)
	}
	c.JSON(http.StatusOK, list)
}

func newHistoryEntry(k jobs.Key, row jobs.HistoryRow) historyEntry {
	id := row.ExpectedExecutionTime.UTC().Format(historyRowIDLayout) + "Z-" + row.ActionName
	return historyEntry{
		ID:         k.JobID() + "/history/" + id,
		Type:       historyType,
		Name:       k.Collection + "/" + k.Job + "/" + id,
		Properties: row,
	}
}

// historyParams are the query parameters of a history request.
type historyParams struct {
	top, skip int
	status    string // canonical; "" for every status
}

func parseHistoryParams(c *gin.Context) (historyParams, error) {
	var p historyParams
	var err error
	if p.top, p.skip, err = parsePage(c, maxHistoryTop); err != nil {
		return p, err
	}
	p.status, err = parseFilter(c.Query("$filter"), "status", historyStatuses)
	return p, err
}

// parsePage parses $top (1 to maxTop, maxTop when absent) and $skip (0 or
// more, 0 when absent).
func parsePage(c *gin.Context, maxTop int) (top, skip int, err error) {
	top = maxTop
	if v, ok := c.GetQuery("$top"); ok {
		top, err = strconv.Atoi(v)
		if err != nil || top < 1 || top > maxTop {
			return 0, 0, &apiError{status: http.StatusBadRequest, code: codeInvalidQuery, target: "$top",
				message: fmt.Sprintf("$top %q must be an integer from 1 to %d", v, maxTop)}
		}
	}
	if v, ok := c.GetQuery("$skip"); ok {
		skip, err = strconv.Atoi(v)
		if err != nil || skip < 0 {
			return 0, 0, &apiError{status: http.StatusBadRequest, code: codeInvalidQuery, target: "$skip",
				message: fmt.Sprintf("$skip %q must be an integer of 0 or more", v)}
		}
	}
	return top, skip, nil
}

// parseFilter parses the one OData filter the API supports,
// "<field> eq '<value>'", and returns the value spelled as in values. The
// field, the operator and the value may come in any case; an empty filter
// selects everything.
func parseFilter(raw, field string, values []string) (string, error) {
	return parseEqFilter(raw, field, values, false)
}

// parseEqFilter is parseFilter; with bare set, the value may also come
// without its quotes ("state eq Enabled"), as clients of the job list
// sent it.
func parseEqFilter(raw, field string, values []string, bare bool) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "", nil
	}
	bad := &apiError{status: http.StatusBadRequest, code: codeInvalidFilter, target: "$filter",
		message: fmt.Sprintf("$filter %q is not supported; use %s eq '<value>' with one of %s",
			raw, field, strings.Join(values, ", "))}
	parts := strings.Fields(raw)
	if len(parts) != 3 || !strings.EqualFold(parts[0], field) || !strings.EqualFold(parts[1], "eq") {
		return "", bad
	}
	value, quoted := strings.CutPrefix(parts[2], "'")
	value, closed := strings.CutSuffix(value, "'")
	if quoted != closed || (!quoted && !bare) {
		return "", bad
	}
	for _, v := range values {
		if strings.EqualFold(v, value) {
			return v, nil
		}
	}
	return "", bad
}

// historyQuery is the visibility query for k's runs, of one status or of
// any.
func historyQuery(k jobs.Key, status string) string {
	var extra []string
	if status != "" {
		extra = append(extra, jobs.AttrStatus.GetName()+" = "+quote(status))
	}
	return scopeQuery(jobs.KindRun, k, extra...)
}

// scopeQuery is the visibility query for the workflows of one kind within
// k: its subscription and, when set, its resource group, collection and
// job; extra conditions are ANDed on.
func scopeQuery(kind string, k jobs.Key, extra ...string) string {
	conds := []string{
		jobs.AttrKind.GetName() + " = " + quote(kind),
		jobs.AttrSubscription.GetName() + " = " + quote(k.Subscription),
	}
	for _, part := range []struct {
		attr  string
		value string
	}{
		{jobs.AttrResourceGroup.GetName(), k.ResourceGroup},
		{jobs.AttrCollection.GetName(), k.Collection},
		{jobs.AttrJob.GetName(), k.Job},
	} {
		if part.value != "" {
			conds = append(conds, part.attr+" = "+quote(part.value))
		}
	}
	return strings.Join(append(conds, extra...), " AND ")
}

// quote makes s a string literal of Temporal's visibility query language,
// whose parser reads backslash escapes as MySQL does.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// historyRuns returns the runs the query finds that have recorded rows,
// newest first. It asks the store to order them by nominal time and stops
// once it has wantRows rows; a store that rejects ORDER BY (any SQL one)
// answers InvalidArgument, and then it reads up to maxHistoryRuns runs
// and sorts them.
func (s *Server) historyRuns(ctx context.Context, query string, wantRows int) ([]historyRun, error) {
	runs, err := s.listRuns(ctx, query+" ORDER BY "+jobs.AttrNominalTime.GetName()+" DESC", wantRows)
	var invalid *serviceerror.InvalidArgument
	if errors.As(err, &invalid) {
		runs, err = s.listRuns(ctx, query, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	slices.SortStableFunc(runs, func(a, b historyRun) int {
		return cmp.Or(b.nominal.Compare(a.nominal), strings.Compare(b.workflowID, a.workflowID))
	})
	return runs, nil
}

// listRuns reads the runs the query finds, page by page, until there are
// no more, maxHistoryRuns are read, or (wantRows > 0) they hold wantRows
// rows.
func (s *Server) listRuns(ctx context.Context, query string, wantRows int) ([]historyRun, error) {
	var (
		runs []historyRun
		rows int
	)
	err := s.listWorkflows(ctx, query, func(e *workflowpb.WorkflowExecutionInfo) bool {
		run, ok := s.decodeRun(ctx, e)
		if !ok {
			return true
		}
		runs, rows = append(runs, run), rows+len(run.rows)
		return len(runs) < maxHistoryRuns && (wantRows <= 0 || rows < wantRows)
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// listWorkflows calls visit with each execution the visibility query
// finds, page by page, until there are no more or visit returns false.
func (s *Server) listWorkflows(ctx context.Context, query string, visit func(*workflowpb.WorkflowExecutionInfo) bool) error {
	var token []byte
	for {
		resp, err := s.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: s.namespace, PageSize: historyListPage, NextPageToken: token, Query: query,
		})
		if err != nil {
			return err
		}
		for _, e := range resp.GetExecutions() {
			if !visit(e) {
				return nil
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return nil
		}
	}
}

// decodeRun reads a run's history rows from its memo. A run still
// running has none yet; a memo that does not decode is logged and
// skipped, so one bad run never hides the job's history.
func (s *Server) decodeRun(ctx context.Context, e *workflowpb.WorkflowExecutionInfo) (historyRun, bool) {
	run := historyRun{workflowID: e.GetExecution().GetWorkflowId()}
	payload, ok := e.GetMemo().GetFields()[jobs.MemoHistory]
	if !ok {
		return run, false
	}
	if err := s.dataConverter().FromPayload(payload, &run.rows); err != nil {
		s.log.WarnContext(ctx, "skip run with unreadable history", "workflowID", run.workflowID, "error", err)
		return run, false
	}
	if len(run.rows) == 0 {
		return run, false
	}
	run.nominal = run.rows[0].ExpectedExecutionTime
	return run, true
}

// dataConverter decodes the payloads the API reads itself: the memo of a
// run is written through the worker's converter (with recur's codec), so
// it is read through the client's.
func (s *Server) dataConverter() converter.DataConverter {
	if s.converter == nil {
		return converter.GetDefaultDataConverter()
	}
	return s.converter
}

// nextLink is the request's URL with $skip set to skip.
func nextLink(c *gin.Context, skip int) string {
	q := c.Request.URL.Query()
	q.Set("$skip", strconv.Itoa(skip))
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	if p := c.GetHeader("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	}
	// "$" needs no escaping in a query; Azure's own links spell $skip.
	return scheme + "://" + c.Request.Host + c.Request.URL.Path + "?" + strings.ReplaceAll(q.Encode(), "%24", "$")
}
