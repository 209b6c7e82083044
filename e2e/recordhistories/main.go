// Command recordhistories records the histories that workflows/replay_test
// replays: it runs recur's workflows on an in-process Temporal server
// against a local HTTP target and writes each workflow's history as JSON to
// workflows/testdata. Run it from the repository root when a workflow
// change is meant to ship, after guarding the change with
// workflow.GetVersion, and keep the old files: they prove old histories
// still replay.
//
//	go run ./e2e/recordhistories
//	go run ./e2e/recordhistories -tag overlap   # job-overlap.json, ...
//
// -tag names a new set beside the old ones instead of overwriting them.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// finishedRetention is how long the recorded finished jobs are kept.
const finishedRetention = 8 * time.Second

func main() {
	tag := flag.String("tag", "", "write collection-`TAG`.json, job-TAG.json, job-gone-TAG.json, job-idle-TAG.json, job-held-TAG.json, job-doomed-TAG.json, job-behind-TAG.json and job-unadmitted-TAG.json, keeping the files of earlier recordings")
	flag.Parse()
	if err := record(filepath.Join("workflows", "testdata"), *tag); err != nil {
		log.Fatal(err)
	}
}

func record(dir, tag string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// Plain: the replayer reads the histories with Temporal's default
	// converter, and the files hold no secret.
	st, err := recurtest.StartWith(recurtest.Config{Plain: true, Activities: []func(*activities.Activities){
		// Long enough for job j's run now and DELETE, short enough that
		// job gone deletes itself while the tool waits.
		func(a *activities.Activities) { a.FinishedRetention = finishedRetention },
	}})
	if err != nil {
		return err
	}
	defer st.Stop()
	c := st.Temporal.GetDefaultClient()
	holding := make(chan struct{}, 1)
	release := make(chan struct{})
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/fail"):
			w.WriteHeader(http.StatusInternalServerError)
			return
		case strings.HasSuffix(r.URL.Path, "/hold"):
			holding <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer target.Close()
	defer close(release)
	behind := make(chan error, 1)
	go func() { behind <- recordBehind(ctx, dir, tag, target.URL) }()
	unadmitted := make(chan error, 1)
	go func() { unadmitted <- recordUnadmitted(ctx, c, dir, tag, target.URL) }()

	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	if err := put(ctx, c, k, jobs.CollectionWorkflowName, jobs.CollectionInput{Key: k.CollectionKey()}, k.CollectionWorkflowID(),
		jobs.UpdatePutCollection, jobs.PutCollectionRequest{Collection: jobs.Collection{}}); err != nil {
		return err
	}
	// A job whose main action fails once without retries, runs its error
	// action, then is run now and deleted.
	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	count := 1
	job := jobs.Job{Properties: jobs.Properties{
		StartTime: recurrence.At(start),
		Action: &jobs.Action{
			ActionSpec:  jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target.URL + "/fail", Method: "POST"}, RetryPolicy: &jobs.RetryPolicy{RetryType: "None"}},
			ErrorAction: &jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target.URL + "/error", Method: "POST"}},
		},
		Recurrence: &recurrence.Recurrence{Frequency: "Hour", Count: &count},
	}}
	if err := put(ctx, c, k, jobs.JobWorkflowName, jobs.JobInput{Key: k}, k.JobWorkflowID(), jobs.UpdatePutJob, jobs.PutJobRequest{Job: job}); err != nil {
		return err
	}
	if err := waitRuns(ctx, c, k, 1); err != nil {
		return err
	}
	if err := runsNowTogether(ctx, c, k); err != nil {
		return err
	}
	if err := waitRuns(ctx, c, k, 5); err != nil {
		return err
	}
	if err := put(ctx, c, k, "", nil, k.JobWorkflowID(), jobs.UpdateDeleteJob, jobs.DeleteJobRequest{}); err != nil {
		return err
	}
	if err := c.GetWorkflow(ctx, k.JobWorkflowID(), "").Get(ctx, nil); err != nil {
		return err
	}
	// A job deleted while the action of its run now is held by its
	// target: the DELETE cancels the activity and the workflow ends at
	// once.
	held := k
	held.Job = "held"
	if err := put(ctx, c, held, jobs.JobWorkflowName, jobs.JobInput{Key: held}, held.JobWorkflowID(), jobs.UpdatePutJob,
		jobs.PutJobRequest{Job: jobs.Job{Properties: jobs.Properties{StartTime: recurrence.At(time.Now().UTC().Add(24 * time.Hour)),
			Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target.URL + "/hold", Method: "POST"}}}}}}); err != nil {
		return err
	}
	if err := put(ctx, c, held, "", nil, held.JobWorkflowID(), jobs.UpdateRunNow, jobs.RunNowRequest{}); err != nil {
		return err
	}
	select {
	case <-holding:
	case <-ctx.Done():
		return fmt.Errorf("job held: its run now never reached the target: %w", ctx.Err())
	}
	if err := put(ctx, c, held, "", nil, held.JobWorkflowID(), jobs.UpdateDeleteJob, jobs.DeleteJobRequest{}); err != nil {
		return err
	}
	if err := c.GetWorkflow(ctx, held.JobWorkflowID(), "").Get(ctx, nil); err != nil {
		return err
	}
	// A one-time job that completes and, its retention passed, deletes
	// itself: its collection hears of it.
	gone := k
	gone.Job = "gone"
	once := jobs.Job{Properties: jobs.Properties{Action: &jobs.Action{
		ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target.URL + "/once", Method: "POST"}}}}}
	if err := put(ctx, c, gone, jobs.JobWorkflowName, jobs.JobInput{Key: gone}, gone.JobWorkflowID(), jobs.UpdatePutJob, jobs.PutJobRequest{Job: once}); err != nil {
		return err
	}
	if err := c.GetWorkflow(ctx, gone.JobWorkflowID(), "").Get(ctx, nil); err != nil {
		return fmt.Errorf("job gone never deleted itself: %w", err)
	}
	time.Sleep(time.Second) // the collection's task that takes the signal
	// A job far from its first run, admitted by its collection ahead of
	// its PUT, as the API asks, beside a name whose PUT never comes (the
	// collection gives it up once it looks), and redefined without asking
	// its collection again (its terms allow it), which the collection
	// tells of a PUT that disables it, an enable, and the collection's
	// DELETE, which ends the collection's workflow.
	idle := k
	idle.Job = "idle"
	var answers []jobs.AdmitAnswer
	if err := updateInto(ctx, c, k.CollectionWorkflowID(), jobs.UpdateAdmit, jobs.AdmitRequest{Jobs: []jobs.MembershipRequest{
		{Job: idle.Job}, {Job: "never-put"}}}, &answers); err != nil {
		return err
	}
	if len(answers) != 2 || answers[0].Admission == nil {
		return fmt.Errorf("the collection did not admit job idle ahead: %+v", answers)
	}
	admission := answers[0].Admission
	for _, later := range []time.Duration{24 * time.Hour, 25 * time.Hour} {
		if err := put(ctx, c, idle, jobs.JobWorkflowName, jobs.JobInput{Key: idle}, idle.JobWorkflowID(), jobs.UpdatePutJob,
			jobs.PutJobRequest{Job: jobs.Job{Properties: jobs.Properties{StartTime: recurrence.At(time.Now().UTC().Add(later)),
				Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target.URL + "/idle", Method: "POST"}}}}},
				Admission: admission}); err != nil {
			return err
		}
		admission = nil
	}
	time.Sleep(reservationsLooked) // the collection looks at the jobs it reserved names for
	if err := put(ctx, c, k, "", nil, k.CollectionWorkflowID(), jobs.UpdatePutCollection,
		jobs.PutCollectionRequest{Collection: jobs.Collection{Properties: jobs.CollectionProperties{State: jobs.CollectionDisabled}}}); err != nil {
		return err
	}
	if err := put(ctx, c, k, "", nil, k.CollectionWorkflowID(), jobs.UpdateCollectionState, jobs.CollectionStateRequest{State: jobs.CollectionEnabled}); err != nil {
		return err
	}
	// A name admitted ahead of a PUT that has not reached its job when
	// the collection is deleted: the DELETE holds it, starting its job's
	// workflow, deleted, which refuses the PUT and ends once the
	// admission has lapsed.
	doomed := k
	doomed.Job = "doomed"
	answers = nil
	if err := updateInto(ctx, c, k.CollectionWorkflowID(), jobs.UpdateAdmit, jobs.AdmitRequest{Jobs: []jobs.MembershipRequest{
		{Job: doomed.Job}}}, &answers); err != nil {
		return err
	}
	if len(answers) != 1 || answers[0].Admission == nil {
		return fmt.Errorf("the collection did not admit job doomed ahead: %+v", answers)
	}
	if err := put(ctx, c, k, "", nil, k.CollectionWorkflowID(), jobs.UpdateDeleteCollection, jobs.DeleteCollectionRequest{}); err != nil {
		return err
	}
	err = put(ctx, c, doomed, jobs.JobWorkflowName, jobs.JobInput{Key: doomed}, doomed.JobWorkflowID(), jobs.UpdatePutJob,
		jobs.PutJobRequest{Job: jobs.Job{Properties: jobs.Properties{StartTime: recurrence.At(time.Now().UTC().Add(time.Hour)),
			Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target.URL + "/doomed", Method: "POST"}}}}},
			Admission: answers[0].Admission})
	if e, ok := jobs.FromApplicationError(err); !ok || e.Code != jobs.CodeNotFound {
		return fmt.Errorf("the PUT of job doomed after its collection's DELETE: %v, not NotFound", err)
	}
	if err := c.GetWorkflow(ctx, idle.JobWorkflowID(), "").Get(ctx, nil); err != nil {
		return fmt.Errorf("job idle never ended with its collection: %w", err)
	}
	if err := c.GetWorkflow(ctx, doomed.JobWorkflowID(), "").Get(ctx, nil); err != nil {
		return fmt.Errorf("job doomed never ended: %w", err)
	}
	if err := <-behind; err != nil {
		return fmt.Errorf("the job behind: %w", err)
	}
	if err := <-unadmitted; err != nil {
		return fmt.Errorf("the job never admitted: %w", err)
	}
	files := map[string]string{
		"collection": k.CollectionWorkflowID(),
		"job":        k.JobWorkflowID(),
		"job-gone":   gone.JobWorkflowID(),
		"job-idle":   idle.JobWorkflowID(),
		"job-held":   held.JobWorkflowID(),
		"job-doomed": doomed.JobWorkflowID(),
	}
	for name, id := range files {
		if tag != "" {
			name += "-" + tag
		}
		if err := save(ctx, c, id, filepath.Join(dir, name+".json")); err != nil {
			return err
		}
	}
	return nil
}

