package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// finishedRetention asks the worker how long finished jobs are kept; when
// it cannot say, the job is kept.
func finishedRetention(ctx workflow.Context) time.Duration {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{ScheduleToCloseTimeout: time.Minute})
	var d time.Duration
	if err := workflow.ExecuteLocalActivity(lctx, acts.FinishedJobRetention).Get(ctx, &d); err != nil {
		workflow.GetLogger(ctx).Error("finished job retention; the job is kept", "error", err)
		return 0
	}
	return d
}
