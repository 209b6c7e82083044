package jobs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// workflowJob is a job whose action starts workflowType on taskQueue in
// namespace.
func workflowJob(namespace, taskQueue string) jobs.Job {
	return jobs.Job{Properties: jobs.Properties{Action: &jobs.Action{ActionSpec: jobs.ActionSpec{
		Type:     jobs.ActionWorkflow,
		Workflow: &jobs.WorkflowStart{Namespace: namespace, WorkflowType: jobs.CollectionWorkflowName, TaskQueue: taskQueue},
	}}}}
}

// TestWorkflowActionMayNotStartRecursOwnWorkflows: recur's workflows take
// the keys they act on from their input, so a job may not start them.
func TestWorkflowActionMayNotStartRecursOwnWorkflows(t *testing.T) {
	for _, q := range []string{jobs.TaskQueue, jobs.RunTaskQueue} {
		e := normalizeError(t, workflowJob("", q))
		require.NotNil(t, e, q)
		require.Equal(t, "properties.action.workflow.taskQueue", e.Target)
		require.Contains(t, e.Message, q)
	}
	require.Nil(t, normalizeError(t, workflowJob("", "theirs")), "any other task queue")
	require.Nil(t, normalizeError(t, workflowJob("other-namespace", jobs.TaskQueue)), "another namespace's queue of that name")
}
