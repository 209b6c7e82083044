package workflows

import (
	"bytes"
	"encoding/json"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// memo is what a job's memo holds, as last written: the API reads the
// job's public view there (describe, visibility) and its history from the
// upserts' events, so that no read needs a worker.
type memo struct {
	job, status []byte // encodings of the JobView and the StatusView
	// failure says the memo holds a failure record, which the next upsert
	// without one deletes: the record stays in that upsert's event, where
	// the failures are read, and leaves every visibility row of the job.
	failure bool
}

// flush writes what changed since the last flush, in one upsert of the
// memo and one of the search attributes at most: the definition's public
// view, the status, and the history rows of the occurrences handled. It
// shows the job as its current details too, which costs no event.
//
// An occurrence that has just started leaves the status to its end, which
// most often comes in the same workflow task: then the occurrence costs one
// upsert, with its rows.
func (j *job) flush(ctx workflow.Context) {
	j.describe(ctx)
	if j.state() == nil {
		return
	}
	fields := map[string]any{}
	view, status := j.state().Views(j.m.Deleted())
	if enc, ok := changed(view, j.memo.job); ok {
		fields[jobs.MemoJob], j.memo.job = view, enc
	}
	starting := j.m.Running() > 0 && len(j.rows) == 0 && len(fields) == 0
	if enc, ok := changed(status, j.memo.status); ok && !starting {
		fields[jobs.MemoStatus], j.memo.status = status, enc
	}
	if len(j.rows) > 0 {
		fields[jobs.MemoRows] = j.rows
		j.rows = nil
	}
	// A failure record goes in its occurrence's upsert: it costs no event.
	// The next upsert deletes it from the memo (a nil field), which costs
	// none either.
	failed := len(j.failures) > 0
	switch {
	case failed:
		fields[jobs.MemoFailures] = j.failures
		j.failures, j.memo.failure = nil, true
	case j.memo.failure && len(fields) > 0:
		fields[jobs.MemoFailures] = nil
		j.memo.failure = false
	}
	if len(fields) > 0 {
		if err := workflow.UpsertMemo(ctx, fields); err != nil {
			workflow.GetLogger(ctx).Error("upsert the memo", "error", err)
		}
	}
	j.upsertAttributes(ctx, failed)
}

// upsertAttributes keeps the job's state, the outcome of its last run and
// its health in its search attributes (RecurState, RecurStatus and those
// of healthAttributes: failing jobs are one visibility filter away), and
// whether it keeps failures (RecurFailures, when failed says this task
// wrote a failure record), upserted on a change only, all in one upsert.
func (j *job) upsertAttributes(ctx workflow.Context, failed bool) {
	current := workflow.GetTypedSearchAttributes(ctx)
	var updates []temporal.SearchAttributeUpdate
	state, outcome := j.state().Job.Properties.State, j.m.Outcome()
	if st, ok := current.GetKeyword(jobs.AttrState); !ok || st != string(state) {
		updates = append(updates, jobs.AttrState.ValueSet(string(state)))
	}
	if o, ok := current.GetKeyword(jobs.AttrStatus); outcome != "" && (!ok || o != string(outcome)) {
		updates = append(updates, jobs.AttrStatus.ValueSet(string(outcome)))
	}
	updates = append(updates, j.healthAttributes(current)...)
	// RecurFailures rides an upsert the task makes anyway, which costs no
	// event and, matched by its type alone on replay, changes no recorded
	// history. The run that writes a job's first record always makes one:
	// its last run's outcome or its failure streak changes. A failure with
	// neither (a streak that began before the job kept records) leaves it
	// to the next run that makes one.
	if kept, _ := current.GetBool(jobs.AttrFailures); failed && !kept && len(updates) > 0 {
		updates = append(updates, jobs.AttrFailures.ValueSet(true))
	}
	if len(updates) == 0 {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		workflow.GetLogger(ctx).Error("upsert search attributes", "error", err)
	}
}

// publish writes the collection's public view to its memo when it
// changed; its jobs' names have keys of their own (publishNames), so
// that neither rewrites the other.
func (c *collection) publish(ctx workflow.Context, view jobs.CollectionView) {
	enc, ok := changed(view, c.published)
	if !ok {
		return
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{jobs.MemoCollection: view}); err != nil {
		workflow.GetLogger(ctx).Error("upsert the public view", "error", err)
		return
	}
	c.published = enc
}

// publishNames writes the names of the memo keys that changed, each key
// its sorted share of the collection's jobs. Its wait ends once every
// coroutine of the workflow task is blocked, so the admissions of one
// task cost one upsert.
func (c *collection) publishNames(ctx workflow.Context) {
	for {
		if err := workflow.Await(ctx, func() bool { return len(c.namesChanged) > 0 }); err != nil {
			return
		}
		fields := map[string]any{}
		for _, key := range c.namesChanged {
			fields[key] = []string{}
		}
		for _, name := range c.ledger.Jobs() {
			key := jobs.JobNamesKey(name)
			if names, ok := fields[key]; ok {
				fields[key] = append(names.([]string), name)
			}
		}
		c.namesChanged = nil
		if err := workflow.UpsertMemo(ctx, fields); err != nil {
			workflow.GetLogger(ctx).Error("upsert the names of the jobs", "error", err)
		}
	}
}

// changed returns view's encoding and whether it differs from last. A
// workflow's own history replays the same encodings, so the comparison is
// deterministic.
func changed(view any, last []byte) ([]byte, bool) {
	// encoding/json caches encoders with sync and reflect, which
	// workflowcheck takes for nondeterminism; its output for a value is
	// always the same.
	encoded, err := json.Marshal(view) //workflowcheck:ignore
	if err != nil {
		return last, false
	}
	return encoded, !bytes.Equal(encoded, last)
}
