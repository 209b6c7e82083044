package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/recurhq/recur/jobs"
)

// patchCollection merges the body into the collection's definition (JSON
// merge patch) and stores the result as PUT would; a missing collection
// is a 404, not a creation.
func (s *Server) patchCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	patch, err := decodePatch[jobs.Collection](c)
	if err != nil {
		return err
	}
	cond, err := preconditions(c)
	if err != nil {
		return err
	}
	coll, err := s.collection(ctx, k)
	if err != nil {
		return err
	}
	if coll, err = jobs.MergePatch(coll, patch); err != nil {
		return err
	}
	if err := coll.Accept(k); err != nil {
		return err
	}
	if err := s.admissions.flush(ctx, s, k); err != nil {
		return err
	}
	var res jobs.PutResult
	if err := s.updateInto(ctx, k.CollectionWorkflowID(), jobs.UpdatePutCollection,
		jobs.PutCollectionRequest{Collection: coll, Preconditions: cond}, &res); err != nil {
		return err
	}
	writeCollection(c, http.StatusOK, res.Collection)
	return nil
}

// enableCollection and disableCollection set the state of a collection
// and of every job in it.
func (s *Server) enableCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	return s.collectionOperation(ctx, c, k, jobs.UpdateCollectionState, jobs.CollectionStateRequest{State: jobs.CollectionEnabled})
}

func (s *Server) disableCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	return s.collectionOperation(ctx, c, k, jobs.UpdateCollectionState, jobs.CollectionStateRequest{State: jobs.CollectionDisabled})
}

// deleteCollection deletes a collection and its jobs. The collection's
// workflow deletes the jobs before the operation ends, 200 when that is
// soon and 202 to poll otherwise.
func (s *Server) deleteCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	cond, err := preconditions(c)
	if err != nil {
		return err
	}
	return s.collectionOperation(ctx, c, k, jobs.UpdateDeleteCollection, jobs.DeleteCollectionRequest{Preconditions: cond})
}

// collectionRoom refuses a PUT that would create a collection in a
// subscription that has Options.MaxCollectionsPerSubscription already; a
// PUT to a collection that exists is an update and always has room. It
// counts the running collection workflows of the subscription in the
// visibility store, as the list reads them, and so counts what the
// store shows: a collection created a moment ago may not show yet
// (concurrent PUTs may overshoot the cap by as many as are in flight),
// and one whose DELETE has not ended its workflow still counts.
func (s *Server) collectionRoom(ctx context.Context, k jobs.Key) error {
	if s.maxCollections <= 0 {
		return nil
	}
	_, err := s.collection(ctx, k)
	if err == nil || !isNotFound(err) {
		return err
	}
	resp, err := s.temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
		Namespace: s.namespace,
		Query:     jobs.ScopeQuery(jobs.KindCollection, jobs.Key{Subscription: k.Subscription}, running),
	})
	if err != nil {
		return fmt.Errorf("count the subscription's job collections: %w", err)
	}
	if n := resp.GetCount(); n >= int64(s.maxCollections) {
		return &jobs.Error{Code: jobs.CodeQuotaExceeded, Message: fmt.Sprintf(
			"subscription %s has %d job collections, the most this server allows in one subscription (%d): delete one, or ask the operator to raise --max-collections-per-subscription",
			k.Subscription, n, s.maxCollections)}
	}
	return nil
}
