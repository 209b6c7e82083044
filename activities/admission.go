package activities

import (
	"context"
	"errors"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/jobs"
)

// AdmitJob has a job's collection admit a new definition of the job: an
// update of the collection's workflow, which answers once it has checked
// its quotas and recorded the job. The job workflow runs it as a local
// activity inside the workflow task that took the PUT, so a PUT costs the
// job one workflow task and the collection one, with no signal between
// them. Every attempt sends the same update ID, and a collection admits
// a job it holds without counting it twice, so asking again is safe.
func (a *Activities) AdmitJob(ctx context.Context, in jobs.AdmissionRequest) (jobs.AdmitAnswer, error) {
	h, err := a.Recur.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   in.Key.CollectionWorkflowID(),
		UpdateID:     in.UpdateID,
		UpdateName:   jobs.UpdateAdmitJob,
		Args:         []any{in.Request},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var answer jobs.AdmitAnswer
	if err == nil {
		err = h.Get(ctx, &answer)
	}
	if nf := (*serviceerror.NotFound)(nil); errors.As(err, &nf) {
		// No collection workflow runs: there is no such collection.
		return jobs.AdmitAnswer{Seq: in.Request.Seq, Error: jobs.CollectionMissing(in.Key.Collection)}, nil
	}
	return answer, err
}
