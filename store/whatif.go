package store

import (
	"context"
	"slices"
	"time"

	"github.com/recurhq/recur/jobs"
)

// WouldAdmit checks job, accepted at created, against the collection of
// k as a PUT's admission would (collectionstate's refusal), without
// asking the collection's workflow: that the collection exists, that the
// job's occurrences come no closer than its maxRecurrence allows and, for
// a new job (creating), that it has room for one more. It reads the
// collection's memo and returns how many jobs the collection holds there,
// with the names this process claims on their way, so that a client that
// adds many jobs at once (recur import) can check its quota for them all.
// A slot leased to a PUT in flight is not counted: the admission waits
// for it to be claimed or given back.
func (s *Store) WouldAdmit(ctx context.Context, k jobs.Key, job jobs.Job, created time.Time, creating bool) (held int, err error) {
	var coll jobs.CollectionView
	err = describeView(ctx, s, k.CollectionWorkflowID(), s.collectionWithJobs, &coll)
	if err := viewFound(err, coll.Deleted, CollectionNamed(k)); err != nil {
		if IsNotFound(err) {
			return 0, jobs.CollectionMissing(k.Collection)
		}
		return 0, err
	}
	names := s.withClaims(k, coll.Jobs)
	held = len(names)
	if err := coll.Collection.Terms(0).Check(jobs.ShortestGap(job, created), k.Collection); err != nil {
		return held, err
	}
	if _, holds := slices.BinarySearch(names, k.Job); creating && !holds {
		if limit := coll.Collection.MaxJobs(); limit > 0 && held >= limit {
			return held, jobs.CollectionFull(k.Collection, limit)
		}
	}
	return held, nil
}
