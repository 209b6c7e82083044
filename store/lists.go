package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

// running selects live executions: a deleted job's workflow has ended,
// and a workflow that continued as new leaves a closed run.
const running = "ExecutionStatus = 'Running'"

// Collections returns a page of the collections of the scope (a
// subscription, or a resource group of one): the top after the first
// skip, sorted by name (then resource group), and whether more follow.
func (s *Store) Collections(ctx context.Context, scope jobs.Key, skip, top int) ([]jobs.CollectionView, bool, error) {
	return listViews(ctx, s, jobs.ScopeQuery(jobs.KindCollection, scope, running), s.collectionMemo,
		func(v jobs.CollectionView) bool { return !v.Deleted }, skip, top)
}

// Jobs returns a page of the jobs of k's collection that the filter
// keeps, sorted by name, after the job named after ("" for the first),
// the top after the first skip, and whether more follow. The names come
// from the collection's memo, the views of the page's jobs alone from the
// visibility store: the SQL visibility stores take no ORDER BY, and
// reading every job of the collection to sort them made a page cost its
// whole collection.
func (s *Store) Jobs(ctx context.Context, k jobs.Key, after string, filter JobFilter, skip, top int) ([]jobs.JobView, bool, error) {
	var coll jobs.CollectionView
	err := describeView(ctx, s, k.CollectionWorkflowID(), s.collectionWithJobs, &coll)
	if err := viewFound(err, coll.Deleted, CollectionNamed(k)); err != nil {
		return nil, false, err
	}
	names := s.withClaims(k, coll.Jobs)
	if after != "" {
		i, found := slices.BinarySearch(names, after)
		if found {
			i++
		}
		names = names[i:]
	}
	return s.jobsPage(ctx, k, names, filter, skip, top)
}

// withClaims returns the names of k's collection with those this process
// claims on their way: jobs it created a moment ago, whose names the
// collection's memo does not show yet.
func (s *Store) withClaims(k jobs.Key, names []string) []string {
	if claiming := s.admissions.pendingClaims(k); len(claiming) > 0 {
		names = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(names), claiming...))))
	}
	return names
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
func (s *Store) jobsPage(ctx context.Context, k jobs.Key, names []string, filter JobFilter, skip, top int) (page []jobs.JobView, more bool, err error) {
	for size := min(skip, maxJobsChunk) + top + 1; len(names) > 0; size = min(2*size, maxJobsChunk) {
		chunk := names[:min(size, maxJobsChunk, len(names))]
		names = names[len(chunk):]
		views, err := s.jobViews(ctx, k, chunk, filter)
		if err != nil {
			return nil, false, err
		}
		for _, name := range chunk {
			v, ok := views[name]
			if !ok && !filter.Narrows() || ok && (errors.Is(v.err, errNoView) || v.err == nil && v.view.Deleted) {
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
			case !filter.Keep(v.view):
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
func (s *Store) liveJobView(ctx context.Context, k jobs.Key, name string, filter JobFilter) (v decodedView, ok bool, err error) {
	k.Job = name
	v.view, err = s.JobView(ctx, k)
	var e *jobs.Error
	switch {
	case errors.As(err, &e) && e.Code == jobs.CodeNotFound:
		return v, false, nil
	case err != nil:
		return v, false, fmt.Errorf("the public view of job %s: %w", name, err)
	}
	return v, filter.Keep(v.view), nil
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
func (s *Store) jobViews(ctx context.Context, k jobs.Key, names []string, filter JobFilter) (map[string]decodedView, error) {
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
func jobsQuery(k jobs.Key, names []string, filter JobFilter) string {
	k.Job = names[0]
	first := k.JobWorkflowID()
	k.Job = names[len(names)-1]
	conds := append([]string{"WorkflowId BETWEEN " + jobs.Quote(first) + " AND " + jobs.Quote(k.JobWorkflowID()), running}, filter.Conditions()...)
	return strings.Join(conds, " AND ")
}

// listViews returns a page of the public views of the collections the
// visibility query finds, decoded from their memos: the top after the
// first skip, left out those keep says not to and those with none yet
// (never defined), and whether more follow. They are sorted by name,
// resource group and subscription. The SQL visibility stores reject ORDER
// BY, so every match is read and sorted here, by the keys in its search
// attributes; only the memos up to the page's end are decoded.
func listViews[V any](ctx context.Context, s *Store, query string, decode func(*commonpb.Memo, *V) error, keep func(V) bool, skip, top int) (page []V, more bool, err error) {
	type listed struct {
		key  jobs.Key
		id   string
		memo *commonpb.Memo
	}
	var found []listed
	err = s.eachListed(ctx, query, func(k jobs.Key, e *workflowpb.WorkflowExecutionInfo) {
		found = append(found, listed{k, e.GetExecution().GetWorkflowId(), e.GetMemo()})
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
func (s *Store) listWorkflows(ctx context.Context, query string, visit func(*workflowpb.WorkflowExecutionInfo) bool) error {
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
