package jobs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// workflowJob is a job whose action starts workflowType on taskQueue in
// namespace.
func workflowJob(namespace, workflowType, taskQueue string) jobs.Job {
	return jobs.Job{Properties: jobs.Properties{Action: &jobs.Action{ActionSpec: jobs.ActionSpec{
		Type:     jobs.ActionWorkflow,
		Workflow: &jobs.WorkflowStart{Namespace: namespace, WorkflowType: workflowType, TaskQueue: taskQueue},
	}}}}
}

// targets returns WorkflowTargets of list.
func targets(t *testing.T, list string) jobs.WorkflowTargets {
	t.Helper()
	var wt jobs.WorkflowTargets
	require.NoError(t, wt.Add(list))
	return wt
}

// checkError is what wt.CheckJob says of j, in recur's namespace "recur-ns".
func checkError(t *testing.T, wt jobs.WorkflowTargets, j jobs.Job) *jobs.Error {
	t.Helper()
	err := wt.CheckJob(&j, "recur-ns")
	if err == nil {
		return nil
	}
	var e *jobs.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, jobs.CodeInvalidRequest, e.Code)
	return e
}

// TestWorkflowTargetsNeverAllowTheSystem: Temporal's system namespace, its
// system workflows and task queues (which run in every namespace: the
// batcher terminates workflows by query) and recur's own task queues are
// refused whatever the operator allows, in any letter case.
func TestWorkflowTargetsNeverAllowTheSystem(t *testing.T) {
	all := targets(t, "*/*")
	for _, tc := range []struct {
		name                  string
		namespace, typ, queue string
		target                string
	}{
		{"system namespace", "temporal-system", "any", "default-worker-tq", "namespace"},
		{"system namespace in capitals", "Temporal-System", "any", "q", "namespace"},
		{"delete-namespace workflow", "recur-ns", "temporal-sys-delete-namespace-workflow", "q", "workflowType"},
		{"batcher in recur's own namespace", "", "Temporal-Sys-Batch-Workflow", "q", "workflowType"},
		{"per-namespace system queue", "other", "any", "temporal-sys-per-ns-tq", "taskQueue"},
		{"recur's job queue", "", "any", jobs.TaskQueue, "taskQueue"},
		{"another namespace's queue of recur's name", "other", "any", jobs.TaskQueue, "taskQueue"},
		{"recur's job queue in capitals", "", "any", "RECUR", "taskQueue"},
		{"another namespace's queue of recur's name in mixed case", "other", "any", "Recur", "taskQueue"},
	} {
		e := checkError(t, all, workflowJob(tc.namespace, tc.typ, tc.queue))
		require.NotNil(t, e, tc.name)
		require.Equal(t, "properties.action.workflow."+tc.target, e.Target, tc.name)
		require.Contains(t, e.Message, "never", tc.name)
	}
	require.Nil(t, checkError(t, all, workflowJob("other", "their-workflow", "theirs")), "*/* allows the rest")
}

// TestWorkflowTargetsDenyByDefault: with no list, no Workflow action is
// allowed, and the error names the field at fault with the flag to use.
func TestWorkflowTargetsDenyByDefault(t *testing.T) {
	e := checkError(t, jobs.WorkflowTargets{}, workflowJob("", "w", "q"))
	require.NotNil(t, e)
	require.Equal(t, "properties.action.workflow.namespace", e.Target)
	require.Contains(t, e.Message, "--workflow-action-allow")

	var j jobs.Job = workflowJob("", "w", "q")
	j.Properties.Action = &jobs.Action{ActionSpec: jobs.ActionSpec{Type: jobs.ActionHTTP}, ErrorAction: &j.Properties.Action.ActionSpec}
	e = checkError(t, jobs.WorkflowTargets{}, j)
	require.NotNil(t, e, "the error action is checked too")
	require.Equal(t, "properties.action.errorAction.workflow.namespace", e.Target)
}

// TestWorkflowTargetsMatch: entries are namespace/taskQueue, "*" standing
// for any run of characters in either part; an action without a namespace
// is in recur's own.
func TestWorkflowTargetsMatch(t *testing.T) {
	wt := targets(t, " recur-ns/reports , billing/*, team-*/jobs-*-eu")
	for _, tc := range []struct {
		namespace, queue string
		allowed          bool
		target           string
	}{
		{"", "reports", true, ""},
		{"recur-ns", "reports", true, ""},
		{"", "reports2", false, "taskQueue"},
		{"billing", "anything", true, ""},
		{"billing2", "anything", false, "namespace"},
		{"team-a", "jobs-nightly-eu", true, ""},
		{"team-a", "jobs--eu", true, ""},
		{"team-a", "jobs-eu", false, "taskQueue"},
		{"team-", "jobs-x-eu", true, ""},
		{"team-a", "jobs-x-us", false, "taskQueue"},
		{"xteam-a", "jobs-x-eu", false, "namespace"},
	} {
		e := checkError(t, wt, workflowJob(tc.namespace, "w", tc.queue))
		if tc.allowed {
			require.Nil(t, e, "%s/%s", tc.namespace, tc.queue)
			continue
		}
		require.NotNil(t, e, "%s/%s", tc.namespace, tc.queue)
		require.Equal(t, "properties.action.workflow."+tc.target, e.Target, "%s/%s", tc.namespace, tc.queue)
	}
	require.Equal(t, "recur-ns/reports,billing/*,team-*/jobs-*-eu", wt.String())
}

// TestWorkflowTargetsRefuseBadEntries: an entry is two names or patterns
// around one slash.
func TestWorkflowTargetsRefuseBadEntries(t *testing.T) {
	for _, bad := range []string{"reports", "/reports", "ns/", "ns/q/r", "ns/q r", "ns/-q", "*/temporal sys"} {
		var wt jobs.WorkflowTargets
		require.Error(t, wt.Add(bad), bad)
	}
}

// TestWorkflowActionValidationStaysLenient: Accept, which replays,
// takes recur's own task queue as it once did; the refusal is
// WorkflowTargets'.
func TestWorkflowActionValidationStaysLenient(t *testing.T) {
	require.Nil(t, normalizeError(t, workflowJob("", "w", jobs.TaskQueue)))
	require.Nil(t, normalizeError(t, workflowJob("temporal-system", "temporal-sys-delete-namespace-workflow", "q")))
}
