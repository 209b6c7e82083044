package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/recurhq/recur/jobs"
)

// History paging. Azure allows at most 100 rows a page.
const (
	maxHistoryTop = 100
	// maxHistoryRuns bounds the workflow runs one history request reads
	// back along a job's continue-as-new chain: at 100 occurrences a run,
	// more than the 60 days of an every-minute job.
	maxHistoryRuns = 1000
	// historyEventPage is the events of a page of a run's history: the
	// server's most (primitives.GetHistoryMaxPageSize), which it logs a
	// warning for exceeding.
	historyEventPage   = 256
	historyType        = "Microsoft.Scheduler/jobCollections/jobs/history"
	codeInvalidFilter  = "InvalidFilter"
	codeInvalidQuery   = "InvalidQueryParameterValue"
	historyRowIDLayout = "20060102T150405.999999999"
)

// historyStatuses are the values of $filter=status eq '...'.
var historyStatuses = []string{string(jobs.ExecutionCompleted), string(jobs.ExecutionFailed), string(jobs.ExecutionPostponed)}

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

// listHistory answers GET .../jobs/{jobName}/history: the rows of the
// job's occurrences, newest first, read from the job workflow's own
// history (jobs.MemoRows), so that it needs no worker. An occurrence's
// rows stay together, the error action's before the main action's since
// it ran later. $filter selects occurrences by their outcome, the status
// of their main action's row: one whose main action failed and whose
// error action completed matches status eq 'Failed' with both its rows.
func (s *Server) listHistory(ctx context.Context, c *gin.Context, k jobs.Key) error {
	p, err := parseHistoryParams(c)
	if err != nil {
		return err
	}
	if _, err := s.job(ctx, k); err != nil {
		return err
	}
	// The run that read found running is the current one (runs.go).
	run, _ := s.runs.get(k.JobWorkflowID())
	rows, err := s.historyRows(ctx, k, run, p.status, p.skip+p.top+1)
	if err != nil {
		return err
	}
	list := historyList{Value: []historyEntry{}}
	for _, row := range pageOf(rows, p.skip, p.top) {
		list.Value = append(list.Value, newHistoryEntry(k, row))
	}
	if len(rows) > p.skip+p.top {
		list.NextLink = nextLink(c, p.skip+p.top)
	}
	c.JSON(http.StatusOK, list)
	return nil
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

// maxSkip is the largest $skip of a list: far past the longest list
// (200,000 collections of a subscription, a job's history of 1000 runs),
// and small enough that skip+top and the sizes computed from it never
// overflow an int.
const maxSkip = 1_000_000_000

// parsePage parses $top (1 to maxTop, maxTop when absent) and $skip (0 to
// maxSkip, 0 when absent).
func parsePage(c *gin.Context, maxTop int) (top, skip int, err error) {
	top = maxTop
	if v, ok := c.GetQuery("$top"); ok {
		top, err = strconv.Atoi(v)
		if err != nil || top < 1 || top > maxTop {
			return 0, 0, &apiError{status: http.StatusBadRequest, code: codeInvalidQuery, target: "$top",
				message: fmt.Sprintf("$top %q must be an integer from 1 to %d", clipValue(v), maxTop)}
		}
	}
	if v, ok := c.GetQuery("$skip"); ok {
		skip, err = strconv.Atoi(v)
		if err != nil || skip < 0 || skip > maxSkip {
			return 0, 0, &apiError{status: http.StatusBadRequest, code: codeInvalidQuery, target: "$skip",
				message: fmt.Sprintf("$skip %q must be an integer from 0 to %d", clipValue(v), maxSkip)}
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
			clipValue(raw), field, strings.Join(values, ", "))}
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

// historyRows returns the job's history rows of the given outcome (""
// for any), newest first, at least want of them when there are: it reads
// the job workflow's runs in reverse, from the running one (runID, or ""
// for the current one) back along the continue-as-new chain, at most
// maxHistoryRuns of them.
func (s *Server) historyRows(ctx context.Context, k jobs.Key, runID, status string, want int) ([]jobs.HistoryRow, error) {
	var rows []jobs.HistoryRow
	for range maxHistoryRuns {
		previous, err := s.readRunRows(ctx, k.JobWorkflowID(), runID, func(upserted []jobs.HistoryRow) bool {
			rows = append(rows, newestFirst(upserted, status)...)
			return len(rows) < want
		})
		if err != nil {
			return nil, fmt.Errorf("read the job's history: %w", err)
		}
		if len(rows) >= want || previous == "" {
			break
		}
		runID = previous
	}
	return rows, nil
}

// readRunRows reads one run of the job workflow from its last event back
// and calls visit with the rows of each upsert of jobs.MemoRows, until
// visit returns false. It returns the run it continued from, "" for the
// first of its chain or when visit stopped before the run's first event.
// A run that retention already removed has no rows.
func (s *Server) readRunRows(ctx context.Context, workflowID, runID string, visit func([]jobs.HistoryRow) bool) (previous string, err error) {
	var token []byte
	for {
		var resp *workflowservice.GetWorkflowExecutionHistoryReverseResponse
		err := retryingTransient(ctx, func() (err error) {
			resp, err = s.temporal.WorkflowService().GetWorkflowExecutionHistoryReverse(ctx, &workflowservice.GetWorkflowExecutionHistoryReverseRequest{
				Namespace:       s.namespace,
				Execution:       &commonpb.WorkflowExecution{WorkflowId: workflowID, RunId: runID},
				MaximumPageSize: historyEventPage,
				NextPageToken:   token,
			})
			return err
		})
		if workflowMissing(err) && runID != "" {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		for _, e := range resp.GetHistory().GetEvents() {
			if started := e.GetWorkflowExecutionStartedEventAttributes(); started != nil {
				return started.GetContinuedExecutionRunId(), nil
			}
			p, ok := e.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()[jobs.MemoRows]
			if !ok {
				continue
			}
			var rows []jobs.HistoryRow
			if err := s.dataConverter().FromPayload(p, &rows); err != nil {
				// One unreadable upsert never hides the rest of the history.
				s.log.WarnContext(ctx, "skip unreadable history rows", "workflowID", workflowID, "event", e.GetEventId(), "error", err)
				continue
			}
			if !visit(rows) {
				return "", nil
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return "", nil
		}
	}
}

// newestFirst returns the rows of one upsert, in the order they were
// written (each occurrence's main action row, then its error action's),
// newest first, keeping only the occurrences whose main action has the
// given status ("" for any). An occurrence's rows stay together.
func newestFirst(rows []jobs.HistoryRow, status string) []jobs.HistoryRow {
	var out []jobs.HistoryRow
	for end := len(rows); end > 0; {
		start := end - 1
		for start > 0 && rows[start].ActionName != jobs.MainAction {
			start--
		}
		if status == "" || string(rows[start].Status) == status {
			out = append(out, rows[start:end]...)
			slices.Reverse(out[len(out)-(end-start):])
		}
		end = start
	}
	return out
}

// dataConverter decodes the payloads the API reads itself: the memos of
// the workflows are written through the worker's converter (with recur's
// codec), so they are read through the client's.
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
	return link(c, q)
}

// link is the request's URL with the query q.
func link(c *gin.Context, q url.Values) string {
	// "$" needs no escaping in a query; Azure's own links spell $skip.
	return baseURL(c) + c.Request.URL.Path + "?" + strings.ReplaceAll(q.Encode(), "%24", "$")
}

// resumeLink is the request's URL that resumes a list after the name
// given: $skiptoken set to it, $skip gone (it counted before this page).
func resumeLink(c *gin.Context, after string) string {
	q := c.Request.URL.Query()
	q.Del("$skip")
	q.Set("$skiptoken", after)
	return link(c, q)
}

// pageOf returns all[skip:skip+top], or none when skip is past the end.
func pageOf[T any](all []T, skip, top int) []T {
	if skip >= len(all) {
		return nil
	}
	return all[skip:min(skip+top, len(all))]
}
