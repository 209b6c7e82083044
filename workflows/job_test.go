package workflows_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
	"github.com/recurhq/recur/worker"
)

var key = jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}

// acts names activities for mocks, as workflow code names them.
var acts *activities.Activities

func hourly(start time.Time, count int) jobs.Job {
	return jobs.Job{Properties: jobs.Properties{
		StartTime:  recurrence.At(start),
		Action:     &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: "https://example.com/", Method: "GET"}}},
		Recurrence: &recurrence.Recurrence{Frequency: "Hour", Count: &count},
	}}
}

var updates int

// collectionStandIn answers for the job's collection in env: it admits
// every definition unless refuse says why not, and records the requests.
type collectionStandIn struct {
	env      *testsuite.TestWorkflowEnvironment
	refuse   func(jobs.MembershipRequest) *jobs.Error
	terms    jobs.CollectionTerms // in its answers
	requests []jobs.MembershipRequest
	left     []time.Time // when the job asked to be forgotten
	// answerAfter delays each answer, as a collection stopped or swamped
	// does.
	answerAfter time.Duration
}

func newCollectionStandIn(env *testsuite.TestWorkflowEnvironment) *collectionStandIn {
	c := &collectionStandIn{env: env, terms: jobs.CollectionTerms{Revision: 1}}
	env.OnSignalExternalWorkflow(mock.Anything, key.CollectionWorkflowID(), "", jobs.SignalMembership, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			req := arg.(jobs.MembershipRequest)
			c.requests = append(c.requests, req)
			if req.Leave {
				c.left = append(c.left, env.Now().UTC())
				return nil
			}
			answer := jobs.AdmitAnswer{Seq: req.Seq, Terms: c.terms}
			if c.refuse != nil {
				answer.Error = c.refuse(req)
			}
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(jobs.SignalAdmitted, answer) }, c.answerAfter)
			return nil
		}).Maybe()
	return c
}

// queryJob reads the job as its query answers, deleted or not.
func queryJob(t *testing.T, env *testsuite.TestWorkflowEnvironment) jobs.JobView {
	t.Helper()
	res, err := env.QueryWorkflow(jobs.QueryJob)
	require.NoError(t, err)
	var v jobs.JobView
	require.NoError(t, res.Get(&v))
	return v
}

// update sends an update from within the test environment and fails the
// test if it is rejected.
func update(t *testing.T, env *testsuite.TestWorkflowEnvironment, name string, arg any) {
	updates++ // update IDs must differ, or Temporal takes a repeat for the first
	env.UpdateWorkflow(name, fmt.Sprintf("%s-%d", name, updates), &testsuite.TestUpdateCallback{
		OnReject:   func(err error) { t.Errorf("%s rejected: %v", name, err) },
		OnAccept:   func() {},
		OnComplete: func(any, error) {},
	}, arg)
}

// TestJobRunsEveryOccurrenceOnceUnderItsID: an hourly job with count 3
// runs exactly three occurrences, each with its own ID as idempotency key,
// then reports itself completed; DELETE ends the workflow.
func TestJobRunsEveryOccurrenceOnceUnderItsID(t *testing.T) {
	env := newEnv(t)
	start := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	env.SetStartTime(start.Add(-30 * time.Minute))
	worker.Register(env, &activities.Activities{})
	newCollectionStandIn(env)

	var ids []string
	env.OnActivity(acts.HTTP, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in jobs.HTTPRequestInput) (jobs.HTTPResponse, error) {
			ids = append(ids, in.OccurrenceID)
			return jobs.HTTPResponse{StatusCode: 200, Attempt: 1}, nil
		})
	env.RegisterDelayedCallback(func() { update(t, env, jobs.UpdatePutJob, jobs.PutJobRequest{Job: hourly(start, 3)}) }, 0)
	var view jobs.JobView
	env.RegisterDelayedCallback(func() {
		view = queryJob(t, env)
		update(t, env, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{})
	}, 5*time.Hour)
	env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key})

	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{
		"job:s/rg/c/j@2026-06-01T12:00:00Z",
		"job:s/rg/c/j@2026-06-01T13:00:00Z",
		"job:s/rg/c/j@2026-06-01T14:00:00Z",
	}, ids)
	require.Equal(t, jobs.Completed, view.Job.Properties.State)
	require.Equal(t, 3, view.Job.Properties.Status.ExecutionCount)
	require.Nil(t, view.Job.Properties.Status.NextExecutionTime)
}

