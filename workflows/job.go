package workflows

import (
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// maxRunsPerExecution bounds a job workflow's history: after that many
// occurrences it continues as new.
const maxRunsPerExecution = 200

// Job is the workflow of one job: it sleeps on a durable timer until the
// next occurrence, starts its run workflow, updates the status and repeats.
// Nominal times come from the recurrence engine, never from when a run
// actually happened.
func Job(ctx workflow.Context, in jobs.JobInput) error {
	j := &job{key: in.Key, state: in.State}
	return j.run(ctx)
}

type job struct {
	key        jobs.Key
	state      *jobs.JobState // nil until the first PUT
	deleted    bool
	generation int // bumped by every change the loop must notice
	runs       int // occurrences run in this execution
}

func (j *job) run(ctx workflow.Context) error {
	if err := j.register(ctx); err != nil {
		return err
	}
	for {
		gen := j.generation
		next, waiting := j.due()
		var err error
		switch {
		case !waiting:
			// Disabled, completed, faulted or not yet defined: wait for a
			// change. A job whose schedule has ended keeps its workflow, so
			// that it stays readable and a new PUT keeps its counters; only
			// DELETE ends it.
			err = workflow.Await(ctx, func() bool { return j.generation != gen || j.deleted })
		default:
			var changed bool
			changed, err = workflow.AwaitWithTimeout(ctx, next.Sub(workflow.Now(ctx)),
				func() bool { return j.generation != gen || j.deleted })
			if err == nil && !changed {
				err = j.runOccurrence(ctx, next)
			}
		}
		if err != nil {
			return err
		}
		if j.deleted {
			return j.drain(ctx)
		}
		if j.runs >= maxRunsPerExecution || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if err := j.drain(ctx); err != nil {
				return err
			}
			return workflow.NewContinueAsNewError(ctx, jobs.JobWorkflowName, jobs.JobInput{Key: j.key, State: j.state})
		}
	}
}

// due returns the next nominal run time when the job is waiting for one.
func (j *job) due() (time.Time, bool) {
	if j.state == nil || j.state.Job.Properties.State != jobs.Enabled || j.state.Next == nil {
		return time.Time{}, false
	}
	return *j.state.Next, true
}

// drain waits until no message handler runs, so that continue-as-new or
// completion never cuts one short.
func (j *job) drain(ctx workflow.Context) error {
	return workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
}

// runOccurrence runs the occurrence due at nominal in its own workflow and
// records the outcome, then plans the next occurrence.
func (j *job) runOccurrence(ctx workflow.Context, nominal time.Time) error {
	started := workflow.Now(ctx)
	result, err := j.startRun(ctx, nominal)
	if err != nil {
		return err
	}
	j.runs++
	st := &j.state.Job.Properties
	if result != nil {
		status := j.status()
		status.ExecutionCount++
		status.LastExecutionTime = &started
		if result.Status == jobs.Failed {
			status.FailureCount += max(result.Attempts, 1)
			status.FaultedCount++
		}
	}
	j.state.Runs++
	next, err := j.plan(ctx, func(r *recurrence.Rule) (time.Time, bool) {
		if c := r.Count(); c > 0 && j.state.Runs >= c {
			return time.Time{}, false
		}
		return r.Next(nominal)
	})
	if err != nil {
		return err
	}
	j.setNext(next)
	if next == nil {
		st.State = jobs.Completed
		if st.Recurrence == nil && result != nil && result.Status == jobs.Failed {
			st.State = jobs.Faulted
		}
	}
	return workflow.UpsertTypedSearchAttributes(ctx, jobs.AttrState.ValueSet(string(st.State)))
}

// startRun starts the run workflow of one occurrence and waits for it. A
// run whose ID already exists (the occurrence ran before a restart) is
// not run again; its result is nil.
func (j *job) startRun(ctx workflow.Context, nominal time.Time) (*jobs.RunResult, error) {
	id := jobs.OccurrenceID(j.key.JobWorkflowID(), nominal)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            id,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		TypedSearchAttributes: j.key.SearchAttributes(jobs.KindRun, jobs.AttrNominalTime.ValueSet(nominal)),
	})
	var result jobs.RunResult
	err := workflow.ExecuteChildWorkflow(cctx, jobs.RunWorkflowName, jobs.RunInput{
		Key: j.key, Nominal: nominal, Action: *j.state.Job.Properties.Action,
	}).Get(ctx, &result)
	var appErr *temporal.ApplicationError
	switch {
	case err == nil:
		return &result, nil
	case temporal.IsWorkflowExecutionAlreadyStartedError(err):
		workflow.GetLogger(ctx).Warn("occurrence already ran", "occurrence", id)
		return nil, nil
	case errors.As(err, &appErr) && appErr.Type() == errTypeRunFailed:
		if appErr.Details(&result) == nil {
			return &result, nil
		}
		return &jobs.RunResult{Status: jobs.Failed, Message: appErr.Message()}, nil
	default:
		return &jobs.RunResult{Status: jobs.Failed, Message: err.Error()}, nil
	}
}

func (j *job) status() *jobs.Status {
	p := &j.state.Job.Properties
	if p.Status == nil {
		p.Status = &jobs.Status{}
	}
	return p.Status
}

func (j *job) setNext(next *time.Time) {
	j.state.Next = next
	j.status().NextExecutionTime = next
}

// plan compiles the job's rule and asks it for a time, through SideEffect:
// a later fix to the engine never changes the history of a running job.
func (j *job) plan(ctx workflow.Context, ask func(*recurrence.Rule) (time.Time, bool)) (*time.Time, error) {
	def := j.state.Job.Properties.Schedule()
	created := j.state.Created
	var next *time.Time
	err := workflow.SideEffect(ctx, func(workflow.Context) any {
		rule, err := recurrence.Compile(def, created)
		if err != nil {
			return (*time.Time)(nil)
		}
		if t, ok := ask(rule); ok {
			return &t
		}
		return (*time.Time)(nil)
	}).Get(&next)
	return next, err
}
