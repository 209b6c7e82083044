package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

func (j *job) register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, jobs.QueryJob, j.query); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, jobs.UpdatePutJob, j.put,
		workflow.UpdateHandlerOptions{Validator: j.validatePut}); err != nil {
		return err
	}
	return workflow.SetUpdateHandler(ctx, jobs.UpdateDeleteJob, j.delete)
}

func (j *job) query() (jobs.JobView, error) {
	if j.state == nil {
		return jobs.JobView{}, jobs.NotFound("job " + j.key.Job).ToApplicationError()
	}
	return jobs.JobView{Job: j.view(), Deleted: j.deleted}, nil
}

// view returns the job as the API shows it: status always present.
func (j *job) view() jobs.Job {
	job := j.state.Job
	status := *j.status()
	job.Properties.Status = &status
	return job
}

// created is C: the workflow's clock at the update, in whole seconds.
func created(ctx workflow.Context) time.Time { return workflow.Now(ctx).UTC().Truncate(time.Second) }

func (j *job) validatePut(ctx workflow.Context, req jobs.PutJobRequest) error {
	if j.deleted {
		return jobs.NotFound("job " + j.key.Job).ToApplicationError()
	}
	return toWire(req.Job.Normalize(j.key, created(ctx)))
}

// put defines or redefines the job: the new definition is planned from
// now (C), keeping the status counters.
func (j *job) put(ctx workflow.Context, req jobs.PutJobRequest) (jobs.Job, error) {
	c := created(ctx)
	if err := req.Job.Normalize(j.key, c); err != nil {
		return jobs.Job{}, toWire(err)
	}
	var status *jobs.Status
	if j.state != nil {
		status = j.state.Job.Properties.Status
	}
	j.state = &jobs.JobState{Job: req.Job, Created: c}
	j.state.Job.Properties.Status = status
	next, err := j.plan(ctx, func(r *recurrence.Rule) (time.Time, bool) { return r.First(c) })
	if err != nil {
		return jobs.Job{}, err
	}
	j.setNext(next)
	if next == nil && j.state.Job.Properties.State == jobs.Enabled {
		j.state.Job.Properties.State = jobs.Completed
	}
	j.generation++
	if err := workflow.UpsertTypedSearchAttributes(ctx, jobs.AttrState.ValueSet(string(j.state.Job.Properties.State))); err != nil {
		return jobs.Job{}, err
	}
	return j.view(), nil
}

func (j *job) delete(workflow.Context, jobs.DeleteJobRequest) (struct{}, error) {
	j.deleted = true
	j.generation++
	return struct{}{}, nil
}
