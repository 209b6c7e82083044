package workflows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/worker"
)

// TestACollectionTellsItsJobsInOrderAndAPutDoesNotWait: a PUT that
// disables a collection of three jobs answers before they are told, and
// so does an enable sent with it, naming the message to its jobs it waits
// for, which waits its turn: each job hears the disable, then the enable,
// then the DELETE. The enable's message, once delivered, is written to the
// memo, where the API reads the operation's end (the API answers 202
// until then); the DELETE ends only once every job is told.
func TestACollectionTellsItsJobsInOrderAndAPutDoesNotWait(t *testing.T) {
	env := newEnv(t)
	worker.Register(env, &activities.Activities{})
	var mu sync.Mutex
	var log []string
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, s)
	}
	// Telling the jobs takes a moment, as on a busy server.
	env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).After(50 * time.Millisecond).Return(
		func(_ context.Context, req jobs.TellJobsRequest) error {
			what := strings.ToLower(string(req.Change.State))
			if req.Change.Deleted {
				what = "deleted"
			}
			for _, name := range req.Jobs {
				record(what + " " + name)
			}
			return nil
		})
	env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
		if told, ok := args.Get(0).(map[string]any)[jobs.MemoTold]; ok {
			record(fmt.Sprintf("told %v", told))
		}
	}).Return(nil)
	answered := func(name string) *testsuite.TestUpdateCallback {
		return &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("%s rejected: %v", name, err) },
			OnAccept: func() {},
			OnComplete: func(res any, err error) {
				require.NoError(t, err, name)
				if op, ok := res.(jobs.OperationResult); ok {
					name = fmt.Sprintf("%s (message %d)", name, op.Tell)
				}
				record(name + " answered")
			},
		}
	}
	coll := jobs.Collection{}
	env.RegisterDelayedCallback(func() {
		disabled := coll
		disabled.Properties.State = jobs.CollectionDisabled
		env.UpdateWorkflow(jobs.UpdatePutCollection, "put", answered("put"), jobs.PutCollectionRequest{Collection: disabled})
		env.UpdateWorkflow(jobs.UpdateCollectionState, "enable", answered("enable"), jobs.CollectionStateRequest{State: jobs.CollectionEnabled})
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(jobs.UpdateDeleteCollection, "delete", answered("delete"), jobs.DeleteCollectionRequest{})
	}, time.Minute)
	require.NoError(t, coll.Accept(key.CollectionKey()))
	env.ExecuteWorkflow(jobs.CollectionWorkflowName, jobs.CollectionInput{Key: key.CollectionKey(), Collection: &coll,
		Jobs: []string{"a", "b", "c"}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	require.Equal(t, []string{"put answered", "enable (message 2) answered"}, log[:2], "neither waits for its jobs: %q", log)
	rest := log[2:]
	for i, phase := range []struct{ signal, then string }{{"disabled", ""}, {"enabled", "told 2"}, {"deleted", "delete answered"}} {
		got := rest[:3]
		var want []string
		for _, j := range []string{"a", "b", "c"} {
			want = append(want, phase.signal+" "+j)
		}
		slices.Sort(got)
		require.Equal(t, want, got, "step %d: each job hears it, after the step before: %q", i, log)
		rest = rest[3:]
		if phase.then != "" {
			require.Equal(t, phase.then, rest[0], fmt.Sprintf("it ends once they are told: %q", log))
			rest = rest[1:]
		}
	}
	require.Empty(t, rest)
}

// TestACollectionsChangesWaitingToBeToldMerge: operations that come while
// the jobs are told a change queue one message behind it, the newest
// state, which every job hears after the first; each operation answers at
// once, naming the message whose delivery ends it. A DELETE is never
// merged.
func TestACollectionsChangesWaitingToBeToldMerge(t *testing.T) {
	env := newEnv(t)
	worker.Register(env, &activities.Activities{})
	var log []string
	env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).After(time.Minute).Return(
		func(_ context.Context, req jobs.TellJobsRequest) error {
			what := strings.ToLower(string(req.Change.State))
			if req.Change.Deleted {
				what = "deleted"
			}
			log = append(log, fmt.Sprintf("%s %q", what, req.Jobs))
			return nil
		})
	env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
		if told, ok := args.Get(0).(map[string]any)[jobs.MemoTold]; ok {
			log = append(log, fmt.Sprintf("told %v", told))
		}
	}).Return(nil)
	operation := func(name string, update string, arg any) {
		env.UpdateWorkflow(update, name, &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("%s rejected: %v", name, err) },
			OnAccept: func() {},
			OnComplete: func(res any, err error) {
				require.NoError(t, err, name)
				op, _ := res.(jobs.OperationResult)
				log = append(log, fmt.Sprintf("%s answered (message %d)", name, op.Tell))
			},
		}, arg)
	}
	state := func(name, state string) {
		operation(name, jobs.UpdateCollectionState, jobs.CollectionStateRequest{State: state})
	}
	env.RegisterDelayedCallback(func() { state("disable 1", jobs.CollectionDisabled) }, time.Second)
	env.RegisterDelayedCallback(func() {
		state("enable 1", jobs.CollectionEnabled)
		state("disable 2", jobs.CollectionDisabled)
		state("enable 2", jobs.CollectionEnabled)
		operation("delete", jobs.UpdateDeleteCollection, jobs.DeleteCollectionRequest{})
	}, 2*time.Second)
	coll := jobs.Collection{}
	require.NoError(t, coll.Accept(key.CollectionKey()))
	env.ExecuteWorkflow(jobs.CollectionWorkflowName, jobs.CollectionInput{Key: key.CollectionKey(), Collection: &coll,
		Jobs: []string{"a", "b", "c"}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{
		"disable 1 answered (message 1)",
		"enable 1 answered (message 2)", "disable 2 answered (message 2)", "enable 2 answered (message 2)",
		`disabled ["a" "b" "c"]`, "told 1",
		`enabled ["a" "b" "c"]`, "told 2",
		`deleted ["a" "b" "c"]`, "delete answered (message 0)",
	}, log)
}

