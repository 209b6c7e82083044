package workflows

import (
	"bytes"
	"encoding/json"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// publish writes the job's public view to its memo when it differs from
// the one last written: an upsert is a history event and a write to the
// visibility store.
func (j *job) publish(ctx workflow.Context) {
	if j.state == nil {
		return
	}
	view := jobs.JobView{Job: j.view().Redacted(), Deleted: j.deleted, Created: j.state.Created, Runs: j.state.Runs}
	j.published = upsertMemo(ctx, jobs.MemoJob, view, j.published)
}

// publish writes the collection's public view to its memo when it
// changed; its jobs' names stay out (up to 1000 of them at every change).
func (c *collection) publish(ctx workflow.Context) {
	if c.Collection == nil {
		return
	}
	c.published = upsertMemo(ctx, jobs.MemoCollection, jobs.CollectionView{Collection: *c.Collection, Deleted: c.deleted}, c.published)
}

// upsertMemo sets the memo's key to view unless last is view's encoding,
// and returns the encoding now in the memo. A workflow's own history
// replays the same encodings, so the comparison is deterministic.
func upsertMemo(ctx workflow.Context, key string, view any, last []byte) []byte {
	// encoding/json caches encoders with sync and reflect, which
	// workflowcheck takes for nondeterminism; its output for a value is
	// always the same.
	encoded, err := json.Marshal(view) //workflowcheck:ignore
	if err != nil || bytes.Equal(encoded, last) {
		return last
	}
	if workflow.GetVersion(ctx, changePublicMemo, workflow.DefaultVersion, 1) < 1 {
		return last
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{key: view}); err != nil {
		workflow.GetLogger(ctx).Error("upsert the public view", "memo", key, "error", err)
		return last
	}
	return encoded
}
