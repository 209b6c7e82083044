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
func (s *Server) patchCollection(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
	defer cancel()
	k, err := key(c)
	var patch json.RawMessage
	if err == nil {
		err = decode(c, &patch)
	}
	var coll jobs.Collection
	if err == nil {
		coll, err = s.collection(ctx, k)
	}
	if err == nil {
		coll, err = merge(coll, patch)
	}
	if err == nil {
		err = coll.Normalize(k)
	}
	var res jobs.PutResult
	if err == nil {
		err = s.updateInto(ctx, k.CollectionWorkflowID(), jobs.UpdatePutCollection,
			jobs.PutCollectionRequest{Collection: coll, Preconditions: preconditions(c)}, &res)
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	writeCollection(c, http.StatusOK, res.Collection)
}

// enableCollection and disableCollection set the state of a collection
// and of every job in it.
func (s *Server) enableCollection(c *gin.Context) {
	s.collectionUpdate(c, jobs.UpdateCollectionState, jobs.CollectionStateRequest{State: jobs.CollectionEnabled})
}

func (s *Server) disableCollection(c *gin.Context) {
	s.collectionUpdate(c, jobs.UpdateCollectionState, jobs.CollectionStateRequest{State: jobs.CollectionDisabled})
}

// deleteCollection deletes a collection and its jobs. The collection's
// workflow deletes the jobs before it answers, so this is a 200, not a
// 202 with an operation to poll.
func (s *Server) deleteCollection(c *gin.Context) {
	s.collectionUpdate(c, jobs.UpdateDeleteCollection, jobs.DeleteCollectionRequest{Preconditions: preconditions(c)})
}

func (s *Server) collectionUpdate(c *gin.Context, name string, arg any) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), RequestTimeout)
	defer cancel()
	k, err := key(c)
	if err == nil {
		_, err = s.update(ctx, k.CollectionWorkflowID(), name, arg)
		err = notFoundAs(err, collectionNamed(k))
	}
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	c.Status(http.StatusOK)
}
