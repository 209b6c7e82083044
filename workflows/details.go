package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// describe shows the job as it is now as the workflow's current details,
// which the Web UI shows and `temporal workflow metadata` prints (the
// answer to the built-in __temporal_workflow_metadata query). Setting them
// writes nothing to history and sends no command, so replay is unchanged
// and needs no workflow.GetVersion. Like every query answer they pass
// through the data converter: with recur's codec they are encrypted, and
// the Web UI reads them through its codec endpoint.
func (j *job) describe(ctx workflow.Context) {
	if j.state() == nil {
		workflow.SetCurrentDetails(ctx, "**not defined yet**: the first PUT of the job defines it")
		return
	}
	workflow.SetCurrentDetails(ctx, j.state().Details())
}
