package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/jobs"
)

// logTimelines logs what Temporal holds of each job name: every run of
// the job's workflow with its events, and the events of the collection's
// runs that name the job. A test that kills processes fails on a race
// among a few messages, once in many runs; this timeline is what tells
// which race, from the failed run's output alone.
func logTimelines(t *testing.T, c client.Client, names []string) {
	t.Helper()
	keys, err := codec.Load(testKeyFile(t))
	if err != nil {
		t.Logf("timeline: %v", err)
		return
	}
	dc := codec.DataConverter(keys)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	collection := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c"}
	for _, name := range names {
		k := collection
		k.Job = name
		var lines []string
		for _, id := range []string{k.JobWorkflowID(), collection.CollectionWorkflowID()} {
			mention := ""
			if id == collection.CollectionWorkflowID() {
				mention = `"` + name + `"`
			}
			lines = append(lines, runEvents(ctx, c, dc, id, mention)...)
		}
		t.Logf("timeline of %s:\n%s", name, strings.Join(lines, "\n"))
	}
}

// runEvents lists the runs of workflow id and their events but workflow
// tasks, markers, timers and memo changes, each with the start of its
// messages' payloads (a CI run's output is read in part); with mention,
// only the events whose payloads hold it.
func runEvents(ctx context.Context, c client.Client, dc converter.DataConverter, id, mention string) []string {
	var lines []string
	runs, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = '%s'", id)})
	if err != nil {
		return []string{fmt.Sprintf("  %s: list: %v", id, err)}
	}
	for _, run := range runs.GetExecutions() {
		runID := run.GetExecution().GetRunId()
		lines = append(lines, fmt.Sprintf("  %s run %s %s, started %s", id, runID,
			run.GetStatus(), run.GetStartTime().AsTime().Format(time.TimeOnly+".000")))
		iter := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for iter.HasNext() {
			e, err := iter.Next()
			if err != nil {
				lines = append(lines, fmt.Sprintf("    history: %v", err))
				break
			}
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED,
				enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, enumspb.EVENT_TYPE_MARKER_RECORDED,
				enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED, enumspb.EVENT_TYPE_TIMER_STARTED,
				enumspb.EVENT_TYPE_TIMER_FIRED, enumspb.EVENT_TYPE_TIMER_CANCELED:
				continue
			}
			detail := eventDetail(dc, e)
			if mention != "" && !strings.Contains(detail, mention) {
				continue
			}
			if len(detail) > 240 {
				detail = detail[:240] + "…"
			}
			lines = append(lines, fmt.Sprintf("    %s %3d %s %s", e.GetEventTime().AsTime().Format(time.TimeOnly+".000"),
				e.GetEventId(), e.GetEventType(), detail))
		}
	}
	return lines
}

// eventDetail is the name and the decoded payloads of an event that
// carries a message.
func eventDetail(dc converter.DataConverter, e *historypb.HistoryEvent) string {
	var name string
	var payloads *commonpb.Payloads
	switch {
	case e.GetWorkflowExecutionStartedEventAttributes() != nil:
		payloads = e.GetWorkflowExecutionStartedEventAttributes().GetInput()
	case e.GetWorkflowExecutionSignaledEventAttributes() != nil:
		a := e.GetWorkflowExecutionSignaledEventAttributes()
		name, payloads = a.GetSignalName(), a.GetInput()
	case e.GetSignalExternalWorkflowExecutionInitiatedEventAttributes() != nil:
		a := e.GetSignalExternalWorkflowExecutionInitiatedEventAttributes()
		name, payloads = a.GetSignalName()+" to "+a.GetWorkflowExecution().GetWorkflowId(), a.GetInput()
	case e.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil:
		in := e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput()
		name, payloads = in.GetName(), in.GetArgs()
	case e.GetWorkflowExecutionUpdateCompletedEventAttributes() != nil:
		o := e.GetWorkflowExecutionUpdateCompletedEventAttributes().GetOutcome()
		if f := o.GetFailure(); f != nil {
			name = "failed: " + f.GetMessage()
		}
		payloads = o.GetSuccess()
	case e.GetWorkflowExecutionUpdateAdmittedEventAttributes() != nil:
		in := e.GetWorkflowExecutionUpdateAdmittedEventAttributes().GetRequest().GetInput()
		name, payloads = in.GetName(), in.GetArgs()
	case e.GetActivityTaskScheduledEventAttributes() != nil:
		a := e.GetActivityTaskScheduledEventAttributes()
		name, payloads = a.GetActivityType().GetName(), a.GetInput()
	case e.GetWorkflowExecutionContinuedAsNewEventAttributes() != nil:
		payloads = e.GetWorkflowExecutionContinuedAsNewEventAttributes().GetInput()
	}
	var parts []string
	if name != "" {
		parts = append(parts, name)
	}
	for _, p := range payloads.GetPayloads() {
		var raw json.RawMessage
		if err := dc.FromPayload(p, &raw); err != nil {
			parts = append(parts, "?"+err.Error())
			continue
		}
		parts = append(parts, string(raw))
	}
	return strings.Join(parts, " ")
}
