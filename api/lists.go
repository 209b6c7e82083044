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

// maxListTop is the largest page of collections or jobs, and the page
// size when $top is absent.
const maxListTop = 100

// jobStates are the values of $filter=state eq '...'.
var jobStates = []string{string(jobs.Enabled), string(jobs.Disabled), string(jobs.Completed), string(jobs.Faulted)}

// collectionList is Azure's JobCollectionListResult.
type collectionList struct {
	Value    []jobs.Collection `json:"value"`
	NextLink string            `json:"nextLink,omitempty"`
}

// jobList is Azure's JobListResult.
type jobList struct {
	Value    []jobs.Job `json:"value"`
	NextLink string     `json:"nextLink,omitempty"`
}

// listCollections answers GET .../providers/Microsoft.Scheduler/jobCollections,
// by subscription or by resource group: the collections sorted by name
// (then resource group), a page of them with a nextLink (store.Collections).
// Azure pages this list by nextLink only; $top and $skip are accepted as
// for jobs.
func (s *Server) listCollections(ctx context.Context, c *gin.Context, scope jobs.Key) error {
	top, skip, err := parsePage(c, maxListTop)
	if err != nil {
		return err
	}
	views, more, err := s.store.Collections(ctx, scope, skip, top)
	if err != nil {
		return err
	}
	list := collectionList{Value: []jobs.Collection{}}
	for _, v := range views {
		list.Value = append(list.Value, v.Collection.Public())
	}
	if more {
		list.NextLink = nextLink(c, skip+top)
	}
	c.JSON(http.StatusOK, list)
	return nil
}

// listJobs answers GET .../jobCollections/{c}/jobs: the collection's jobs
// sorted by name, those its $filter selects (a state, recur's health
// conditions: jobfilter.go), a page of them with a nextLink
// (store.Jobs). The nextLink resumes after the page's last name
// ($skiptoken), so that jobs created or deleted between two pages shift
// none of the next.
func (s *Server) listJobs(ctx context.Context, c *gin.Context, k jobs.Key) error {
	top, skip, err := parsePage(c, maxListTop)
	if err != nil {
		return err
	}
	filter, err := parseJobFilter(c.Query("$filter"), time.Now())
	if err != nil {
		return err
	}
	after := c.Query("$skiptoken")
	if after != "" {
		if err := (jobs.Key{Subscription: k.Subscription, ResourceGroup: k.ResourceGroup, Collection: k.Collection, Job: after}).Validate(); err != nil {
			return &apiError{status: http.StatusBadRequest, code: codeInvalidQuery, target: "$skiptoken",
				message: fmt.Sprintf("$skiptoken %q is not a job name; use the nextLink of a page", clipValue(after))}
		}
	}
	page, more, err := s.store.Jobs(ctx, k, after, filter, skip, top)
	if err != nil {
		return err
	}
	list := jobList{Value: []jobs.Job{}}
	for _, v := range page {
		list.Value = append(list.Value, v.Job.Public())
	}
	if more {
		last := page[len(page)-1].Job.Name
		list.NextLink = resumeLink(c, last[strings.LastIndexByte(last, '/')+1:])
	}
	c.JSON(http.StatusOK, list)
	return nil
}
