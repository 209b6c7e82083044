package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// greet is the workflow a Workflow action starts on a second task queue.
func greet(_ workflow.Context, in map[string]any) (string, error) {
	return "hello " + in["name"].(string), nil
}

// TestWorkflowActionStartsAWorkflowUnderTheOccurrenceID: a job whose
// action is recur's Workflow extension starts a workflow on another task
// queue; the started workflow's ID is the occurrence ID + "/workflow".
func TestWorkflowActionStartsAWorkflowUnderTheOccurrenceID(t *testing.T) {
	s := newStack(t)
	s.temporal.NewWorker("second", func(r worker.Registry) {
		r.RegisterWorkflowWithOptions(greet, workflow.RegisterOptions{Name: "greet"})
	})
	status, _ := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status)
	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/starter", map[string]any{"properties": map[string]any{
		"startTime": start.Format(time.RFC3339),
		"action": map[string]any{"type": "workflow", "workflow": map[string]any{
			"workflowType": "greet", "taskQueue": "second", "input": map[string]any{"name": "recur"}}},
	}})
	require.Equal(t, http.StatusCreated, status, body)

	id := "job:sub1/rg1/coll1/starter@" + start.Format(time.RFC3339) + "/workflow"
	c := s.temporal.GetDefaultClient()
	var greeting string
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return c.GetWorkflow(ctx, id, "").Get(ctx, &greeting) == nil
	}, 30*time.Second, 250*time.Millisecond, "the workflow %s never completed", id)
	require.Equal(t, "hello recur", greeting)
	require.Eventually(t, func() bool {
		_, job := s.do(t, http.MethodGet, collectionPath+"/jobs/starter", nil)
		return path(job, "properties", "status", "executionCount") == float64(1) && path(job, "properties", "state") == "completed"
	}, 20*time.Second, 250*time.Millisecond)
}