// TestACollectionKeepsItsJobsNamesInItsMemo: the API lists a collection's
// jobs from the names in its memo, spread over keys so that an admission
// rewrites a few of them. Each key holds its names sorted; a job that
// leaves is gone from its key, and no other key is written for it.
func TestACollectionKeepsItsJobsNamesInItsMemo(t *testing.T) {
	env := newEnv(t)
	worker.Register(env, &activities.Activities{})
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", mock.Anything, mock.Anything).Return(nil)
	env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).Return(nil)
	var upserts []map[string]any
	env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
		fields := args.Get(0).(map[string]any)
		if _, view := fields[jobs.MemoCollection]; !view {
			upserts = append(upserts, fields)
		}
	}).Return()
	// More names than keys, in no order: some keys hold several.
	var joined []string
	for i := 40; i > 0; i-- {
		joined = append(joined, fmt.Sprintf("job-%02d", i))
	}
	env.RegisterDelayedCallback(func() {
		for _, name := range joined {
			env.SignalWorkflow(jobs.SignalMembership, jobs.MembershipRequest{Job: name, Seq: 1})
		}
	}, time.Second)
	var leftAt int
	env.RegisterDelayedCallback(func() {
		leftAt = len(upserts)
		env.SignalWorkflow(jobs.SignalMembership, jobs.MembershipRequest{Job: "job-07", Leave: true})
	}, 2*time.Second)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(jobs.UpdateDeleteCollection, "delete", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, jobs.DeleteCollectionRequest{})
	}, time.Minute)
	coll := jobs.Collection{}
	require.NoError(t, coll.Accept(key.CollectionKey()))
	env.ExecuteWorkflow(jobs.CollectionWorkflowName, jobs.CollectionInput{Key: key.CollectionKey(), Collection: &coll})
	require.NoError(t, env.GetWorkflowError())

	memo := map[string][]string{}
	for _, fields := range upserts {
		for k, v := range fields {
			memo[k] = v.([]string)
		}
	}
	want := map[string][]string{}
	for i := 1; i <= 40; i++ {
		name := fmt.Sprintf("job-%02d", i)
		k := jobs.JobNamesKey(name)
		if _, ok := want[k]; !ok {
			want[k] = []string{}
		}
		if name != "job-07" {
			want[k] = append(want[k], name)
		}
	}
	require.Equal(t, want, memo)
	require.Len(t, upserts, leftAt+1, "the leave costs one upsert")
	require.Equal(t, map[string]any{jobs.JobNamesKey("job-07"): want[jobs.JobNamesKey("job-07")]}, upserts[leftAt])
}

