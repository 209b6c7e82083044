package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/jobs"
)

// greet is the workflow a Workflow action starts on a second task queue.
func greet(_ workflow.Context, in map[string]any) (string, error) {
	return "hello " + in["name"].(string), nil
}

// TestWorkflowActionStartsAWorkflowUnderTheOccurrenceID: a job whose
// action is recur's Workflow extension starts a workflow on another task
// queue; the started workflow's ID is the occurrence ID + "/workflow".
func TestWorkflowActionStartsAWorkflowUnderTheOccurrenceID(t *testing.T) {
	var allowed jobs.WorkflowTargets
	require.NoError(t, allowed.Add("temporaltest-*/second"))
	s := newStackWith(t, recurtest.Config{WorkflowTargets: allowed})
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

// attack is the Workflow action a hostile tenant sent: it deletes a
// namespace (the probe's deleted recur's own, and with it every tenant's
// jobs). The namespace named here does not exist, so that the test's
// server survives the old code it must fail on.
var attack = map[string]any{"namespace": "temporal-system", "taskQueue": "default-worker-tq",
	"workflowType": "temporal-sys-delete-namespace-workflow", "input": map[string]any{"Namespace": "no-such-namespace"}}

// TestWorkflowActionNeverReachesTemporalsSystem: even with every
// namespace and task queue allowed (--workflow-action-allow '*/*'), a job
// aimed at Temporal's system namespace or its system workflows is refused
// at PUT with the field's path, as main action and as error action, and
// nothing is stored. A job that reached its workflow all the same (stored
// before the check, or written past the API) is refused by the activity:
// its run fails, naming why, and no workflow starts in temporal-system.
func TestWorkflowActionNeverReachesTemporalsSystem(t *testing.T) {
	var everything jobs.WorkflowTargets
	require.NoError(t, everything.Add("*/*"))
	s := newStackWith(t, recurtest.Config{WorkflowTargets: everything})
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)

	hook := map[string]any{"type": "Http", "request": map[string]any{"uri": "http://127.0.0.1:9/hook", "method": "POST"}}
	batcher := map[string]any{"taskQueue": "temporal-sys-per-ns-tq", "workflowType": "temporal-sys-batch-workflow"}
	for name, c := range map[string]struct {
		action map[string]any
		target string
	}{
		"delete namespace":   {map[string]any{"type": "Workflow", "workflow": attack}, "properties.action.workflow.namespace"},
		"as error action":    {merged(hook, map[string]any{"errorAction": map[string]any{"type": "Workflow", "workflow": attack}}), "properties.action.errorAction.workflow.namespace"},
		"batcher in our own": {map[string]any{"type": "Workflow", "workflow": batcher}, "properties.action.workflow.workflowType"},
	} {
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/evil", map[string]any{"properties": map[string]any{"action": c.action}})
		require.Equal(t, http.StatusBadRequest, status, "%s: %v", name, body)
		require.Equal(t, c.target, path(body, "error", "target"), name)
		status, _ = s.do(t, http.MethodGet, collectionPath+"/jobs/evil", nil)
		require.Equal(t, http.StatusNotFound, status, "%s: nothing stored", name)
	}

	// A job the API took, redefined past the API.
	later := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/stored", map[string]any{"properties": map[string]any{
		"startTime": later.Format(time.RFC3339), "action": hook}})
	require.Equal(t, http.StatusCreated, status, body)
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "stored"}
	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	var evil jobs.Job
	require.NoError(t, json.Unmarshal(fmt.Appendf(nil, `{"properties":{"startTime":%q,"action":{"type":"Workflow","workflow":%s}}}`,
		start.Format(time.RFC3339), mustJSON(t, attack)), &evil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	handle, err := s.temporal.GetDefaultClient().UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: k.JobWorkflowID(), UpdateName: jobs.UpdatePutJob, Args: []any{jobs.PutJobRequest{Job: evil}},
		WaitForStage: client.WorkflowUpdateStageCompleted})
	require.NoError(t, err)
	require.NoError(t, handle.Get(ctx, nil), "the job workflow takes what the API would refuse: the activity is the last line")

	row := mainActionRow(t, s, "stored")
	require.Equal(t, "Failed", row["status"], "row: %v", row)
	require.Contains(t, row["message"], "namespace temporal-system is Temporal's own")
	system := s.temporal.NewClientWithOptions(client.Options{Namespace: "temporal-system"})
	_, err = system.DescribeWorkflowExecution(ctx, activities.WorkflowActionID(jobs.OccurrenceID(k.JobWorkflowID(), start), jobs.MainAction), "")
	var notFound *serviceerror.NotFound
	require.ErrorAs(t, err, &notFound, "no workflow started in temporal-system")
}

// TestWorkflowActionReachesOnlyWhatTheOperatorAllows: with
// --workflow-action-allow naming the stack's namespace and task queue second, another task queue or namespace
// is refused at PUT, naming the field; none is allowed by default.
func TestWorkflowActionReachesOnlyWhatTheOperatorAllows(t *testing.T) {
	var allowed jobs.WorkflowTargets
	require.NoError(t, allowed.Add("temporaltest-*/second"))
	for name, c := range map[string]struct {
		targets          jobs.WorkflowTargets
		namespace, queue string
		target           string
	}{
		"another task queue":      {allowed, "", "third", "properties.action.workflow.taskQueue"},
		"another namespace":       {allowed, "billing", "second", "properties.action.workflow.namespace"},
		"none allowed by default": {jobs.WorkflowTargets{}, "", "second", "properties.action.workflow.namespace"},
	} {
		s := newStackWith(t, recurtest.Config{WorkflowTargets: c.targets})
		status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
		require.Equal(t, http.StatusCreated, status, body)
		status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/starter", map[string]any{"properties": map[string]any{
			"action": map[string]any{"type": "Workflow", "workflow": map[string]any{"namespace": c.namespace, "workflowType": "greet", "taskQueue": c.queue}}}})
		require.Equal(t, http.StatusBadRequest, status, "%s: %v", name, body)
		require.Equal(t, c.target, path(body, "error", "target"), name)
	}
}

// merged returns a copy of a with b's entries.
func merged(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return data
}
