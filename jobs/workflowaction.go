package jobs

import "encoding/json"

// WorkflowStart is recur's Workflow action: start a Temporal workflow of
// WorkflowType on TaskQueue in Namespace (default: recur's own) with Input
// as its one argument. Its workflow ID is the occurrence ID followed by
// "/workflow" (the occurrence ID itself names the run), so an occurrence
// starts it at most once: recur as a richer replacement for Temporal
// Schedules.
type WorkflowStart struct {
	Namespace    string          `json:"namespace,omitempty"`
	WorkflowType string          `json:"workflowType"`
	TaskQueue    string          `json:"taskQueue"`
	Input        json.RawMessage `json:"input,omitempty"`
}

func (w *WorkflowStart) validate(path string) error {
	switch {
	case w == nil:
		return invalidf(path, "%s is required for a Workflow action", path)
	case w.WorkflowType == "":
		return invalidf(path+".workflowType", "workflowType is required")
	case w.TaskQueue == "":
		return invalidf(path+".taskQueue", "taskQueue is required")
	case OwnTaskQueue(w.TaskQueue) && w.Namespace == "":
		// recur's own workflows take their keys from their input: started
		// by a job, one could act on another tenant's jobs.
		return invalidf(path+".taskQueue", "taskQueue %s is recur's own; a Workflow action may not start recur's workflows", w.TaskQueue)
	case len(w.Input) > 0 && !json.Valid(w.Input):
		return invalidf(path+".input", "input must be JSON")
	case len(w.Input) > MaxBodyLength:
		return invalidf(path+".input", "input is %d bytes; at most %d are allowed", len(w.Input), MaxBodyLength)
	}
	if !namePattern.MatchString(w.TaskQueue) {
		return invalidf(path+".taskQueue", "taskQueue %q must be letters, digits, '-', '_' or '.'", w.TaskQueue)
	}
	return nil
}