// TestJobRejectsAnInvalidDefinitionWithoutTouchingHistory: the update
// validator answers a bad recurrence with its path.
func TestJobRejectsAnInvalidDefinition(t *testing.T) {
	env := newEnv(t)
	worker.Register(env, &activities.Activities{})
	newCollectionStandIn(env)
	bad := hourly(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC), 0) // count 0 is invalid
	var rejected error
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(jobs.UpdatePutJob, "bad", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { rejected = err },
			OnAccept:   func() { t.Error("an invalid job was accepted") },
			OnComplete: func(any, error) {},
		}, jobs.PutJobRequest{Job: bad})
	}, 0)
	env.RegisterDelayedCallback(func() { update(t, env, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{}) }, time.Minute)
	env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key})
	require.Error(t, rejected)
	e, ok := jobs.FromApplicationError(rejected)
	require.True(t, ok, "%v", rejected)
	require.Equal(t, "properties.recurrence.count", e.Target)
}

func converterFor() converter.DataConverter { return converter.GetDefaultDataConverter() }

// TestJobRejectsTimeSpansOutOfRange: the update validator refuses a new
// definition whose TimeSpan has 99 minutes, but a definition stored before
// that rule (here carried over by continue-as-new) still runs: its run
// resolves the retry policy as it always did.
func TestJobRejectsTimeSpansOutOfRange(t *testing.T) {
	env := newEnv(t)
	start := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	env.SetStartTime(start.Add(-30 * time.Minute))
	worker.Register(env, &activities.Activities{})
	newCollectionStandIn(env)
	var ran []string
	env.OnActivity(acts.HTTP, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in jobs.HTTPRequestInput) (jobs.HTTPResponse, error) {
			ran = append(ran, in.OccurrenceID)
			return jobs.HTTPResponse{StatusCode: 200, Attempt: 1}, nil
		})
	lenient := hourly(start, 1)
	lenient.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "Fixed", RetryInterval: "99:99:99"}
	// The stored definition is the accepted one with the interval it had
	// before the rule.
	stored := hourly(start, 1)
	stored.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "Fixed", RetryInterval: "PT1M"}
	require.NoError(t, stored.Accept(key, start.Add(-time.Hour)))
	stored.Properties.Action.RetryPolicy.RetryInterval = "99:99:99"
	next := start
	var rejected error
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(jobs.UpdatePutJob, "new", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { rejected = err },
			OnAccept:   func() { t.Error("a TimeSpan of 99 minutes was accepted") },
			OnComplete: func(any, error) {},
		}, jobs.PutJobRequest{Job: lenient})
	}, time.Minute)
	env.RegisterDelayedCallback(func() { update(t, env, jobs.UpdateDeleteJob, jobs.DeleteJobRequest{}) }, 2*time.Hour)
	env.ExecuteWorkflow(jobs.JobWorkflowName, jobs.JobInput{Key: key, State: &jobs.JobState{
		Job: stored, PlannedFrom: start.Add(-time.Hour), Next: &next}})

	require.NoError(t, env.GetWorkflowError())
	e, ok := jobs.FromApplicationError(rejected)
	require.True(t, ok, "%v", rejected)
	require.Equal(t, "properties.action.retryPolicy.retryInterval", e.Target)
	require.Equal(t, []string{"job:s/rg/c/j@2026-06-01T12:00:00Z"}, ran, "the stored definition ran")
}
