package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/recurhq/recur/jobs"
)

// patchCollection merges the body into the collection's definition (JSON
// merge patch) and stores the result as PUT would; a missing collection
// is a 404, not a creation.
func (s *Server) patchCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	var patch json.RawMessage
	if err := decode(c, &patch); err != nil {
		return err
	}
	coll, err := s.collection(ctx, k)
	if err != nil {
		return err
	}
	if coll, err = merge(coll, patch); err != nil {
		return err
	}
	if err := coll.Accept(k); err != nil {
		return err
	}
	var res jobs.PutResult
	if err := s.updateInto(ctx, k.CollectionWorkflowID(), jobs.UpdatePutCollection,
		jobs.PutCollectionRequest{Collection: coll, Preconditions: preconditions(c)}, &res); err != nil {
		return err
	}
	writeCollection(c, http.StatusOK, res.Collection)
	return nil
}

// enableCollection and disableCollection set the state of a collection
// and of every job in it.
func (s *Server) enableCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	return s.collectionUpdate(ctx, c, k, jobs.UpdateCollectionState, jobs.CollectionStateRequest{State: jobs.CollectionEnabled})
}

func (s *Server) disableCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	return s.collectionUpdate(ctx, c, k, jobs.UpdateCollectionState, jobs.CollectionStateRequest{State: jobs.CollectionDisabled})
}

// deleteCollection deletes a collection and its jobs. The collection's
// workflow deletes the jobs before it answers, so this is a 200, not a
// 202 with an operation to poll.
func (s *Server) deleteCollection(ctx context.Context, c *gin.Context, k jobs.Key) error {
	return s.collectionUpdate(ctx, c, k, jobs.UpdateDeleteCollection, jobs.DeleteCollectionRequest{Preconditions: preconditions(c)})
}

// collectionUpdate sends a named update to the collection's workflow.
func (s *Server) collectionUpdate(ctx context.Context, c *gin.Context, k jobs.Key, name string, arg any) error {
	if _, err := s.update(ctx, k.CollectionWorkflowID(), name, arg); err != nil {
		return notFoundAs(err, collectionNamed(k))
	}
	c.Status(http.StatusOK)
	return nil
}
