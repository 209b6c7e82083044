package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/recurhq/recur/jobs"
)

// History paging. Azure allows at most 100 rows a page.
const (
	maxHistoryTop      = 100
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
	rows, err := s.store.History(ctx, k, p.status, p.skip+p.top+1)
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