// reservationsLooked is how long after admitting a name ahead of its PUT
// the collection has looked at its job: workflows.reservationGrace and
// reservationBatch, and a margin.
const reservationsLooked = 28 * time.Second

// updateInto sends an update to a running workflow and decodes its result
// into result.
func updateInto(ctx context.Context, c client.Client, id, update string, arg, result any) error {
	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: update, Args: []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return err
	}
	return handle.Get(ctx, result)
}

// put sends an update, with start when workflow is set.
func put(ctx context.Context, c client.Client, k jobs.Key, workflow string, input any, id, update string, arg any) error {
	opts := client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: update, Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted}
	var handle client.WorkflowUpdateHandle
	var err error
	if workflow == "" {
		handle, err = c.UpdateWorkflow(ctx, opts)
	} else {
		opts.WorkflowID = ""
		op := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
			ID: id, TaskQueue: jobs.TaskQueue, WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
			TypedSearchAttributes: kindOf(k, workflow),
		}, workflow, input)
		handle, err = c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op, UpdateOptions: opts})
	}
	if err != nil {
		return fmt.Errorf("%s on %s: %w", update, id, err)
	}
	return handle.Get(ctx, nil)
}

// kindOf returns the search attributes the API starts workflow with.
func kindOf(k jobs.Key, workflow string) temporal.SearchAttributes {
	if workflow == jobs.CollectionWorkflowName {
		return k.CollectionKey().SearchAttributes(jobs.KindCollection)
	}
	return k.SearchAttributes(jobs.KindJob)
}

