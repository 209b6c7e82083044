package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/recurhq/recur/jobs"
)

// listJobsAcross answers GET /recur/v1/subscriptions/{s}/jobs and
// .../resourceGroups/{rg}/jobs (recur's extension): the jobs of every
// collection of a subscription, or of a resource group, that its $filter
// selects (jobfilter.go), sorted by resource group, collection and name,
// a page of them with a nextLink that resumes after the page's last job.
//
// Azure lists jobs by collection only; the unhealthy jobs of a
// subscription are one list here. No name list narrows it, as a
// collection's memo narrows a collection's: it reads every job the
// filter's search attributes select (all of the scope's for a filter
// without one) and sorts them, as a list of collections does. The SQL
// visibility stores take no ORDER BY, and a range of workflow IDs
// compares as the database's collation does, which need not be Go's.
func (s *Server) listJobsAcross(ctx context.Context, c *gin.Context, scope jobs.Key) error {
	top, skip, err := parsePage(c, maxListTop)
	if err != nil {
		return err
	}
	filter, err := parseJobFilter(c.Query("$filter"), time.Now())
	if err != nil {
		return err
	}
	after, err := parseAcrossToken(c.Query("$skiptoken"), scope)
	if err != nil {
		return err
	}
	found, err := s.jobsAcross(ctx, scope, filter, after)
	if err != nil {
		return err
	}
	list := jobList{Value: []jobs.Job{}}
	var last jobs.Key
	for _, f := range found {
		var view jobs.JobView
		switch err := s.jobMemo(f.memo, &view); {
		case errors.Is(err, errNoView):
			continue
		case err != nil:
			return fmt.Errorf("the public view of job %s: %w", f.key.JobWorkflowID(), err)
		case view.Deleted || !filter.keep(view):
			continue
		case skip > 0:
			skip--
			continue
		case len(list.Value) == top:
			list.NextLink = resumeLink(c, acrossToken(last))
			c.JSON(http.StatusOK, list)
			return nil
		}
		list.Value = append(list.Value, view.Job.Public())
		last = f.key
	}
	c.JSON(http.StatusOK, list)
	return nil
}

// listedJob is a job a list across collections found: its key and memo.
type listedJob struct {
	key  jobs.Key
	memo *commonpb.Memo
}

// jobsAcross returns the running jobs of the scope that the filter's
// visibility conditions select, after the job after (when set), sorted by
// compareKeys.
func (s *Server) jobsAcross(ctx context.Context, scope jobs.Key, filter jobFilter, after *jobs.Key) ([]listedJob, error) {
	seen := map[string]bool{}
	var found []listedJob
	query := jobs.ScopeQuery(jobs.KindJob, scope, append([]string{running}, filter.conditions()...)...)
	err := s.listWorkflows(ctx, query, func(e *workflowpb.WorkflowExecutionInfo) bool {
		id := e.GetExecution().GetWorkflowId()
		// The newest run comes first when a continue-as-new shows two.
		if seen[id] {
			return true
		}
		seen[id] = true
		k, err := keyOf(e)
		if err != nil {
			s.log.WarnContext(ctx, "skip workflow with unreadable search attributes", "workflowID", id, "error", err)
			return true
		}
		if after == nil || compareKeys(k, *after) > 0 {
			found = append(found, listedJob{k, e.GetMemo()})
		}
		return true
	})
	slices.SortFunc(found, func(a, b listedJob) int { return compareKeys(a.key, b.key) })
	return found, err
}

// compareKeys orders jobs of one subscription by resource group,
// collection and name.
func compareKeys(a, b jobs.Key) int {
	return cmp.Or(strings.Compare(a.ResourceGroup, b.ResourceGroup), strings.Compare(a.Collection, b.Collection),
		strings.Compare(a.Job, b.Job))
}

// acrossToken is the $skiptoken that resumes a list across collections
// after job k: "{resourceGroup}/{collection}/{job}".
func acrossToken(k jobs.Key) string {
	return k.ResourceGroup + "/" + k.Collection + "/" + k.Job
}

// parseAcrossToken reads a $skiptoken of a list across collections; nil
// when there is none.
func parseAcrossToken(token string, scope jobs.Key) (*jobs.Key, error) {
	if token == "" {
		return nil, nil
	}
	parts := strings.Split(token, "/")
	k := jobs.Key{Subscription: scope.Subscription}
	if len(parts) == 3 {
		k.ResourceGroup, k.Collection, k.Job = parts[0], parts[1], parts[2]
	}
	if len(parts) != 3 || k.Validate() != nil {
		return nil, &apiError{status: http.StatusBadRequest, code: codeInvalidQuery, target: "$skiptoken",
			message: fmt.Sprintf("$skiptoken %q does not name a job; use the nextLink of a page", clipValue(token))}
	}
	return &k, nil
}
