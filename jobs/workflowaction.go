package jobs

import (
	"encoding/json"
	"fmt"
	"strings"
)

// WorkflowStart is recur's Workflow action: start a Temporal workflow of
// WorkflowType on TaskQueue in Namespace (default: recur's own) with Input
// as its one argument. Its workflow ID is the occurrence ID followed by
// "/workflow" (the occurrence ID itself names the run), so an occurrence
// starts it at most once: recur as a richer replacement for Temporal
// Schedules. Where it may start workflows is the operator's to say (see
// WorkflowTargets).
type WorkflowStart struct {
	Namespace    string          `json:"namespace,omitempty"`
	WorkflowType string          `json:"workflowType"`
	TaskQueue    string          `json:"taskQueue"`
	Input        json.RawMessage `json:"input,omitempty"`
}

// validate checks the action's shape. Where it may reach is not checked
// here: validate runs again when a job workflow replays the update that
// defined the job, so it must keep accepting what it once accepted;
// WorkflowTargets.Check is the API's and the activity's.
func (w *WorkflowStart) validate(path string) error {
	switch {
	case w == nil:
		return invalidf(path, "%s is required for a Workflow action", path)
	case w.WorkflowType == "":
		return invalidf(path+".workflowType", "workflowType is required")
	case w.TaskQueue == "":
		return invalidf(path+".taskQueue", "taskQueue is required")
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

// Temporal's own: its system namespace, and the prefix of the workflow
// types and task queues of its system workflows, which also run in every
// other namespace (the batcher, which terminates or signals workflows by
// query, and the scheduler among them).
const (
	systemNamespace = "temporal-system"
	systemPrefix    = "temporal-sys"
)

// WorkflowTargets are the namespaces and task queues Workflow actions may
// start workflows on, as the operator lists them: entries
// "namespace/taskQueue" where "*" in either part stands for any run of
// characters. The zero value allows none. Whatever the entries say,
// Temporal's system namespace, its system workflow types and task queues,
// and recur's own task queues (whose workflows take the jobs they act on
// from their input) are never allowed: a tenant's job could delete a
// namespace or act on another tenant's jobs.
type WorkflowTargets struct {
	entries []workflowTarget
}

// workflowTarget is one entry of WorkflowTargets: two patterns.
type workflowTarget struct{ namespace, taskQueue string }

// Add adds the entries of a comma-separated list; empty entries are
// skipped.
func (t *WorkflowTargets) Add(list string) error {
	for entry := range strings.SplitSeq(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		ns, q, ok := strings.Cut(entry, "/")
		if !ok || !targetPattern(ns) || !targetPattern(q) {
			return fmt.Errorf("workflow target %q: want namespace/taskQueue, each letters, digits, '-', '_', '.' or '*'", entry)
		}
		t.entries = append(t.entries, workflowTarget{ns, q})
	}
	return nil
}

// targetPattern reports whether p is a pattern of names: namePattern's
// characters and "*".
func targetPattern(p string) bool {
	return namePattern.MatchString(strings.ReplaceAll(p, "*", "x"))
}

// String lists the entries as Add takes them.
func (t WorkflowTargets) String() string {
	out := make([]string, len(t.entries))
	for i, e := range t.entries {
		out[i] = e.namespace + "/" + e.taskQueue
	}
	return strings.Join(out, ",")
}

// CheckJob checks the Workflow actions of j, its action and error action,
// with Check; namespace is recur's own.
func (t WorkflowTargets) CheckJob(j *Job, namespace string) error {
	a := j.Properties.Action
	if a == nil {
		return nil
	}
	if err := t.Check(&a.ActionSpec, namespace, "properties.action"); err != nil {
		return err
	}
	if a.ErrorAction != nil {
		return t.Check(a.ErrorAction, namespace, "properties.action.errorAction")
	}
	return nil
}

// Check refuses a Workflow action at path whose workflow the operator did
// not allow, or which is never allowed (see WorkflowTargets); namespace
// is recur's own, the one an action without a namespace uses. Other
// actions pass. The error's target is the JSON path of the field at fault.
func (t WorkflowTargets) Check(a *ActionSpec, namespace, path string) error {
	if !strings.EqualFold(a.Type, ActionWorkflow) || a.Workflow == nil {
		return nil
	}
	w, path := a.Workflow, path+".workflow"
	ns := w.Namespace
	if ns == "" {
		ns = namespace
	}
	switch {
	case strings.EqualFold(ns, systemNamespace):
		return invalidf(path+".namespace", "namespace %s is Temporal's own; a Workflow action may never start workflows there", ns)
	case hasPrefixFold(w.WorkflowType, systemPrefix):
		return invalidf(path+".workflowType", "workflowType %s is one of Temporal's system workflows; a Workflow action may never start them", w.WorkflowType)
	case hasPrefixFold(w.TaskQueue, systemPrefix):
		return invalidf(path+".taskQueue", "taskQueue %s is Temporal's own; a Workflow action may never start workflows there", w.TaskQueue)
	case OwnTaskQueue(w.TaskQueue):
		return invalidf(path+".taskQueue", "taskQueue %s is recur's own; a Workflow action may never start recur's workflows", w.TaskQueue)
	case !namePattern.MatchString(ns):
		return invalidf(path+".namespace", "namespace %q must be letters, digits, '-', '_' or '.'", ns)
	}
	nsAllowed := false
	for _, e := range t.entries {
		if match(e.namespace, ns) {
			if match(e.taskQueue, w.TaskQueue) {
				return nil
			}
			nsAllowed = true
		}
	}
	if nsAllowed {
		return invalidf(path+".taskQueue", "taskQueue %s of namespace %s is not one the operator allows Workflow actions to reach (--workflow-action-allow)", w.TaskQueue, ns)
	}
	return invalidf(path+".namespace", "namespace %s is not one the operator allows Workflow actions to reach (--workflow-action-allow)", ns)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// match reports whether name matches pattern, where "*" stands for any run
// of characters (none included) and everything else for itself.
func match(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	first, last := parts[0], parts[len(parts)-1]
	if len(name) < len(first)+len(last) || !strings.HasPrefix(name, first) || !strings.HasSuffix(name, last) {
		return false
	}
	rest := name[len(first) : len(name)-len(last)]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}
