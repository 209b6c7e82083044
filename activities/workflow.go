package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

// StartWorkflow starts a Workflow action's Temporal workflow under the ID
// WorkflowActionID gives: the occurrence's, so a retried or repeated
// attempt finds the workflow it started and does not start another.
func (a *Activities) StartWorkflow(ctx context.Context, in jobs.ActionInput) (_ jobs.HTTPResponse, err error) {
	ctx, logger, end := a.begin(ctx, in.Key, in.OccurrenceID, in.ActionName)
	defer func() { end(err) }()
	out := jobs.HTTPResponse{Attempt: int(activity.GetInfo(ctx).Attempt)}
	w := in.Spec.Workflow
	if w == nil || a.Temporal == nil {
		return out, temporal.NewNonRetryableApplicationError("no workflow to start", ErrTypeInvalidAction, nil, out)
	}
	var args []any
	if len(w.Input) > 0 {
		var input any
		if err := json.Unmarshal(w.Input, &input); err != nil {
			return out, temporal.NewNonRetryableApplicationError("input: "+err.Error(), ErrTypeInvalidAction, nil, out)
		}
		args = append(args, input)
	}
	// Checked again here, and not only when the API took the definition:
	// a job defined before the operator narrowed the list, or written to
	// its workflow past the API, must not reach what the list refuses.
	namespace := activity.GetInfo(ctx).WorkflowNamespace
	if err := a.WorkflowTargets.Check(&in.Spec, namespace, actionPath(in.ActionName)); err != nil {
		return out, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRefused, nil, out)
	}
	own := w.Namespace == "" || w.Namespace == namespace
	c := a.Temporal
	if !own {
		nc, err := client.NewClientFromExisting(a.Temporal, client.Options{Namespace: w.Namespace})
		if err != nil {
			return out, fmt.Errorf("client for namespace %s: %w", w.Namespace, err)
		}
		defer nc.Close()
		c = nc
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                    WorkflowActionID(in.OccurrenceID, in.ActionName),
		TaskQueue:             w.TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		// Fail rather than attach to a running one: an earlier attempt of
		// this occurrence started it, which is success.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, w.WorkflowType, args...)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		out.Status = "Started"
		out.Body = fmt.Sprintf("workflow %s was already started for this occurrence", WorkflowActionID(in.OccurrenceID, in.ActionName))
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("start workflow %s on %s: %w", w.WorkflowType, w.TaskQueue, err)
	}
	out.Status = "Started"
	out.Body = fmt.Sprintf("started workflow %s (run %s)", run.GetID(), run.GetRunID())
	logger.Info("workflow action", "workflowId", run.GetID(), "workflowType", w.WorkflowType, "taskQueue", w.TaskQueue)
	return out, nil
}

// actionPath is the JSON path of the action named actionName.
func actionPath(actionName string) string {
	if actionName == jobs.ErrorAction {
		return "properties.action.errorAction"
	}
	return "properties.action"
}

// WorkflowActionID is the ID of the workflow a Workflow action starts:
// the occurrence ID followed by
// "/workflow", or "/errorAction" when it is the error action.
func WorkflowActionID(occurrenceID, actionName string) string {
	if actionName == jobs.ErrorAction {
		return occurrenceID + "/errorAction"
	}
	return occurrenceID + "/workflow"
}
