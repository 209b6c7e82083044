package workflows

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
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
	generation int        // bumped by every change the loop must notice
	fired      int        // occurrences handled in this execution
	running    int        // run workflows in flight
	starting   int        // run workflows asked for and not yet started
	postponing int        // Postponed rows (run workflows) not yet written
	folded     *foldedRow // occurrences postponed while behind, not yet written
	lastRunNow time.Time
	runNowSeq  int       // runs now before this one at lastRunNow
	retention  retention // of a finished job (retention.go)
	published  []byte    // the public view last written to the memo (memo.go)
}

func (j *job) run(ctx workflow.Context) error {
	if err := j.register(ctx); err != nil {
		return err
	}
	for {
		gen := j.generation
		changed := func() bool { return j.generation != gen || j.deleted }
		var err error
		if next, waiting := j.due(); waiting {
			var woke bool
			woke, err = workflow.AwaitWithTimeout(ctx, next.Sub(workflow.Now(ctx)), changed)
			if err == nil && !woke {
				err = j.fire(ctx, next)
			}
		} else if until, expires := j.expiry(ctx); expires {
			// Completed or faulted: readable, with its counters, until its
			// retention has passed, and not while a run now still runs.
			woke := false
			if wait := until.Sub(workflow.Now(ctx)); wait > 0 {
				woke, err = workflow.AwaitWithTimeout(ctx, wait, changed)
			}
			if err == nil && !woke && j.finished() {
				j.expire(ctx)
			}
		} else {
			// Disabled, not yet defined, finished and kept, or running:
			// wait for a change, or for the job to finish (its last run
			// ending) when that would start its retention.
			err = workflow.Await(ctx, func() bool { return changed() || j.finished() && j.retention.pending() })
		}
		if err != nil {
			return err
		}
		if j.deleted {
			j.publish(ctx)
			// Runs in flight finish on their own (parent close: abandon).
			return j.drain(ctx, false)
		}
		if j.fired >= maxRunsPerExecution || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if err := j.drain(ctx, true); err != nil {
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

// drain waits until no message handler runs, no run waits to be started
// (and, with runs, no run is in flight), so that continue-as-new or the
// end never cuts one short. Occurrences waiting folded get their row
// first: the ones in flight are written whether the job goes on or not.
func (j *job) drain(ctx workflow.Context, runs bool) error {
	starts := workflow.GetVersion(ctx, changeStartsBeforeEnd, workflow.DefaultVersion, 1) >= 1
	j.writeFolded(ctx)
	return workflow.Await(ctx, func() bool {
		return workflow.AllHandlersFinished(ctx) && (!runs || j.running == 0) && (!starts || j.starting == 0)
	})
}

// fire handles the occurrence due at nominal, and any later ones that fell
// due while the workflow could not run (recur was down): the most recent
// runs if it is within the catch-up window, the others are recorded as
// Postponed. Then it plans the next occurrence.
func (j *job) fire(ctx workflow.Context, nominal time.Time) error {
	if _, waiting := j.due(); !waiting {
		return nil // a run that just ended changed the state
	}
	j.fired++
	now := workflow.Now(ctx)
	plan, err := j.catchUp(ctx, nominal, now)
	if err != nil {
		return err
	}
	// A Postponed row from an earlier occurrence not yet written means
	// Temporal is behind: this occurrence's Postponed rows, if any, wait
	// and are folded into one. (A catch-up that leaves occurrences out of
	// its list says so in its own rows, and is not folded.)
	fold := plan.Skipped == 0 && j.postponing > 0 &&
		workflow.GetVersion(ctx, changeFoldPostponed, workflow.DefaultVersion, 1) >= 1
	window := j.state.Job.Properties.CatchUp()
	for i, o := range plan.Due {
		switch last := i == len(plan.Due)-1; {
		case !last:
			reason := "missed: recur was down or too busy to run it on time; only the most recent missed occurrence may run"
			if i == len(plan.Due)-2 && plan.Skipped > 0 {
				reason = fmt.Sprintf("%s (the %d missed occurrences after it, up to the most recent, are not listed)", reason, plan.Skipped)
			}
			j.postpone(ctx, o, reason, fold)
		case now.Sub(o) > window:
			j.postpone(ctx, o, fmt.Sprintf("missed by %s, more than the catch-up window of %s", now.Sub(o).Round(time.Second), window), fold)
		default:
			j.dispatch(ctx, o, fold)
		}
	}
	if c := j.count(); c > 0 && j.state.Runs >= c {
		plan.Next = nil // the count is used up
	}
	j.setNext(plan.Next)
	j.settle(ctx)
	return nil
}

// count returns the recurrence's count, 0 for none.
func (j *job) count() int {
	if r := j.state.Job.Properties.Recurrence; r != nil && r.Count != nil {
		return *r.Count
	}
	return 0
}

// dispatch runs an occurrence unless the previous run still runs; then
// the overlap policy decides; fold as for postpone.
func (j *job) dispatch(ctx workflow.Context, nominal time.Time, fold bool) {
	policy := j.state.Job.Properties.OverlapPolicy
	switch {
	case j.running == 0 || policy == jobs.OverlapAllowAll:
		j.state.Runs++
		j.start(ctx, nominal, false)
	case policy == jobs.OverlapBufferOne && j.state.Buffered == nil:
		j.state.Runs++
		j.state.Buffered = &nominal
	case policy == jobs.OverlapBufferOne:
		j.postpone(ctx, nominal, "the previous run was still running and another occurrence was already waiting for it", fold)
	default:
		j.postpone(ctx, nominal, "the previous run was still running (overlapPolicy Skip)", fold)
	}
}

// start runs an occurrence in its own workflow, in the background, and
// applies the outcome to the status when it ends.
func (j *job) start(ctx workflow.Context, nominal time.Time, manual bool) {
	j.running++
	started := workflow.Now(ctx)
	id := jobs.OccurrenceID(j.key.JobWorkflowID(), nominal)
	if manual {
		id += j.runNowSuffix(ctx, nominal)
	}
	in := jobs.RunInput{Key: j.key, Nominal: nominal, Action: *j.state.Job.Properties.Action,
		Repeat: j.status().ExecutionCount + j.running}
	j.starting++
	workflow.Go(ctx, func(ctx workflow.Context) {
		result := j.execute(ctx, id, in)
		j.running--
		if result != nil {
			j.apply(*result, started, manual)
			j.recordOutcome(ctx, result.Status)
		}
		if j.running == 0 && j.state.Buffered != nil {
			next := *j.state.Buffered
			j.state.Buffered = nil
			j.start(ctx, next, false)
		}
		j.settle(ctx)
	})
}

// runNowSuffix ends the ID of a run now at nominal: "/run-now", then
// "/run-now-2", "/run-now-3" for the others at the same time.
func (j *job) runNowSuffix(ctx workflow.Context, nominal time.Time) string {
	if !nominal.Equal(j.lastRunNow) {
		j.lastRunNow, j.runNowSeq = nominal, 0
		return "/run-now"
	}
	j.runNowSeq++
	if workflow.GetVersion(ctx, changeRunNowIDs, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return "/run-now"
	}
	return fmt.Sprintf("/run-now-%d", j.runNowSeq+1)
}

// postpone records an occurrence that does not run as a Postponed history
// row: a run workflow that runs nothing. With fold (the job is behind), the
// occurrence is folded into the next row instead.
func (j *job) postpone(ctx workflow.Context, nominal time.Time, reason string, fold bool) {
	if fold {
		if j.folded == nil {
			j.folded = &foldedRow{first: nominal, reason: reason}
		} else {
			j.folded.more++
		}
		j.folded.last = nominal
		return
	}
	j.writePostponed(ctx, jobs.RunInput{Key: j.key, Nominal: nominal, Action: *j.state.Job.Properties.Action, Postponed: reason})
}

// writePostponed starts the run workflow of a Postponed row; when the last
// row in flight is written, the occurrences folded meanwhile get theirs.
func (j *job) writePostponed(ctx workflow.Context, in jobs.RunInput) {
	id := jobs.OccurrenceID(j.key.JobWorkflowID(), in.Nominal)
	j.starting++
	j.postponing++
	workflow.Go(ctx, func(ctx workflow.Context) {
		j.execute(ctx, id, in)
		j.postponing--
		if j.postponing == 0 {
			j.writeFolded(ctx)
		}
	})
}

// foldedRow is the occurrences a job postponed while an earlier Postponed
// row was still being written: under a load Temporal cannot keep up with,
// a run workflow for each would add to the load that made them late.
// Schedules skip such occurrences without a trace; recur writes them as
// one row.
type foldedRow struct {
	first, last time.Time
	more        int // occurrences after first, up to last
	reason      string
}

// writeFolded writes the occurrences folded so far as one Postponed row.
func (j *job) writeFolded(ctx workflow.Context) {
	f := j.folded
	if f == nil {
		return
	}
	j.folded = nil
	reason := f.reason
	if f.more > 0 {
		occurrences := "occurrences"
		if f.more == 1 {
			occurrences = "occurrence"
		}
		reason = fmt.Sprintf("%s; this row also stands for the %d %s after it, up to %s, postponed while recur was behind",
			reason, f.more, occurrences, f.last.UTC().Format(time.RFC3339))
	}
	j.writePostponed(ctx, jobs.RunInput{Key: j.key, Nominal: f.first, Action: *j.state.Job.Properties.Action,
		Postponed: reason, Folded: f.more})
}

// execute runs the run workflow id and returns its result; nil when the
// occurrence had already been handled before a restart (its ID exists).
// The caller counted the run in j.starting before it let the workflow
// go on: drain must see it at once.
func (j *job) execute(ctx workflow.Context, id string, in jobs.RunInput) *jobs.RunResult {
	queue := "" // the parent's
	if workflow.GetVersion(ctx, changeRunTaskQueue, workflow.DefaultVersion, 1) >= 1 {
		queue = jobs.RunTaskQueue
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            id,
		TaskQueue:             queue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		TypedSearchAttributes: j.key.SearchAttributes(jobs.KindRun, jobs.AttrNominalTime.ValueSet(in.Nominal)),
		StaticSummary:         jobs.RunSummary(in), // metadata only: no new command, replay unchanged
		StaticDetails:         jobs.RunDetails(in),
	})
	var result jobs.RunResult
	run := workflow.ExecuteChildWorkflow(cctx, jobs.RunWorkflowName, in)
	_ = run.GetChildWorkflowExecution().Get(ctx, nil) // a failed start fails run too
	j.starting--
	err := run.Get(ctx, &result)
	var appErr *temporal.ApplicationError
	switch {
	case err == nil:
		return &result
	case temporal.IsWorkflowExecutionAlreadyStartedError(err):
		workflow.GetLogger(ctx).Warn("occurrence already handled", "occurrence", id)
		return nil
	case errors.As(err, &appErr) && appErr.Type() == errTypeRunFailed && appErr.Details(&result) == nil:
		return &result
	default:
		return &jobs.RunResult{Status: jobs.Failed, Faulted: true, FailedAttempts: 1, Message: err.Error()}
	}
}

// apply counts a finished run in the status (DESIGN.md: executionCount
// counts runs, failureCount failed attempts, faultedCount runs whose main
// action failed after all retries) and faults the job when its rules say.
func (j *job) apply(r jobs.RunResult, started time.Time, manual bool) {
	if r.Status == jobs.Postponed {
		return
	}
	st := j.status()
	st.ExecutionCount++
	st.LastExecutionTime = &started
	st.FailureCount += r.FailedAttempts
	if !r.Faulted {
		j.state.ConsecutiveFaults = 0
		return
	}
	st.FaultedCount++
	j.state.ConsecutiveFaults++
	p := &j.state.Job.Properties
	switch {
	case manual:
	case p.Recurrence == nil,
		p.MaxConsecutiveFaults > 0 && j.state.ConsecutiveFaults >= p.MaxConsecutiveFaults:
		p.State = jobs.Faulted
		j.setNext(nil)
		j.generation++ // the loop may be waiting for the next occurrence
	}
}

// settle completes an enabled job that has nothing left to run, and keeps
// the state search attribute current.
func (j *job) settle(ctx workflow.Context) {
	p := &j.state.Job.Properties
	if p.State == jobs.Enabled && j.state.Next == nil && j.running == 0 && j.state.Buffered == nil {
		p.State = jobs.Completed
	}
	j.describe(ctx)
	j.publish(ctx)
	onChange := workflow.GetVersion(ctx, changeStateUpsertOnChange, workflow.DefaultVersion, 1) >= 1
	if current, ok := workflow.GetTypedSearchAttributes(ctx).GetKeyword(jobs.AttrState); onChange && ok && current == string(p.State) {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, jobs.AttrState.ValueSet(string(p.State))); err != nil {
		workflow.GetLogger(ctx).Error("upsert state", "error", err)
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

// recordOutcome keeps the outcome of the job's last run in its RecurStatus
// search attribute, so that failing jobs are one visibility filter away
// (RecurKind="job" AND RecurStatus="Failed"); upserted only on a change.
func (j *job) recordOutcome(ctx workflow.Context, status jobs.ExecutionStatus) {
	if current, ok := workflow.GetTypedSearchAttributes(ctx).GetKeyword(jobs.AttrStatus); ok && current == string(status) {
		return
	}
	if workflow.GetVersion(ctx, changeJobLastStatus, workflow.DefaultVersion, 1) < 1 {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, jobs.AttrStatus.ValueSet(string(status))); err != nil {
		workflow.GetLogger(ctx).Error("upsert the last outcome", "error", err)
	}
}
