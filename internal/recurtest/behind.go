package recurtest

import (
	"context"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// StartJobBehind starts, through c, the workflow of k: a job due every
// minute whose first task comes two minutes late, as on a Temporal far
// behind. It returns the minute whose run falls due at that first task,
// the two before it being missed. The run at minute must already be due
// when the first task comes (a minute still ahead would find the missed
// ones' Postponed rows unwritten and fold it), and that task needs time
// to finish before the next fire, so a minute about to end is waited out.
func StartJobBehind(ctx context.Context, c client.Client, k jobs.Key) (time.Time, error) {
	if untilNext := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); untilNext < 5*time.Second {
		time.Sleep(untilNext)
	}
	minute := time.Now().UTC().Truncate(time.Minute)
	created, late := minute.Add(-10*time.Minute), minute.Add(-2*time.Minute)
	j := jobs.Job{Properties: jobs.Properties{
		StartTime:  recurrence.At(created),
		Action:     &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: "https://example.com/", Method: "POST"}}},
		Recurrence: &recurrence.Recurrence{Frequency: "Minute"},
	}}
	if err := j.Normalize(k, created); err != nil {
		return time.Time{}, err
	}
	j.Properties.Status = &jobs.Status{NextExecutionTime: &late}
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: k.JobWorkflowID(), TaskQueue: jobs.TaskQueue, TypedSearchAttributes: k.SearchAttributes(jobs.KindJob),
	}, jobs.JobWorkflowName, jobs.JobInput{Key: k, State: &jobs.JobState{Job: j, Created: created, Next: &late}})
	return minute, err
}