// TestACollectionTellsItsJobsOfNewTerms: a PUT that changes the
// collection's maxRecurrence tells each job the new terms, with no state
// to apply; a PUT that changes neither state nor quota tells none.
func TestACollectionTellsItsJobsOfNewTerms(t *testing.T) {
	env := newEnv(t)
	worker.Register(env, &activities.Activities{})
	var told []jobs.CollectionChange
	env.OnActivity(acts.TellJobs, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req jobs.TellJobsRequest) error {
			if !req.Change.Deleted {
				for range req.Jobs {
					told = append(told, req.Change)
				}
			}
			return nil
		})
	coll := jobs.Collection{}
	require.NoError(t, coll.Accept(key.CollectionKey()))
	hourly := coll
	hourly.Properties.Quota = &jobs.Quota{MaxJobCount: coll.Properties.Quota.MaxJobCount,
		MaxRecurrence: &jobs.MaxRecurrence{Frequency: "Hour", Interval: 1}}
	require.NoError(t, hourly.Accept(key.CollectionKey()))
	put := func(name string, c jobs.Collection) func() {
		return func() {
			env.UpdateWorkflow(jobs.UpdatePutCollection, name, &testsuite.TestUpdateCallback{
				OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
			}, jobs.PutCollectionRequest{Collection: c})
		}
	}
	env.RegisterDelayedCallback(put("quota", hourly), time.Second)
	env.RegisterDelayedCallback(put("same", hourly), 2*time.Second)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(jobs.UpdateDeleteCollection, "delete", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Error(err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, jobs.DeleteCollectionRequest{})
	}, time.Minute)
	env.ExecuteWorkflow(jobs.CollectionWorkflowName, jobs.CollectionInput{Key: key.CollectionKey(), Collection: &coll,
		Jobs: []string{"a", "b"}})
	require.NoError(t, env.GetWorkflowError())

	want := jobs.CollectionChange{Terms: &jobs.CollectionTerms{Revision: 1, MaxRecurrence: &jobs.MaxRecurrence{Frequency: "Hour", Interval: 1}}}
	require.Equal(t, []jobs.CollectionChange{want, want}, told)
}

// TestACollectionPutTodaysValidatorRefusesStillReplays: the PUTs recorded
// in collection.json are changed, in the history, into definitions
// today's validator refuses (a sku that is none), as if a later release
// had made the validator stricter than the one that took them. The
// history still replays: the handler takes the accepted form recorded
// with the write and never validates again.
func TestACollectionPutTodaysValidatorRefusesStillReplays(t *testing.T) {
	h := recorded(t, filepath.Join("testdata", "collection.json"))
	puts := 0
	for _, e := range h.GetEvents() {
		in := e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput()
		if in.GetName() != jobs.UpdatePutCollection {
			continue
		}
		p := in.GetArgs().GetPayloads()[0]
		var req jobs.PutCollectionRequest
		require.NoError(t, json.Unmarshal(p.GetData(), &req))
		req.Collection.Properties.Sku = &jobs.Sku{Name: "NotASku"}
		refused := req.Collection
		require.Error(t, refused.Accept(key.CollectionKey()), "today's validator refuses the PUT")
		var err error
		p.Data, err = json.Marshal(req)
		require.NoError(t, err)
		puts++
	}
	require.Positive(t, puts, "collection.json holds a PUT")
	require.NoError(t, replay(h))
}
