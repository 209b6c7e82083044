package workflows

import (
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// shortestGapSample is how many occurrences the maxRecurrence quota looks
// at.
const shortestGapSample = 500

// admitPatience bounds one attempt to have the collection admit a job;
// the job asks again after it. Asking again is safe: a collection admits
// a job it holds without counting it twice.
const admitPatience = 10 * time.Second

// undefinedGrace is how long a job workflow waits for its first
// definition: one started by a PUT that failed, or whose update was lost
// with its caller, ends after it.
const undefinedGrace = time.Minute

// admission is what a job knows of its collection's admissions: the
// collection is the one to keep its quotas and its list of jobs, and the
// job asks it before it takes any definition.
type admission struct {
	seq     int                      // the number of the last request sent
	answers map[int]jobs.AdmitAnswer // answers by signal not yet taken, by request
}

// take keeps an answer by signal (admitBySignal).
func (a *admission) take(answer jobs.AdmitAnswer) {
	if a.answers == nil {
		a.answers = map[int]jobs.AdmitAnswer{}
	}
	a.answers[answer.Seq] = answer
}

// admit has the job's collection admit def, and waits for its answer.
func (j *job) admit(ctx workflow.Context, def jobs.Job) error {
	gap, err := shortestGap(ctx, def, created(ctx))
	if err != nil {
		return err
	}
	j.admission.seq++
	req := jobs.MembershipRequest{Job: j.key.Job, Seq: j.admission.seq, ShortestGap: gap}
	var answer jobs.AdmitAnswer
	if workflow.GetVersion(ctx, versionAdmitByUpdate, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		answer, err = j.admitBySignal(ctx, req)
	} else {
		answer, err = j.admitByUpdate(ctx, req)
	}
	if err != nil {
		return err
	}
	if answer.Error != nil {
		return answer.Error.ToApplicationError()
	}
	return nil
}

// admitByUpdate sends the request as an update of the collection's
// workflow from a local activity (activities.AdmitJob): the job's workflow
// task stays open until the collection answers, one workflow task of each.
// The update ID names this run and request, so that every attempt is the
// same request to the collection. Between attempts the job waits on a
// timer, not in the local activity's own retries: those would keep its
// workflow task open, heartbeated at three events each, and every other
// message to the job waiting behind it.
func (j *job) admitByUpdate(ctx workflow.Context, req jobs.MembershipRequest) (jobs.AdmitAnswer, error) {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: admitPatience,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	in := jobs.AdmissionRequest{
		Key:      j.key,
		UpdateID: workflow.GetInfo(ctx).WorkflowExecution.RunID + "/" + strconv.Itoa(req.Seq),
		Request:  req,
	}
	for backoff := time.Second; ; backoff = min(2*backoff, admitPatience) {
		var answer jobs.AdmitAnswer
		err := workflow.ExecuteLocalActivity(lctx, acts.AdmitJob, in).Get(ctx, &answer)
		if err == nil {
			return answer, nil
		}
		workflow.GetLogger(ctx).Warn("the job's collection did not answer its admission; asking again", "error", err, "after", backoff)
		if err := workflow.Sleep(ctx, backoff); err != nil {
			return jobs.AdmitAnswer{}, err
		}
	}
}

// admitBySignal is how jobs asked before admitByUpdate, kept for their
// histories: a signal each way, and the request again after admitPatience
// without an answer (the collection's workflow ended just after it took
// the request).
func (j *job) admitBySignal(ctx workflow.Context, req jobs.MembershipRequest) (jobs.AdmitAnswer, error) {
	a := &j.admission
	for answered := false; !answered; {
		if err := workflow.SignalExternalWorkflow(ctx, j.key.CollectionWorkflowID(), "", jobs.SignalMembership, req).Get(ctx, nil); err != nil {
			// No collection workflow runs: there is no such collection.
			return jobs.AdmitAnswer{Seq: req.Seq, Error: jobs.CollectionMissing(j.key.Collection)}, nil
		}
		var err error
		answered, err = workflow.AwaitWithTimeout(ctx, admitPatience, func() bool { _, ok := a.answers[req.Seq]; return ok })
		if err != nil {
			return jobs.AdmitAnswer{}, err
		}
	}
	answer := a.answers[req.Seq]
	delete(a.answers, req.Seq)
	return answer, nil
}

// leave has the collection forget the job, unless the collection itself
// deleted it (and may exist again under its name).
func (j *job) leave(ctx workflow.Context) {
	if j.state == nil || j.forgotten {
		return
	}
	req := jobs.MembershipRequest{Job: j.key.Job, Leave: true}
	if err := workflow.SignalExternalWorkflow(ctx, j.key.CollectionWorkflowID(), "", jobs.SignalMembership, req).Get(ctx, nil); err != nil {
		// The collection is gone (deleted meanwhile): nothing to forget.
		workflow.GetLogger(ctx).Warn("tell the collection the job is gone", "error", err)
	}
}

// shortestGap is how close def's occurrences come when planned at c; 0 for
// a one-time job or one whose rule does not compile (Accept refuses it).
func shortestGap(ctx workflow.Context, def jobs.Job, c time.Time) (time.Duration, error) {
	var gap time.Duration
	err := workflow.SideEffect(ctx, func(workflow.Context) any {
		rule, err := recurrence.Compile(def.Properties.Schedule(), c)
		if err != nil {
			return time.Duration(0)
		}
		g, _ := rule.ShortestGap(c, shortestGapSample)
		return g
	}).Get(&gap)
	return gap, err
}

// undefinedUntil returns when a job workflow not yet defined ends.
func undefinedUntil(ctx workflow.Context) time.Time {
	return workflow.GetInfo(ctx).WorkflowStartTime.Add(undefinedGrace)
}
