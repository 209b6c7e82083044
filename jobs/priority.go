package jobs

import (
	"context"

	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// PriorityWrite is the priority key of the workflows whose tasks someone
// waits for: a collection's, and a job's while a write or its
// collection's message is on its way to it (store/priority.go,
// activities/tell.go). Temporal's matching service hands out a task
// queue's tasks by priority key, 1 first and 5 last (a workflow without
// one is 3), and a workflow task's priority is its workflow's when the
// task is made: a change of the priority makes a task not yet started
// again at the new one, but for an update's speculative task.
const PriorityWrite = 1

// SetPriority sets the priority key of workflowID's run (the current one
// when run is ""); 0 is the default.
func SetPriority(ctx context.Context, svc workflowservice.WorkflowServiceClient, namespace, workflowID, run string, key int32) error {
	_, err := svc.UpdateWorkflowExecutionOptions(ctx, &workflowservice.UpdateWorkflowExecutionOptionsRequest{
		Namespace:                namespace,
		WorkflowExecution:        &commonpb.WorkflowExecution{WorkflowId: workflowID, RunId: run},
		WorkflowExecutionOptions: &workflowpb.WorkflowExecutionOptions{Priority: &commonpb.Priority{PriorityKey: key}},
		UpdateMask:               &fieldmaskpb.FieldMask{Paths: []string{"priority"}},
	})
	return err
}
