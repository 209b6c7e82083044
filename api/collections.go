package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/recurhq/recur/jobs"
)

// patchCollection merges the body into the collection's definition (JSON
// merge patch) and stores the result as PUT would
// (store.RedefineCollection); a missing collection is a 404, not a
// creation.
func (s *Server) patchCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	patch, err := decodePatch[jobs.Collection](c)
	if err != nil {
		return err
	}
	cond, err := preconditions(c)
	if err != nil {
		return err
	}
	coll, err := s.store.Collection(ctx, k)
	if err != nil {
		return err
	}
	if coll, err = jobs.MergePatch(coll, patch); err != nil {
		return err
	}
	if err := coll.Accept(k); err != nil {
		return err
	}
	res, err := s.store.RedefineCollection(ctx, k, coll, cond)
	if err != nil {
		return err
	}
	writeCollection(c, http.StatusOK, res.Collection)
	return nil
}

// enableCollection and disableCollection set the state of a collection
// and of every job in it.
func (s *Server) enableCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	return s.collectionOperation(ctx, c, k, jobs.UpdateCollectionState, jobs.CollectionStateRequest{State: jobs.CollectionEnabled, Deadline: jobs.DeadlineOf(ctx)})
}

func (s *Server) disableCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	return s.collectionOperation(ctx, c, k, jobs.UpdateCollectionState, jobs.CollectionStateRequest{State: jobs.CollectionDisabled, Deadline: jobs.DeadlineOf(ctx)})
}

// deleteCollection deletes a collection and its jobs. The collection's
// workflow deletes the jobs before the operation ends, 200 when that is
// soon and 202 to poll otherwise.
func (s *Server) deleteCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	cond, err := preconditions(c)
	if err != nil {
		return err
	}
	return s.collectionOperation(ctx, c, k, jobs.UpdateDeleteCollection, jobs.DeleteCollectionRequest{Preconditions: cond, Deadline: jobs.DeadlineOf(ctx)})
}
