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
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

const (
	// maxListTop is the largest page of collections or jobs, and the page
	// size when $top is absent.
	maxListTop = 100
	// running selects live executions: a deleted job's workflow has
	// ended, and a workflow that continued as new leaves a closed run.
	running = "ExecutionStatus = 'Running'"
)

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
// (then resource group), a page of them with a nextLink. Azure pages this
// list by nextLink only; $top and $skip are accepted as for jobs.
func (s *Server) listCollections(ctx context.Context, c *gin.Context, scope jobs.Key) error {
	top, skip, err := parsePage(c, maxListTop)
	if err != nil {
		return err
	}
	views, more, err := listViews(ctx, s, jobs.ScopeQuery(jobs.KindCollection, scope, running), s.collectionMemo,
		func(v jobs.CollectionView) bool { return !v.Deleted }, skip, top)
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
// conditions: jobfilter.go), a page of them with a nextLink. The names come from the collection's memo, the views of the
// page's jobs alone from the visibility store: the SQL visibility stores
// take no ORDER BY, and reading every job of the collection to sort them
// made a page cost its whole collection. The nextLink resumes after the
// page's last name ($skiptoken), so that jobs created or deleted between
// two pages shift none of the next.
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
	var coll jobs.CollectionView
	err = describeView(ctx, s, k.CollectionWorkflowID(), s.collectionWithJobs, &coll)
	if err := viewFound(err, coll.Deleted, collectionNamed(k)); err != nil {
		return err
	}
	names := coll.Jobs
	if claiming := s.admissions.pendingClaims(k); len(claiming) > 0 {
		// Jobs this process created a moment ago, whose names are on
		// their way to the collection.
		names = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(names), claiming...))))
	}
	if after != "" {
		i, found := slices.BinarySearch(names, after)
		if found {
			i++
		}
		names = names[i:]
	}
	page, more, err := s.jobsPage(ctx, k, names, filter, skip, top)
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

// maxJobsChunk bounds how many jobs one visibility call of a list reads.
const maxJobsChunk = 500

// jobsPage returns the public views of the jobs named, in their order,
// that the filter keeps, after the first skip of them, at most top, and
// whether more follow. A job with no view (never defined) or a deleted
// one is left out. It reads the views from the visibility store by
// workflow ID, a chunk of names at a time: the first chunk as long as
// the page, each next one twice the one before, so that a page of every
// job costs one call and a page of a filter a few. The chunk's size stops
// growing at maxJobsChunk, where doubling it would in the end overflow
// into a negative bound. The page ends at a job it shows, so that the
// next resumes after it however many jobs the filter left out.
func (s *Server) jobsPage(ctx context.Context, k jobs.Key, names []string, filter jobFilter, skip, top int) (page []jobs.JobView, more bool, err error) {
	for size := min(skip, maxJobsChunk) + top + 1; len(names) > 0; size = min(2*size, maxJobsChunk) {
		chunk := names[:min(size, maxJobsChunk, len(names))]
		names = names[len(chunk):]
		views, err := s.jobViews(ctx, k, chunk, filter)
		if err != nil {
			return nil, false, err
		}
		for _, name := range chunk {
			v, ok := views[name]
			if !ok && !filter.narrows() || ok && (errors.Is(v.err, errNoView) || v.err == nil && v.view.Deleted) {
				if v, ok, err = s.liveJobView(ctx, k, name, filter); err != nil {
					return nil, false, err
				}
			}
			if !ok {
				continue
			}
			switch {
			case errors.Is(v.err, errNoView) || v.err == nil && v.view.Deleted:
				continue
			case v.err != nil:
				return nil, false, fmt.Errorf("the public view of job %s: %w", name, v.err)
			case !filter.keep(v.view):
				continue
			case skip > 0:
				skip--
				continue
			case len(page) == top:
				return page, true, nil
			}
			page = append(page, v.view)
		}
	}
	return page, false, nil
}

// liveJobView reads the view of a job its collection lists whose running
// workflow the visibility store shows with no view, a deleted one or not
// at all: the store takes a workflow's start and memo each a moment after
// Temporal (a job created a moment ago shows its run's start without its
// memo, or only the run deleted before it), so the job's workflow says
// itself whether it is defined, as a GET reads it. Such names are few: the
// jobs whose PUT answered a moment ago, or whose admission the collection
// has not given up yet. A job the filter does not keep is left out (ok
// false), as is one not defined. Of a list whose filter narrows the
// visibility query (a state, a health condition), only the names the store
// shows are read so: one it does not show is most likely not in the list,
// and reading each would cost a describe a job.
func (s *Server) liveJobView(ctx context.Context, k jobs.Key, name string, filter jobFilter) (v decodedView, ok bool, err error) {
	k.Job = name
	v.view, err = s.jobView(ctx, k)
	var e *jobs.Error
	switch {
	case errors.As(err, &e) && e.Code == jobs.CodeNotFound:
		return v, false, nil
	case err != nil:
		return v, false, fmt.Errorf("the public view of job %s: %w", name, err)
	}
	return v, filter.keep(v.view), nil
}

// decodedView is a job's public view, or why it could not be decoded.
type decodedView struct {
	view jobs.JobView
	err  error
}

