package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// admitPatience is how long a job waits for its collection's answer
// before it asks again: an answer is lost only if the collection's
// workflow ended (deleted) just after it took the request, and asking
// again is safe, since a collection admits a job it holds without
// counting it twice.
const admitPatience = 10 * time.Second

// undefinedGrace is how long a job workflow waits for its first
// definition: one started by a PUT that failed, or whose update was lost
// with its caller, ends after it. A first PUT still waiting for its
// collection then gives up too: its caller, whose request ends after
// api.RequestTimeout, has left long before.
const undefinedGrace = time.Minute

// admission is what a job knows of its collection's admissions: the
// collection is the one to keep its quotas and its list of jobs, and the
// job asks it before it takes its first definition, and any other its
// collection's terms, as the job last heard them, do not allow.
type admission struct {
	seq     int                      // the number of the last request sent
	answers map[int]jobs.AdmitAnswer // answers not yet taken, by request
	// The collection may hold the job's name once it admitted a request
	// of the job's, or while a request sent is unanswered: a job that
	// ends then asks to be forgotten, defined or not, so that no quota
	// slot outlives it.
	unanswered int  // requests sent whose answers the job has not taken
	sending    int  // requests on their way: a leave waits for them (leave)
	admitted   bool // an answer admitted the job
	took       int  // the Gen of the admission ahead the job took, 0 for none
	lease      int  // the lease the job's workflow started on, 0 for none
	// terms are the newest the job heard of, by revision; nil until its
	// first admission in this run.
	terms *jobs.CollectionTerms
	// forgotten: the collection deleted the job, or the job asked it to
	// forget it (leave).
	forgotten bool
}

// heard keeps the collection's terms t, unless the job heard newer ones:
// an answer and a message of the collection may arrive in either order.
// It reports whether t are the newest.
func (a *admission) heard(t jobs.CollectionTerms) bool {
	if a.terms != nil && t.Revision < a.terms.Revision {
		return false
	}
	a.terms = &t
	return true
}

// receive keeps an answer of the collection's for the admission that
// waits for it. An answer to a request this run has not sent is a late
// one to the run before a continue-as-new (whose requests are numbered
// from 1 too): it is dropped, as one to a request answered already is
// never taken.
func (a *admission) receive(answer jobs.AdmitAnswer) {
	if answer.Seq > a.seq {
		return
	}
	if a.answers == nil {
		a.answers = map[int]jobs.AdmitAnswer{}
	}
	a.answers[answer.Seq] = answer
}

// admissionMargin is how long before an Admission's Until a job stops
// taking it.
const admissionMargin = jobs.AdmissionMargin

// admit has the job's collection admit def, unless the PUT carries the
// collection's admission (adm), or the job is defined already, and the
// terms allow def; it returns whether the collection is disabled, or why
// it refused.
func (j *job) admit(ctx workflow.Context, def jobs.Job, adm *jobs.Admission) (collectionDisabled bool, err error) {
	gap, err := shortestGap(ctx, def, creationTime(ctx))
	if err != nil {
		return false, err
	}
	a := &j.admission
	admitted := false
	if adm != nil && workflow.Now(ctx).Before(adm.Until.Add(-admissionMargin)) {
		// The collection holds the name until Until, and from then on as
		// long as this workflow runs (collection.go, checkReservations):
		// from here the job asks to be forgotten when it ends.
		a.admitted, admitted = true, true
		a.took = adm.Gen
		a.heard(adm.Terms)
	}
	if t := a.terms; t != nil && (j.state() != nil || admitted) && !j.m.Deleted() && t.Check(gap, j.key.Collection) == nil {
		return t.Disabled, nil
	}
	// Asked before the first request, so that every history of a job
	// that asks records the version.
	leftAsksNothing := workflow.GetVersion(ctx, versionLeftAsksNothing, workflow.DefaultVersion, 1) != workflow.DefaultVersion
	a.seq++
	seq := a.seq
	req := jobs.MembershipRequest{Job: j.key.Job, Seq: seq, ShortestGap: gap}
	sent := false
	for answered := false; !answered; {
		if leftAsksNothing && a.forgotten {
			// The job left (deleted) while it waited for the answer:
			// asked again, the collection would admit the name anew, for
			// a job that is gone, and hold it for good.
			return false, jobs.NotFound("job " + j.key.Job).ToApplicationError()
		}
		patience := admitPatience
		if j.state() == nil {
			// A first definition waits no longer than the job's grace:
			// past it, the job gives up its name (step).
			patience = min(patience, j.graceLeft(ctx))
			if patience <= 0 {
				return false, j.unadmitted()
			}
		}
		a.sending++
		err := workflow.SignalExternalWorkflow(ctx, j.key.CollectionWorkflowID(), "", jobs.SignalMembership, req).Get(ctx, nil)
		a.sending--
		if err != nil {
			// No collection workflow runs: there is no such collection.
			return false, jobs.CollectionMissing(j.key.Collection).ToApplicationError()
		}
		if !sent {
			sent = true
			a.unanswered++
		}
		if err := awaitAnswer(ctx, patience, func() bool {
			_, ok := a.answers[seq]
			return ok || leftAsksNothing && a.forgotten
		}); err != nil {
			return false, err
		}
		_, answered = a.answers[seq] // or the patience has passed, or the job left
	}
	answer := a.answers[seq]
	delete(a.answers, seq)
	a.unanswered--
	if answer.Error != nil {
		return false, answer.Error.ToApplicationError()
	}
	a.admitted = true
	a.heard(answer.Terms)
	return a.terms.Disabled, nil
}

