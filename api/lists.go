package api

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

const (
	// maxListTop is the largest page of collections or jobs, and the page
	// size when $top is absent.
	maxListTop = 100
	// listConcurrency bounds the queries one list request runs at a time.
	listConcurrency = 8
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
func (s *Server) listCollections(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
	defer cancel()
	scope, err := listScope(c)
	var top, skip int
	if err == nil {
		top, skip, err = parsePage(c, maxListTop)
	}
	var keys []jobs.Key
	if err == nil {
		keys, err = s.listKeys(ctx, scopeQuery(jobs.KindCollection, scope, running))
	}
	list := collectionList{Value: []jobs.Collection{}}
	if err == nil {
		list.Value, err = queryEach(ctx, pageOf(keys, skip, top), s.collection)
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	if len(keys) > skip+top {
		list.NextLink = nextLink(c, skip+top)
	}
	for i := range list.Value {
		list.Value[i] = list.Value[i].Public()
	}
	c.JSON(http.StatusOK, list)
}

// listJobs answers GET .../jobCollections/{c}/jobs: the collection's jobs
// sorted by name, optionally of one state, a page of them with a
// nextLink. The collection's workflow holds its jobs' names, sorted: a
// list of any state pages through them, and only a list of one state
// asks the visibility store, which must read every job of the collection
// to sort them (at 1000 jobs, most of a page's time under load).
func (s *Server) listJobs(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
	defer cancel()
	k, err := key(c)
	var top, skip int
	if err == nil {
		top, skip, err = parsePage(c, maxListTop)
	}
	var state string
	if err == nil {
		state, err = parseEqFilter(c.Query("$filter"), "state", jobStates, true)
	}
	var view jobs.CollectionView
	if err == nil {
		view, err = s.collectionView(ctx, k)
	}
	var keys []jobs.Key
	switch {
	case err == nil && state == "":
		keys = make([]jobs.Key, len(view.Jobs))
		for i, name := range view.Jobs {
			keys[i] = k.CollectionKey()
			keys[i].Job = name
		}
	case err == nil:
		keys, err = s.listKeys(ctx, jobsQuery(k, state))
	}
	list := jobList{Value: []jobs.Job{}}
	if err == nil {
		list.Value, err = queryEach(ctx, pageOf(keys, skip, top), s.job)
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	if len(keys) > skip+top {
		list.NextLink = nextLink(c, skip+top)
	}
	for i := range list.Value {
		list.Value[i] = list.Value[i].Public()
	}
	c.JSON(http.StatusOK, list)
}

// listScope is the subscription and, when the path has one, the resource
// group a collection list covers.
func listScope(c *gin.Context) (jobs.Key, error) {
	scope := jobs.Key{Subscription: c.Param("subscriptionId"), ResourceGroup: c.Param("resourceGroupName")}
	// Key.Validate wants a collection and a resource group; stand-ins
	// that are valid names let it check the parts the path has.
	check := scope
	check.Collection = "list"
	if check.ResourceGroup == "" {
		check.ResourceGroup = "list"
	}
	return scope, check.Validate()
}

// jobsQuery is the visibility query for the live jobs of k's collection,
// of one state or of any.
func jobsQuery(k jobs.Key, state string) string {
	extra := []string{running}
	if state != "" {
		extra = append(extra, jobs.AttrState.GetName()+" = "+quote(state))
	}
	return scopeQuery(jobs.KindJob, k.CollectionKey(), extra...)
}

// collection returns the collection k names, or a NotFound error when
// there is none or it was never defined.
func (s *Server) collection(ctx context.Context, k jobs.Key) (jobs.Collection, error) {
	view, err := s.collectionView(ctx, k)
	return view.Collection, err
}

// collectionView returns the collection k names and its jobs' names.
func (s *Server) collectionView(ctx context.Context, k jobs.Key) (jobs.CollectionView, error) {
	var view jobs.CollectionView
	err := s.query(ctx, k.CollectionWorkflowID(), jobs.QueryCollection, &view)
	return view, notFoundAs(err, "job collection "+k.Collection)
}

// listKeys returns the keys of the workflows the query finds, sorted by
// collection, job, resource group and subscription: by name, whether they
// are collections or the jobs of one. The SQL visibility stores reject
// ORDER BY, so every match is read and sorted here.
func (s *Server) listKeys(ctx context.Context, query string) ([]jobs.Key, error) {
	seen := map[string]bool{}
	var keys []jobs.Key
	err := s.listWorkflows(ctx, query, func(e *workflowpb.WorkflowExecutionInfo) bool {
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
		keys = append(keys, k)
		return true
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(keys, func(a, b jobs.Key) int {
		return cmp.Or(strings.Compare(a.Collection, b.Collection), strings.Compare(a.Job, b.Job),
			strings.Compare(a.ResourceGroup, b.ResourceGroup), strings.Compare(a.Subscription, b.Subscription))
	})
	return keys, nil
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

// pageOf returns keys[skip:skip+top], or none when skip is past the end.
func pageOf(keys []jobs.Key, skip, top int) []jobs.Key {
	if skip >= len(keys) {
		return nil
	}
	return keys[skip:min(skip+top, len(keys))]
}

// queryEach runs get for every key, listConcurrency at a time, and
// returns the results in the keys' order. Resources get reports as not
// found (deleted, or never defined, since visibility last saw them) are
// left out; any other error fails the whole list.
func queryEach[T any](ctx context.Context, keys []jobs.Key, get func(context.Context, jobs.Key) (T, error)) ([]T, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		results = make([]T, len(keys))
		found   = make([]bool, len(keys))
		sem     = make(chan struct{}, listConcurrency)
		wg      sync.WaitGroup
		mu      sync.Mutex
		failed  error // the first failure; the ones it cancels come later
	)
	for i, k := range keys {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			v, err := get(ctx, k)
			switch {
			case err == nil:
				results[i], found[i] = v, true
			case !isNotFound(err):
				mu.Lock()
				if failed == nil {
					failed = err
				}
				mu.Unlock()
				cancel()
			}
		})
	}
	wg.Wait()
	if failed != nil {
		return nil, failed
	}
	out := make([]T, 0, len(keys))
	for i, v := range results {
		if found[i] {
			out = append(out, v)
		}
	}
	return out, nil
}

// isNotFound reports whether err says the resource does not exist.
func isNotFound(err error) bool {
	var (
		jobErr   *jobs.Error
		notFound *serviceerror.NotFound
	)
	if e, ok := jobs.FromApplicationError(err); ok {
		jobErr = e
	}
	return (jobErr != nil || errors.As(err, &jobErr)) && jobErr.Code == jobs.CodeNotFound ||
		errors.As(err, &notFound)
}