// save writes a workflow's history as the JSON the replayer reads (the
// shape of `temporal workflow show --output json`).
func save(ctx context.Context, c client.Client, id, path string) error {
	iter := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	history := &historypb.History{}
	for iter.HasNext() {
		e, err := iter.Next()
		if err != nil {
			return fmt.Errorf("history of %s: %w", id, err)
		}
		history.Events = append(history.Events, e)
	}
	data, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(history)
	if err != nil {
		return err
	}
	log.Printf("%s: %d events", path, len(history.Events))
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// runsNowTogether runs job k now four times at once: some share a
// workflow task, and so a nominal time, and each gets its own ID.
func runsNowTogether(ctx context.Context, c client.Client, k jobs.Key) error {
	errs := make(chan error, 4)
	for range cap(errs) {
		go func() { errs <- put(ctx, c, k, "", nil, k.JobWorkflowID(), jobs.UpdateRunNow, jobs.RunNowRequest{}) }()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// waitRuns waits until job k has counted n runs in its memo's status.
func waitRuns(ctx context.Context, c client.Client, k jobs.Key, n int) error {
	for {
		d, err := c.DescribeWorkflowExecution(ctx, k.JobWorkflowID(), "")
		if err != nil {
			return err
		}
		var st jobs.StatusView
		if p, ok := d.GetWorkflowExecutionInfo().GetMemo().GetFields()[jobs.MemoStatus]; ok {
			if err := converter.GetDefaultDataConverter().FromPayload(p, &st); err != nil {
				return err
			}
		}
		if st.Status.ExecutionCount >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("job %s ran %d times, not %d: %w", k.Job, st.Status.ExecutionCount, n, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// recordBehind records job-behind.json: an every-minute job whose first
// task comes two minutes late, as on a Temporal far behind: it catches up
// (two Postponed rows and a run in one task), runs once more, and is
// deleted.
func recordBehind(ctx context.Context, dir, tag, target string) error {
	st, err := recurtest.StartWith(recurtest.Config{Plain: true})
	if err != nil {
		return err
	}
	defer st.Stop()
	c := st.Temporal.GetDefaultClient()
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "behind"}
	if err := startJobBehind(ctx, c, k, target); err != nil {
		return err
	}
	if err := waitRuns(ctx, c, k, 2); err != nil {
		return err
	}
	if err := put(ctx, c, k, "", nil, k.JobWorkflowID(), jobs.UpdateDeleteJob, jobs.DeleteJobRequest{}); err != nil {
		return err
	}
	if err := c.GetWorkflow(ctx, k.JobWorkflowID(), "").Get(ctx, nil); err != nil {
		return err
	}
	name := "job-behind"
	if tag != "" {
		name += "-" + tag
	}
	return save(ctx, c, k.JobWorkflowID(), filepath.Join(dir, name+".json"))
}

// recordUnadmitted records a job whose first PUT its collection never
// answers: the collection's workflow ID belongs to a workflow no worker
// runs, which takes the job's signals and does nothing. At its grace the
// PUT gives up, the job asks to be forgotten and its workflow ends.
func recordUnadmitted(ctx context.Context, c client.Client, dir, tag, target string) error {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "silent", Job: "unadmitted"}
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: k.CollectionWorkflowID(), TaskQueue: "recordhistories-nobody"},
		"Nobody"); err != nil {
		return err
	}
	defer func() { _ = c.TerminateWorkflow(context.Background(), k.CollectionWorkflowID(), "", "recorded") }()
	op := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID: k.JobWorkflowID(), TaskQueue: jobs.TaskQueue, WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes: kindOf(k, jobs.JobWorkflowName),
	}, jobs.JobWorkflowName, jobs.JobInput{Key: k})
	job := jobs.Job{Properties: jobs.Properties{StartTime: recurrence.At(time.Now().UTC().Add(time.Hour)),
		Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target + "/unadmitted", Method: "POST"}}}}}
	if _, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: jobs.UpdatePutJob, Args: []any{jobs.PutJobRequest{Job: job}},
			WaitForStage: client.WorkflowUpdateStageAccepted}}); err != nil {
		return fmt.Errorf("put: %w", err)
	}
	if err := c.GetWorkflow(ctx, k.JobWorkflowID(), "").Get(ctx, nil); err != nil {
		return err
	}
	name := "job-unadmitted"
	if tag != "" {
		name += "-" + tag
	}
	return save(ctx, c, k.JobWorkflowID(), filepath.Join(dir, name+".json"))
}

// startJobBehind starts, through c, the workflow of k: a job calling
// target every minute whose first task comes two minutes late.
func startJobBehind(ctx context.Context, c client.Client, k jobs.Key, target string) error {
	minute := time.Now().UTC().Truncate(time.Minute)
	created, late := minute.Add(-10*time.Minute), minute.Add(-2*time.Minute)
	j := jobs.Job{Properties: jobs.Properties{
		StartTime:  recurrence.At(created),
		Action:     &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target + "/behind", Method: "POST"}}},
		Recurrence: &recurrence.Recurrence{Frequency: "Minute"},
	}}
	if err := j.Accept(k, created); err != nil {
		return err
	}
	j.Properties.Status = &jobs.Status{NextExecutionTime: &late}
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: k.JobWorkflowID(), TaskQueue: jobs.TaskQueue, TypedSearchAttributes: k.SearchAttributes(jobs.KindJob),
	}, jobs.JobWorkflowName, jobs.JobInput{Key: k, State: &jobs.JobState{Job: j, Created: created, Next: &late}})
	return err
}
