package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestANotFoundAboutAMissingItemIsCountedApart: a 404 (or a Schedule's
// NotFound) about an item the load deleted and failed to create again is
// its own class in the report, apart from a 404 nothing explains.
func TestANotFoundAboutAMissingItemIsCountedApart(t *testing.T) {
	recur404 := &httpError{status: http.StatusNotFound, msg: "no job"}
	schedule404 := status.Error(codes.NotFound, "no schedule")
	assert.True(t, notFound(recur404))
	assert.True(t, notFound(schedule404))
	assert.False(t, notFound(&httpError{status: http.StatusServiceUnavailable}))
	assert.False(t, notFound(status.Error(codes.Unavailable, "down")))

	r := newRecorder()
	r.add(0, recur404)
	r.add(0, &missingItem{recur404})
	r.add(0, &missingItem{schedule404})
	assert.Equal(t, map[string]int{"404": 1, "not found after its re-creation failed": 2}, r.errs)
}