// jobViews returns the public views of the running workflows of the jobs
// named in k's collection that the filter's visibility conditions select,
// by job name. It reads them from the list's bytes as they arrive
// (visitMemos).
func (s *Server) jobViews(ctx context.Context, k jobs.Key, names []string, filter jobFilter) (map[string]decodedView, error) {
	byID := make(map[string]string, len(names))
	for _, name := range names {
		k.Job = name
		byID[k.JobWorkflowID()] = name
	}
	views := make(map[string]decodedView, len(names))
	visit := func(id []byte, memo memoPayloads) {
		name, ok := byID[string(id)]
		// The newest run comes first when a continue-as-new shows two.
		if _, seen := views[name]; !ok || seen {
			return
		}
		var v decodedView
		v.err = s.jobViewOf(memo, &v.view)
		views[name] = v
	}
	err := s.listWorkflows(visitMemos(ctx, visit), jobsQuery(k, names, filter), func(e *workflowpb.WorkflowExecutionInfo) bool {
		// A client without LeanLists unmarshals the executions.
		visit([]byte(e.GetExecution().GetWorkflowId()), protoMemo{e.GetMemo()})
		return true
	})
	return views, err
}

// jobsQuery is the visibility query for the running workflows of the jobs
// named in k's collection that the filter's conditions select; names are
// sorted. It
// gives the range of their workflow IDs rather than each ID: a job's ID
// is its collection's prefix and its name, so the IDs sort as the names
// do and the range holds no other collection's job, while the server's
// parsing of a list of 100 IDs cost a quarter of the page. A job in the
// range that names leave out is the caller's to drop.
func jobsQuery(k jobs.Key, names []string, filter jobFilter) string {
	k.Job = names[0]
	first := k.JobWorkflowID()
	k.Job = names[len(names)-1]
	conds := append([]string{"WorkflowId BETWEEN " + jobs.Quote(first) + " AND " + jobs.Quote(k.JobWorkflowID()), running}, filter.conditions()...)
	return strings.Join(conds, " AND ")
}

// listViews returns a page of the public views of the collections the
// visibility query finds, decoded from their memos: the top after the
// first skip, left out those keep says not to and those with none yet
// (never defined), and whether more follow. They are sorted by name,
// resource group and subscription. The SQL visibility stores reject ORDER
// BY, so every match is read and sorted here, by the keys in its search
// attributes; only the memos up to the page's end are decoded.
func listViews[V any](ctx context.Context, s *Server, query string, decode func(*commonpb.Memo, *V) error, keep func(V) bool, skip, top int) (page []V, more bool, err error) {
	type listed struct {
		key  jobs.Key
		id   string
		memo *commonpb.Memo
	}
	seen := map[string]bool{}
	var found []listed
	err = s.listWorkflows(ctx, query, func(e *workflowpb.WorkflowExecutionInfo) bool {
		id := e.GetExecution().GetWorkflowId()
		if seen[id] {
			return true
		}
		seen[id] = true
		k, err := keyOf(e)
		if err != nil {
			s.log.WarnContext(ctx, "skip workflow with unreadable search attributes", "workflowID", id, "error", err)
			return true
		}
		found = append(found, listed{k, id, e.GetMemo()})
		return true
	})
	if err != nil {
		return nil, false, err
	}
	slices.SortFunc(found, func(a, b listed) int {
		return cmp.Or(strings.Compare(a.key.Collection, b.key.Collection), strings.Compare(a.key.Job, b.key.Job),
			strings.Compare(a.key.ResourceGroup, b.key.ResourceGroup), strings.Compare(a.key.Subscription, b.key.Subscription))
	})
	kept := 0
	for _, f := range found {
		var view V
		switch err := decode(f.memo, &view); {
		case errors.Is(err, errNoView):
			continue
		case err != nil:
			return nil, false, fmt.Errorf("the public view of %s: %w", f.id, err)
		case !keep(view):
			continue
		}
		if kept == skip+top {
			return page, true, nil
		}
		if kept >= skip {
			page = append(page, view)
		}
		kept++
	}
	return page, false, nil
}

// keyOf reads the key of a collection or job workflow from its search
// attributes.
func keyOf(e *workflowpb.WorkflowExecutionInfo) (jobs.Key, error) {
	fields := e.GetSearchAttributes().GetIndexedFields()
	var k jobs.Key
	for _, part := range []struct {
		attr temporal.SearchAttributeKeyKeyword
		into *string
	}{
		{jobs.AttrSubscription, &k.Subscription},
		{jobs.AttrResourceGroup, &k.ResourceGroup},
		{jobs.AttrCollection, &k.Collection},
		{jobs.AttrJob, &k.Job},
	} {
		p, ok := fields[part.attr.GetName()]
		if !ok {
			continue
		}
		if err := converter.GetDefaultDataConverter().FromPayload(p, part.into); err != nil {
			return k, err
		}
	}
	return k, k.Validate()
}

// listPage is the page size of visibility lists: the frontend's default
// maximum.
const listPage = 1000

// listWorkflows calls visit with each execution the visibility query
// finds, page by page, until there are no more or visit returns false.
func (s *Server) listWorkflows(ctx context.Context, query string, visit func(*workflowpb.WorkflowExecutionInfo) bool) error {
	var token []byte
	for {
		resp, err := s.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: s.namespace, PageSize: listPage, NextPageToken: token, Query: query,
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