// awaitAnswer waits until answered or patience has passed, and cancels
// its timer once answered: a timer left to fire would wake the workflow
// for nothing, a workflow task of each admission.
func awaitAnswer(ctx workflow.Context, patience time.Duration, answered func() bool) error {
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	_, err := workflow.AwaitWithTimeout(tctx, patience, answered)
	return err
}

// mayHold reports whether the collection may hold the job's name.
func (a *admission) mayHold() bool { return a.admitted || a.unanswered > 0 }

// unadmitted is the error of a first PUT whose collection did not answer
// within the job's grace. Its code is NotFound's, as a PUT that reaches a
// job workflow on its way out meets: the API sends it again, to the new
// workflow that starts once this one has ended.
func (j *job) unadmitted() error {
	return (&jobs.Error{Code: jobs.CodeNotFound, Message: fmt.Sprintf(
		"job %s: its collection did not answer in time; send the PUT again", j.key.Job)}).ToApplicationError()
}

// leave has the collection forget the job, unless the collection itself
// deleted it (and may exist again under its name), and waits until the
// collection has the request: once, from a DELETE or as the workflow
// ends.
func (j *job) leave(ctx workflow.Context) {
	if j.admission.forgotten || j.state() == nil && !j.admission.mayHold() {
		return
	}
	j.admission.forgotten = true
	if j.admission.sending > 0 && workflow.GetVersion(ctx, versionLeftAsksNothing, workflow.DefaultVersion, 1) != workflow.DefaultVersion {
		// A request on its way could arrive after the leave, and the
		// collection would admit the name anew for a job that is gone:
		// the leave goes once it has arrived.
		if err := workflow.Await(ctx, func() bool { return j.admission.sending == 0 }); err != nil {
			return
		}
	}
	// Only the job that took the admission ahead of its name took the
	// name's last one: a job defined by asking, while the name was
	// reserved for another PUT, leaves with that PUT's admission still on
	// its way (jobs.MembershipRequest.Defined).
	req := jobs.MembershipRequest{Job: j.key.Job, Leave: true, Defined: j.state() != nil && j.admission.took != 0}
	if j.admission.lease != 0 {
		req.Lease, req.Run = j.admission.lease, workflow.GetInfo(ctx).FirstRunID
	}
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
		return jobs.ShortestGap(def, c)
	}).Get(&gap)
	return gap, err
}

// graceLeft returns how long a job workflow not yet defined has left
// before it ends; none once its grace has passed.
func (j *job) graceLeft(ctx workflow.Context) time.Duration {
	return max(j.m.GraceEnd().Sub(workflow.Now(ctx)), 0)
}
