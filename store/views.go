package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/recurhq/recur/jobs"
)

// Reads answer from what Temporal persisted, never from a query: the job
// and collection workflows keep their public views in their memos
// (jobs.MemoJob and jobs.MemoStatus, jobs.MemoCollection), which describe
// returns as the
// workflow's last completed task left them and the visibility store
// returns with every listed workflow. With every worker down, reads still
// answer with the last written state.

// errNoView is describeView's answer for a workflow that is not running
// or keeps no view under the key: deleted, or never defined.
var errNoView = errors.New("no public view")

// describeView decodes the public view of the running workflow into view
// with decode (jobMemo, collectionMemo).
func describeView[V any](ctx context.Context, s *Store, workflowID string, decode func(*commonpb.Memo, *V) error, view *V) error {
	info, err := s.describe(ctx, workflowID)
	if err != nil {
		return err
	}
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return errNoView
	}
	return decode(info.GetMemo(), view)
}

// jobMemo decodes a job's public view: its definition and state under
// jobs.MemoJob, its status under jobs.MemoStatus, which each occurrence
// writes alone.
func (s *Store) jobMemo(m *commonpb.Memo, view *jobs.JobView) error {
	return s.jobViewOf(protoMemo{m}, view)
}

// jobViewOf is jobMemo of a memo read either way.
func (s *Store) jobViewOf(m memoPayloads, view *jobs.JobView) error {
	if err := memoView(s, m, jobs.MemoJob, view); err != nil {
		return err
	}
	var status jobs.StatusView
	if err := memoView(s, m, jobs.MemoStatus, &status); err != nil && !errors.Is(err, errNoView) {
		return err
	}
	*view = view.WithStatus(status)
	return nil
}

// collectionMemo decodes a collection's public view.
func (s *Store) collectionMemo(m *commonpb.Memo, view *jobs.CollectionView) error {
	return memoView(s, protoMemo{m}, jobs.MemoCollection, view)
}

// collectionWithJobs decodes a collection's public view and its jobs'
// names, sorted, from the memo keys the collection spreads them over
// (jobs.JobNamesKey).
func (s *Store) collectionWithJobs(m *commonpb.Memo, view *jobs.CollectionView) error {
	if err := s.collectionMemo(m, view); err != nil {
		return err
	}
	for key, p := range m.GetFields() {
		if !strings.HasPrefix(key, jobs.MemoJobNames) {
			continue
		}
		var names []string
		if err := decodeMemo(s, p, &names); err != nil {
			return fmt.Errorf("the names of the jobs under %s: %w", key, err)
		}
		view.Jobs = append(view.Jobs, names...)
	}
	slices.Sort(view.Jobs)
	return nil
}

// memoView decodes the memo's key into view (decodeCached): with payload
// encryption the memo is encrypted.
func memoView[V any](s *Store, m memoPayloads, key string, view *V) error {
	cacheKey, load, ok := m.payload(key)
	if !ok {
		return errNoView
	}
	return decodeCached(s, cacheKey, load, view)
}

// Job returns the job k names as its workflow last wrote it, secrets
// redacted, or a NotFound error when there is none or it was deleted.
func (s *Store) Job(ctx context.Context, k jobs.Key) (jobs.Job, error) {
	view, err := s.JobView(ctx, k)
	return view.Job, err
}

// JobView is Job with what its workflow keeps to plan its runs.
func (s *Store) JobView(ctx context.Context, k jobs.Key) (jobs.JobView, error) {
	var view jobs.JobView
	err := describeView(ctx, s, k.JobWorkflowID(), s.jobMemo, &view)
	return view, viewFound(err, view.Deleted, JobNamed(k))
}

// Collection returns the collection k names, or a NotFound error when
// there is none, it was deleted or never defined.
func (s *Store) Collection(ctx context.Context, k jobs.Key) (jobs.Collection, error) {
	var view jobs.CollectionView
	err := describeView(ctx, s, k.CollectionWorkflowID(), s.collectionMemo, &view)
	return view.Collection, viewFound(err, view.Deleted, CollectionNamed(k))
}
