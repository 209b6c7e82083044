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

	"github.com/recurhq/recur/jobs"
)

// JobsAcross returns a page of the jobs of every collection of the scope
// (a subscription, or a resource group of one) that the filter keeps,
// after the job after (when set): the top after the first skip, sorted by
// resource group, collection and name, the key of the page's last job,
// and whether more follow.
//
// A filter whose conditions narrow the visibility query (a state, a
// health condition) selects few jobs: they are read and sorted here
// (matching). Any other list reads its collections in order and each
// one's jobs as a list of that collection does (byCollection), so that a
// page costs the collections of the scope and a page of jobs, not every
// job of the scope.
func (s *Store) JobsAcross(ctx context.Context, scope jobs.Key, filter JobFilter, after *jobs.Key, skip, top int) (page []jobs.JobView, last jobs.Key, more bool, err error) {
	if filter.Narrows() {
		return s.matchingAcross(ctx, scope, filter, after, skip, top)
	}
	return s.byCollection(ctx, scope, filter, after, skip, top)
}

// byCollection is JobsAcross for a filter that does not narrow the
// visibility query: the scope's collections in order, the page's jobs
// read from each in turn by the names in its memo (Jobs), until the page
// and one more job are found.
func (s *Store) byCollection(ctx context.Context, scope jobs.Key, filter JobFilter, after *jobs.Key, skip, top int) (page []jobs.JobView, last jobs.Key, more bool, err error) {
	colls, err := s.collectionsAcross(ctx, scope)
	if err != nil {
		return nil, last, false, err
	}
	var found []jobs.JobView
	for _, k := range colls {
		from := ""
		if after != nil {
			switch c := compareKeys(k, after.CollectionKey()); {
			case c < 0:
				continue
			case c == 0:
				from = after.Job
			}
		}
		views, _, err := s.Jobs(ctx, k, from, filter, 0, skip+top+1-len(found))
		var e *jobs.Error
		if errors.As(err, &e) && e.Code == jobs.CodeNotFound {
			continue // deleted since the list of collections
		}
		if err != nil {
			return nil, last, false, err
		}
		if found = append(found, views...); len(found) > skip+top {
			break
		}
	}
	found = found[min(skip, len(found)):]
	if more = len(found) > top; more {
		found = found[:top]
	}
	if len(found) > 0 {
		last = keyOfView(scope, found[len(found)-1])
	}
	return found, last, more, nil
}

// collectionsAcross returns the keys of the scope's running collections,
// sorted by compareKeys.
func (s *Store) collectionsAcross(ctx context.Context, scope jobs.Key) ([]jobs.Key, error) {
	var keys []jobs.Key
	err := s.eachListed(ctx, jobs.ScopeQuery(jobs.KindCollection, scope, running), func(k jobs.Key, _ *workflowpb.WorkflowExecutionInfo) {
		keys = append(keys, k.CollectionKey())
	})
	slices.SortFunc(keys, compareKeys)
	return keys, err
}

// eachListed calls visit with each workflow the visibility query finds and
// its key, the newest run alone of one that continued as new (it comes
// first), and none whose search attributes do not read.
func (s *Store) eachListed(ctx context.Context, query string, visit func(jobs.Key, *workflowpb.WorkflowExecutionInfo)) error {
	seen := map[string]bool{}
	return s.listWorkflows(ctx, query, func(e *workflowpb.WorkflowExecutionInfo) bool {
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
		visit(k, e)
		return true
	})
}

// keyOfView is the key of the job of view, in scope's subscription: its
// name is "{collection}/{job}", its ID names its resource group.
func keyOfView(scope jobs.Key, view jobs.JobView) jobs.Key {
	k := jobs.Key{Subscription: scope.Subscription}
	k.Collection, k.Job, _ = strings.Cut(view.Job.Name, "/")
	_, rest, _ := strings.Cut(view.Job.ID, "/resourceGroups/")
	k.ResourceGroup, _, _ = strings.Cut(rest, "/")
	return k
}

// matchingAcross is JobsAcross for a filter that narrows the visibility
// query: no name list narrows it, as a collection's memo narrows a
// collection's, so it reads every job the filter's search attributes
// select and sorts them, as a list of collections does. The SQL
// visibility stores take no ORDER BY, and a range of workflow IDs
// compares as the database's collation does, which need not be Go's.
func (s *Store) matchingAcross(ctx context.Context, scope jobs.Key, filter JobFilter, after *jobs.Key, skip, top int) (page []jobs.JobView, last jobs.Key, more bool, err error) {
	found, err := s.jobsAcross(ctx, scope, filter, after)
	if err != nil {
		return nil, last, false, err
	}
	for _, f := range found {
		var view jobs.JobView
		switch err := s.jobMemo(f.memo, &view); {
		case errors.Is(err, errNoView):
			continue
		case err != nil:
			return nil, last, false, fmt.Errorf("the public view of job %s: %w", f.key.JobWorkflowID(), err)
		case view.Deleted || !filter.Keep(view):
			continue
		case skip > 0:
			skip--
			continue
		case len(page) == top:
			return page, last, true, nil
		}
		page = append(page, view)
		last = f.key
	}
	return page, last, false, nil
}

// listedJob is a job a list across collections found: its key and memo.
type listedJob struct {
	key  jobs.Key
	memo *commonpb.Memo
}

// jobsAcross returns the running jobs of the scope that the filter's
// visibility conditions select, after the job after (when set), sorted by
// compareKeys.
func (s *Store) jobsAcross(ctx context.Context, scope jobs.Key, filter JobFilter, after *jobs.Key) ([]listedJob, error) {
	var found []listedJob
	query := jobs.ScopeQuery(jobs.KindJob, scope, append([]string{running}, filter.Conditions()...)...)
	err := s.eachListed(ctx, query, func(k jobs.Key, e *workflowpb.WorkflowExecutionInfo) {
		if after == nil || compareKeys(k, *after) > 0 {
			found = append(found, listedJob{k, e.GetMemo()})
		}
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
