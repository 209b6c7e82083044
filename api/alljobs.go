package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/recurhq/recur/jobs"
)

// listJobsAcross answers GET /recur/v1/subscriptions/{s}/jobs and
// .../resourceGroups/{rg}/jobs (recur's extension): the jobs of every
// collection of a subscription, or of a resource group, that its $filter
// selects (jobfilter.go), sorted by resource group, collection and name,
// a page of them with a nextLink that resumes after the page's last job
// (store.JobsAcross). Azure lists jobs by collection only; the unhealthy
// jobs of a subscription are one list here.
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
	page, last, more, err := s.store.JobsAcross(ctx, scope, filter, after, skip, top)
	if err != nil {
		return err
	}
	list := jobList{Value: []jobs.Job{}}
	for _, v := range page {
		list.Value = append(list.Value, v.Job.Public())
	}
	if more {
		list.NextLink = resumeLink(c, acrossToken(last))
	}
	c.JSON(http.StatusOK, list)
	return nil
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
