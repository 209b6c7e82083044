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
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/collectionstate"
	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
	"github.com/recurhq/recur/store"
)

// finishedRetention is how long the recorded finished jobs are kept.
const finishedRetention = 8 * time.Second

func main() {
	tag := flag.String("tag", "", "write collection-`TAG`.json, job-TAG.json, job-gone-TAG.json, job-idle-TAG.json, job-held-TAG.json, job-doomed-TAG.json, job-behind-TAG.json, job-unadmitted-TAG.json, job-lost-TAG.json, job-retried-TAG.json, job-buffered-TAG.json, job-rerun-TAG.json, collection-dead-lease-TAG.json, collection-renewed-TAG.json and job-completed-TAG.json, keeping the files of earlier recordings")
	flag.Parse()
	if err := record(filepath.Join("workflows", "testdata"), *tag); err != nil {
		log.Fatal(err)
	}
}

func record(dir, tag string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
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
	bufferedHolding := make(chan struct{}, 1)
	bufferedRelease := make(chan struct{})
	var failedOnce atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/fail"),
			strings.HasSuffix(r.URL.Path, "/fail-once") && failedOnce.CompareAndSwap(false, true):
			w.WriteHeader(http.StatusInternalServerError)
			return
		case strings.HasSuffix(r.URL.Path, "/hold"):
			holding <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case strings.HasSuffix(r.URL.Path, "/hold-buffered"):
			select {
			case bufferedHolding <- struct{}{}:
			default:
			}
			select {
			case <-bufferedRelease:
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
	lost := make(chan error, 1)
	go func() { lost <- recordLost(ctx, dir, tag) }()
	retried := make(chan error, 1)
	go func() { retried <- recordRetried(ctx, c, dir, tag, target.URL) }()
	rerun := make(chan error, 1)
	go func() { rerun <- recordRerun(ctx, c, dir, tag, target.URL) }()
	buffered := make(chan error, 1)
	go func() {
		buffered <- recordBuffered(ctx, c, dir, tag, target.URL, bufferedHolding, bufferedRelease)
	}()
	deadLease := make(chan error, 1)
	go func() { deadLease <- recordDeadLease(ctx, c, dir, tag, target.URL) }()
	renewed := make(chan error, 1)
	go func() { renewed <- recordRenewed(ctx, c, dir, tag, target.URL) }()

	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	if err := put(ctx, c, k, jobs.CollectionWorkflowName, jobs.CollectionInput{Key: k.CollectionKey()}, k.CollectionWorkflowID(),
		jobs.UpdatePutCollection, jobs.PutCollectionRequest{Collection: jobs.Collection{}}); err != nil {
		return err
	}
	// A job whose main action fails once without retries, runs its error
	// action, then is run now until its failures disable it
	// (disableAfterFailures), enabled again and deleted.
	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	count := 2 // an occurrence left: enabled, not completed, when its runs now fail
	job := jobs.Job{Properties: jobs.Properties{
		StartTime: recurrence.At(start),
		Action: &jobs.Action{
			ActionSpec:  jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target.URL + "/fail", Method: "POST"}, RetryPolicy: &jobs.RetryPolicy{RetryType: "None"}},
			ErrorAction: &jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target.URL + "/error", Method: "POST"}},
		},
		Recurrence:           &recurrence.Recurrence{Frequency: "Hour", Count: &count},
		DisableAfterFailures: 3,
	}}
	if err := put(ctx, c, k, jobs.JobWorkflowName, jobs.JobInput{Key: k}, k.JobWorkflowID(), jobs.UpdatePutJob, jobs.PutJobRequest{Job: job}); err != nil {
		return err
	}
	// A PATCH before its run: the workflow merges it and records the
	// accepted form, as it does a PUT's.
	if err := patch(ctx, c, k, `{"properties":{"action":{"request":{"headers":{"X-Patched":"1"}}}}}`); err != nil {
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
	// Enabled again, it starts its failure streak anew.
	if err := patch(ctx, c, k, `{"properties":{"state":"Enabled"}}`); err != nil {
		return err
	}
	if err := deleteJob(ctx, c, k); err != nil {
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
	if err := deleteJob(ctx, c, held); err != nil {
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
	// A job far from its first run, started defined on a lease of its
	// collection's quota, as the API starts a new job, and claimed on it
	// beside a name asked without a lease whose PUT never comes (the
	// collection gives it up once it looks); a job started on the lease
	// whose claim never comes, as if its API process died, which the
	// collection finds once the lease has run out; the job idle redefined
	// without asking its collection again (its terms allow it), which the
	// collection tells of a PUT that disables it, an enable, and the
	// collection's DELETE, which ends the collection's workflow.
	idle := k
	idle.Job = "idle"
	orphan := k
	orphan.Job = "orphan"
	var leased jobs.LeaseAnswer
	if err := updateInto(ctx, c, k.CollectionWorkflowID(), jobs.UpdateLease, jobs.LeaseRequest{Want: 2}, &leased); err != nil {
		return err
	}
	if leased.Grant == nil || leased.Grant.Slots != 2 {
		return fmt.Errorf("the collection did not lease two slots: %+v", leased)
	}
	idleJob := func(later time.Duration) jobs.Job {
		return jobs.Job{Properties: jobs.Properties{StartTime: recurrence.At(time.Now().UTC().Add(later)),
			Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target.URL + "/idle", Method: "POST"}}}}}
	}
	for _, j := range []jobs.Key{idle, orphan} {
		if _, err := startDefined(ctx, c, j, idleJob(24*time.Hour), leased.Grant.Admission()); err != nil {
			return err
		}
	}
	var claimed jobs.LeaseAnswer
	if err := updateInto(ctx, c, k.CollectionWorkflowID(), jobs.UpdateLease, jobs.LeaseRequest{Claims: []jobs.MembershipRequest{
		{Job: idle.Job, Lease: leased.Grant.ID}, {Job: "never-put"}}}, &claimed); err != nil {
		return err
	}
	if len(claimed.Answers) != 2 || claimed.Answers[0].Error != nil || claimed.Answers[1].Admission == nil {
		return fmt.Errorf("the collection did not admit job idle on its lease and never-put by name: %+v", claimed)
	}
	if err := put(ctx, c, idle, "", nil, idle.JobWorkflowID(), jobs.UpdatePutJob, jobs.PutJobRequest{Job: idleJob(25 * time.Hour)}); err != nil {
		return err
	}
	// A job started on a lease of its own and deleted before the claim of
	// its name comes: its leave names the lease and its run, and the
	// claim takes the slot and admits nothing; the lease is given back
	// after, as the API gives a lease back once its claims are answered.
	brief := k
	brief.Job = "brief"
	var briefLease jobs.LeaseAnswer
	if err := updateInto(ctx, c, k.CollectionWorkflowID(), jobs.UpdateLease, jobs.LeaseRequest{Want: 1}, &briefLease); err != nil {
		return err
	}
	if briefLease.Grant == nil {
		return fmt.Errorf("the collection did not lease a slot: %+v", briefLease)
	}
	briefRun, err := startDefined(ctx, c, brief, idleJob(24*time.Hour), briefLease.Grant.Admission())
	if err != nil {
		return err
	}
	if err := deleteJob(ctx, c, brief); err != nil {
		return err
	}
	var late, released jobs.LeaseAnswer
	if err := updateInto(ctx, c, k.CollectionWorkflowID(), jobs.UpdateLease, jobs.LeaseRequest{
		Claims: []jobs.MembershipRequest{{Job: brief.Job, Lease: briefLease.Grant.ID, Run: briefRun}}}, &late); err != nil {
		return err
	}
	if len(late.Answers) != 1 || late.Answers[0].Error != nil || late.Answers[0].Admission != nil {
		return fmt.Errorf("the late claim of job brief: %+v", late)
	}
	if err := updateInto(ctx, c, k.CollectionWorkflowID(), jobs.UpdateLease, jobs.LeaseRequest{Release: []int{briefLease.Grant.ID}}, &released); err != nil {
		return err
	}
	// An hourly job that began three hours back, started on a lease of
	// its own and claimed on it, whose backfill of its first two hours
	// runs them a pace apart (the default, a timer between), each an
	// action marker and an upsert. The collection's DELETE ends it.
	backfilled := k
	backfilled.Job = "backfilled"
	var backfilledLease, backfilledClaim jobs.LeaseAnswer
	if err := updateInto(ctx, c, k.CollectionWorkflowID(), jobs.UpdateLease, jobs.LeaseRequest{Want: 1}, &backfilledLease); err != nil {
		return err
	}
	if backfilledLease.Grant == nil {
		return fmt.Errorf("the collection did not lease a slot: %+v", backfilledLease)
	}
	hoursAgo := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Hour)
	hourly := jobs.Job{Properties: jobs.Properties{StartTime: recurrence.At(hoursAgo),
		Recurrence: &recurrence.Recurrence{Frequency: "Hour"},
		Action:     &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target.URL + "/backfilled", Method: "POST"}}}}}
	backfilledRun, err := startDefined(ctx, c, backfilled, hourly, backfilledLease.Grant.Admission())
	if err != nil {
		return err
	}
	if err := updateInto(ctx, c, k.CollectionWorkflowID(), jobs.UpdateLease, jobs.LeaseRequest{
		Claims:  []jobs.MembershipRequest{{Job: backfilled.Job, Lease: backfilledLease.Grant.ID, Run: backfilledRun}},
		Release: []int{backfilledLease.Grant.ID}}, &backfilledClaim); err != nil {
		return err
	}
	var queued jobs.BackfillResult
	if err := updateInto(ctx, c, backfilled.JobWorkflowID(), jobs.UpdateBackfill,
		jobs.BackfillRequest{StartTime: hoursAgo, EndTime: hoursAgo.Add(time.Hour)}, &queued); err != nil {
		return err
	}
	if queued.Queued != 2 {
		return fmt.Errorf("the backfill of job backfilled queued %d, not 2", queued.Queued)
	}
	if err := waitRuns(ctx, c, backfilled, 2); err != nil {
		return err
	}
	time.Sleep(time.Until(leased.Grant.Until.Add(leaseLooked))) // the collection looks at the lease, and at the names reserved
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
	var answer jobs.LeaseAnswer
	if err := updateInto(ctx, c, k.CollectionWorkflowID(), jobs.UpdateLease, jobs.LeaseRequest{Claims: []jobs.MembershipRequest{
		{Job: doomed.Job}}}, &answer); err != nil {
		return err
	}
	if len(answer.Answers) != 1 || answer.Answers[0].Admission == nil {
		return fmt.Errorf("the collection did not admit job doomed ahead: %+v", answer)
	}
	if err := put(ctx, c, k, "", nil, k.CollectionWorkflowID(), jobs.UpdateDeleteCollection, jobs.DeleteCollectionRequest{}); err != nil {
		return err
	}
	err = put(ctx, c, doomed, jobs.JobWorkflowName, jobs.JobInput{Key: doomed}, doomed.JobWorkflowID(), jobs.UpdatePutJob,
		jobs.PutJobRequest{Job: jobs.Job{Properties: jobs.Properties{StartTime: recurrence.At(time.Now().UTC().Add(time.Hour)),
			Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target.URL + "/doomed", Method: "POST"}}}}},
			Admission: answer.Answers[0].Admission})
	if e, ok := jobs.FromApplicationError(err); !ok || e.Code != jobs.CodeNotFound {
		return fmt.Errorf("the PUT of job doomed after its collection's DELETE: %v, not NotFound", err)
	}
	if err := c.GetWorkflow(ctx, idle.JobWorkflowID(), "").Get(ctx, nil); err != nil {
		return fmt.Errorf("job idle never ended with its collection: %w", err)
	}
	if err := c.GetWorkflow(ctx, doomed.JobWorkflowID(), "").Get(ctx, nil); err != nil {
		return fmt.Errorf("job doomed never ended: %w", err)
	}
	if err := c.GetWorkflow(ctx, backfilled.JobWorkflowID(), "").Get(ctx, nil); err != nil {
		return fmt.Errorf("job backfilled never ended with its collection: %w", err)
	}
	if err := <-behind; err != nil {
		return fmt.Errorf("the job behind: %w", err)
	}
	if err := <-unadmitted; err != nil {
		return fmt.Errorf("the job never admitted: %w", err)
	}
	if err := <-lost; err != nil {
		return fmt.Errorf("the job whose worker was lost: %w", err)
	}
	if err := <-retried; err != nil {
		return fmt.Errorf("the job whose first attempt failed: %w", err)
	}
	if err := <-rerun; err != nil {
		return fmt.Errorf("the job whose failure ran again: %w", err)
	}
	if err := <-buffered; err != nil {
		return fmt.Errorf("the job disabled while an occurrence was buffered: %w", err)
	}
	if err := <-deadLease; err != nil {
		return fmt.Errorf("the collection whose lease outlived its process: %w", err)
	}
	if err := <-renewed; err != nil {
		return fmt.Errorf("the collection whose reservation a claim renewed: %w", err)
	}
	files := map[string]string{
		"collection":     k.CollectionWorkflowID(),
		"job":            k.JobWorkflowID(),
		"job-gone":       gone.JobWorkflowID(),
		"job-idle":       idle.JobWorkflowID(),
		"job-held":       held.JobWorkflowID(),
		"job-doomed":     doomed.JobWorkflowID(),
		"job-backfilled": backfilled.JobWorkflowID(),
	}
	for name, id := range files {
		if err := save(ctx, c, id, dir, name, tag); err != nil {
			return err
		}
	}
	return nil
}

// leaseGrace is how long after a lease's end the collection looks at the
// lease not given back: workflows.leaseGrace.
const leaseGrace = 20 * time.Second

// leaseLooked is how long after a lease's end the collection has looked
// at the lease not given back and at the names it found: leaseGrace,
// workflows.reservationBatch, and a margin.
const leaseLooked = leaseGrace + 8*time.Second

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

// startDefined starts the workflow of job k, defined by def, which its
// collection admitted (adm), as the API starts a new job's.
func startDefined(ctx context.Context, c client.Client, k jobs.Key, def jobs.Job, adm jobs.Admission) (run string, err error) {
	created := time.Now().UTC().Truncate(time.Second)
	if err := def.Accept(k, created); err != nil {
		return "", err
	}
	opts, in, ok := store.NewJobStart(k, def, created, adm)
	if !ok {
		return "", fmt.Errorf("job %s has no occurrence to come", k.Job)
	}
	r, err := c.ExecuteWorkflow(ctx, opts, jobs.JobWorkflowName, in)
	if err != nil {
		return "", err
	}
	return r.GetRunID(), nil
}

// patch sends job k a PATCH of its current definition, as the API does.
func patch(ctx context.Context, c client.Client, k jobs.Key, merge string) error {
	v, err := c.QueryWorkflow(ctx, k.JobWorkflowID(), "", jobs.QueryJob)
	if err != nil {
		return err
	}
	var view jobs.JobView
	if err := v.Get(&view); err != nil {
		return err
	}
	return put(ctx, c, k, "", nil, k.JobWorkflowID(), jobs.UpdatePatchJob,
		jobs.PatchJobRequest{Patch: []byte(merge), Base: view.Job.ETag})
}

// kindOf returns the search attributes the API starts workflow with.
func kindOf(k jobs.Key, workflow string) temporal.SearchAttributes {
	if workflow == jobs.CollectionWorkflowName {
		return k.CollectionKey().SearchAttributes(jobs.KindCollection)
	}
	return k.SearchAttributes(jobs.KindJob)
}

// saveAfterRuns waits until job k has counted runs runs, deletes it and
// saves its history as name.
func saveAfterRuns(ctx context.Context, c client.Client, k jobs.Key, runs int, dir, name, tag string) error {
	if err := waitRuns(ctx, c, k, runs); err != nil {
		return err
	}
	if err := deleteJob(ctx, c, k); err != nil {
		return err
	}
	return save(ctx, c, k.JobWorkflowID(), dir, name, tag)
}

// deleteJob deletes job k and waits for its workflow's end.
func deleteJob(ctx context.Context, c client.Client, k jobs.Key) error {
	if err := put(ctx, c, k, "", nil, k.JobWorkflowID(), jobs.UpdateDeleteJob, jobs.DeleteJobRequest{}); err != nil {
		return err
	}
	return c.GetWorkflow(ctx, k.JobWorkflowID(), "").Get(ctx, nil)
}

// save writes a workflow's history to dir as name.json (name-tag.json
// with a tag), the JSON the replayer reads (the shape of `temporal
// workflow show --output json`).
func save(ctx context.Context, c client.Client, id, dir, name, tag string) error {
	if tag != "" {
		name += "-" + tag
	}
	path := filepath.Join(dir, name+".json")
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
	return waitStatus(ctx, c, k, func(st jobs.Status) (bool, error) {
		return st.ExecutionCount >= n, nil
	}, fmt.Sprintf("%d runs", n))
}

// waitStatus waits until done says job k's status, as its memo holds it,
// is what it waits for (want): true, or an error that ends the wait.
func waitStatus(ctx context.Context, c client.Client, k jobs.Key, done func(jobs.Status) (bool, error), want string) error {
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
		if ok, err := done(st.Status); ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("job %s never had %s (%d runs, %d postponed): %w", k.Job, want, st.Status.ExecutionCount, st.Status.PostponedCount, ctx.Err())
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
	return saveAfterRuns(ctx, c, k, 2, dir, "job-behind", tag)
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
	return save(ctx, c, k.JobWorkflowID(), dir, "job-unadmitted", tag)
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
	}, jobs.JobWorkflowName, jobs.JobInput{Key: k, State: &jobs.JobState{Job: j, PlannedFrom: created, Next: &late}})
	return err
}

// recordLost records job-lost.json: a job whose run now is held by its
// target on a worker that is then lost, without a word, so that the
// attempt (its job's last: no retries) times out on its heartbeat and the
// workflow gives it once more, as a second activity, to another worker,
// which completes it; then the job is deleted. The lost worker dials
// Temporal through a proxy that is cut under it: a worker that stops
// cancels its attempt and reports the failure, which is no loss.
func recordLost(ctx context.Context, dir, tag string) error {
	st, err := recurtest.StartWith(recurtest.Config{Plain: true})
	if err != nil {
		return err
	}
	defer st.Stop()
	c := st.Temporal.GetDefaultClient()
	// The stack's own worker would take the retried attempt as soon as
	// the lost one would.
	st.StopWorkers()
	holding := make(chan struct{}, 1)
	release := make(chan struct{})
	var calls atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 { // the lost worker's attempt
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

	p, err := startProxy(st.Temporal.GetFrontendHostPort())
	if err != nil {
		return err
	}
	defer p.cut()
	// Its identity names it in the history; its client logs, at each
	// retry, that Temporal is out of reach.
	lc, err := client.Dial(client.Options{HostPort: p.addr(), Namespace: st.Temporal.GetDefaultNamespace(), Identity: lostIdentity,
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		return err
	}
	lost, err := st.StartWorker(lc)
	if err != nil {
		lc.Close()
		return err
	}
	// Its Stop cancels the attempt and reports the failure: it comes once
	// the proxy is cut, when nothing can hear it.
	defer func() {
		lost.Stop()
		lc.Close()
	}()

	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "lost"}
	if err := put(ctx, c, k, jobs.CollectionWorkflowName, jobs.CollectionInput{Key: k.CollectionKey()}, k.CollectionWorkflowID(),
		jobs.UpdatePutCollection, jobs.PutCollectionRequest{Collection: jobs.Collection{}}); err != nil {
		return err
	}
	job := jobs.Job{Properties: jobs.Properties{StartTime: recurrence.At(time.Now().UTC().Add(24 * time.Hour)),
		Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target.URL + "/lost", Method: "POST"},
			RetryPolicy: &jobs.RetryPolicy{RetryType: "None"}}}}}
	if err := put(ctx, c, k, jobs.JobWorkflowName, jobs.JobInput{Key: k}, k.JobWorkflowID(), jobs.UpdatePutJob, jobs.PutJobRequest{Job: job}); err != nil {
		return err
	}
	if err := put(ctx, c, k, "", nil, k.JobWorkflowID(), jobs.UpdateRunNow, jobs.RunNowRequest{}); err != nil {
		return err
	}
	select {
	case <-holding:
	case <-ctx.Done():
		return fmt.Errorf("its run now never reached the target: %w", ctx.Err())
	}
	// Within the heartbeat interval (half jobs.ActionHeartbeatTimeout) of
	// the attempt's start: the lost worker never heartbeats it.
	p.cut()
	fresh, err := st.StartWorker(c)
	if err != nil {
		return err
	}
	defer fresh.Stop()
	if err := waitRuns(ctx, c, k, 1); err != nil {
		return err
	}
	if err := givenAgain(ctx, c, k.JobWorkflowID()); err != nil {
		return err
	}
	if err := deleteJob(ctx, c, k); err != nil {
		return err
	}
	return save(ctx, c, k.JobWorkflowID(), dir, "job-lost", tag)
}

// recordRetried records job-retried.json: a one-time job whose first
// attempt, made in the local activity, fails (500) and whose retry, after
// the policy's interval (a workflow timer), is an activity that succeeds;
// then the job is deleted.
func recordRetried(ctx context.Context, c client.Client, dir, tag, target string) error {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "retries", Job: "retried"}
	if err := put(ctx, c, k, jobs.CollectionWorkflowName, jobs.CollectionInput{Key: k.CollectionKey()}, k.CollectionWorkflowID(),
		jobs.UpdatePutCollection, jobs.PutCollectionRequest{Collection: jobs.Collection{}}); err != nil {
		return err
	}
	retries := 1
	job := jobs.Job{Properties: jobs.Properties{StartTime: recurrence.At(time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)),
		Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target + "/fail-once", Method: "POST"},
			RetryPolicy: &jobs.RetryPolicy{RetryType: "Fixed", RetryCount: &retries, RetryInterval: "PT15S"}}}}}
	if err := put(ctx, c, k, jobs.JobWorkflowName, jobs.JobInput{Key: k}, k.JobWorkflowID(), jobs.UpdatePutJob, jobs.PutJobRequest{Job: job}); err != nil {
		return err
	}
	return saveAfterRuns(ctx, c, k, 1, dir, "job-retried", tag)
}

// recordRerun records job-rerun.json: an hourly job whose first run
// fails for good, which writes its failure record with its rows and
// faults the job (maxConsecutiveFaults 1); the failure is run again (the
// rerun update) by the faulted job, fails again, and the job is deleted.
func recordRerun(ctx context.Context, c client.Client, dir, tag, target string) error {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "reruns", Job: "rerun"}
	if err := put(ctx, c, k, jobs.CollectionWorkflowName, jobs.CollectionInput{Key: k.CollectionKey()}, k.CollectionWorkflowID(),
		jobs.UpdatePutCollection, jobs.PutCollectionRequest{Collection: jobs.Collection{}}); err != nil {
		return err
	}
	job := jobs.Job{Properties: jobs.Properties{StartTime: recurrence.At(time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)),
		Recurrence: &recurrence.Recurrence{Frequency: "Hour"}, MaxConsecutiveFaults: 1,
		Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target + "/fail", Method: "POST"},
			RetryPolicy: &jobs.RetryPolicy{RetryType: "None"}}}}}
	if err := put(ctx, c, k, jobs.JobWorkflowName, jobs.JobInput{Key: k}, k.JobWorkflowID(), jobs.UpdatePutJob, jobs.PutJobRequest{Job: job}); err != nil {
		return err
	}
	if err := waitRuns(ctx, c, k, 1); err != nil {
		return err
	}
	d, err := c.DescribeWorkflowExecution(ctx, k.JobWorkflowID(), "")
	if err != nil {
		return err
	}
	var failures []jobs.Failure
	p, ok := d.GetWorkflowExecutionInfo().GetMemo().GetFields()[jobs.MemoFailures]
	if !ok {
		return errors.New("the failed run wrote no failure record")
	}
	if err := converter.GetDefaultDataConverter().FromPayload(p, &failures); err != nil {
		return err
	}
	if err := put(ctx, c, k, "", nil, k.JobWorkflowID(), jobs.UpdateRerun, jobs.RerunRequest{Failure: failures[0]}); err != nil {
		return err
	}
	return saveAfterRuns(ctx, c, k, 2, dir, "job-rerun", tag)
}

// recordBuffered records job-buffered.json: an every-minute BufferOne job
// whose first run its target holds past the next occurrence, which is
// buffered; the job is disabled, then the run ends, and the buffered
// occurrence is postponed rather than started.
func recordBuffered(ctx context.Context, c client.Client, dir, tag, target string, holding <-chan struct{}, release chan<- struct{}) error {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "buffers", Job: "buffered"}
	if err := put(ctx, c, k, jobs.CollectionWorkflowName, jobs.CollectionInput{Key: k.CollectionKey()}, k.CollectionWorkflowID(),
		jobs.UpdatePutCollection, jobs.PutCollectionRequest{Collection: jobs.Collection{}}); err != nil {
		return err
	}
	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	job := jobs.Job{Properties: jobs.Properties{StartTime: recurrence.At(start), OverlapPolicy: jobs.OverlapBufferOne,
		Recurrence: &recurrence.Recurrence{Frequency: "Minute"},
		Action:     &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target + "/hold-buffered", Method: "POST"}}}}}
	if err := put(ctx, c, k, jobs.JobWorkflowName, jobs.JobInput{Key: k}, k.JobWorkflowID(), jobs.UpdatePutJob, jobs.PutJobRequest{Job: job}); err != nil {
		return err
	}
	select {
	case <-holding:
	case <-ctx.Done():
		return fmt.Errorf("its first run never reached the target: %w", ctx.Err())
	}
	time.Sleep(time.Until(start.Add(time.Minute + 3*time.Second))) // the second occurrence is buffered
	job.Properties.State = jobs.Disabled
	if err := put(ctx, c, k, "", nil, k.JobWorkflowID(), jobs.UpdatePutJob, jobs.PutJobRequest{Job: job}); err != nil {
		return err
	}
	close(release)
	if err := waitStatus(ctx, c, k, func(st jobs.Status) (bool, error) {
		if st.ExecutionCount > 1 {
			return false, fmt.Errorf("the buffered occurrence of the disabled job ran")
		}
		return st.ExecutionCount == 1 && st.PostponedCount == 1, nil
	}, "its buffered occurrence postponed"); err != nil {
		return err
	}
	if err := deleteJob(ctx, c, k); err != nil {
		return err
	}
	return save(ctx, c, k.JobWorkflowID(), dir, "job-buffered", tag)
}

// recordDeadLease records collection-dead-lease.json: a collection that
// leases a slot to each of two API processes, each of which starts a job
// on it. The first dies before its claim; the second's claim is on its way
// when the first lease is looked at, which finds both jobs, more than the
// lease's slot, and takes in both. The claim comes then, with its lease
// given back, and the collection's DELETE ends it and its jobs.
func recordDeadLease(ctx context.Context, c client.Client, dir, tag, target string) error {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "leases"}
	if err := put(ctx, c, k, jobs.CollectionWorkflowName, jobs.CollectionInput{Key: k.CollectionKey()}, k.CollectionWorkflowID(),
		jobs.UpdatePutCollection, jobs.PutCollectionRequest{Collection: jobs.Collection{}}); err != nil {
		return err
	}
	job := jobs.Job{Properties: jobs.Properties{StartTime: recurrence.At(time.Now().UTC().Add(24 * time.Hour)),
		Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target + "/dead-lease", Method: "POST"}}}}}
	stranded, claimed := k, k
	stranded.Job, claimed.Job = "stranded", "claimed"
	dead, err := leaseOne(ctx, c, k)
	if err != nil {
		return err
	}
	if _, err := startDefined(ctx, c, stranded, job, dead.Admission()); err != nil {
		return err
	}
	// The second lease runs out well after the first is looked at, so
	// that its claim comes in between.
	time.Sleep(15 * time.Second)
	living, err := leaseOne(ctx, c, k)
	if err != nil {
		return err
	}
	run, err := startDefined(ctx, c, claimed, job, living.Admission())
	if err != nil {
		return err
	}
	if err := waitHeld(ctx, c, k, stranded.Job, claimed.Job); err != nil {
		return err
	}
	if time.Now().After(living.Until.Add(leaseGrace)) {
		return fmt.Errorf("both jobs were taken in after the second lease was looked at, not by the look at the first")
	}
	var answer jobs.LeaseAnswer
	if err := updateInto(ctx, c, k.CollectionWorkflowID(), jobs.UpdateLease, jobs.LeaseRequest{
		Claims: []jobs.MembershipRequest{{Job: claimed.Job, Lease: living.ID, Run: run}}, Release: []int{living.ID}}, &answer); err != nil {
		return err
	}
	if len(answer.Answers) != 1 || answer.Answers[0].Error != nil {
		return fmt.Errorf("the claim of job claimed: %+v", answer)
	}
	if err := put(ctx, c, k, "", nil, k.CollectionWorkflowID(), jobs.UpdateDeleteCollection, jobs.DeleteCollectionRequest{}); err != nil {
		return err
	}
	for _, id := range []string{k.CollectionWorkflowID(), stranded.JobWorkflowID(), claimed.JobWorkflowID()} {
		if err := c.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
			return fmt.Errorf("%s never ended with its collection: %w", id, err)
		}
	}
	return save(ctx, c, k.CollectionWorkflowID(), dir, "collection-dead-lease", tag)
}

// recordRenewed records collection-renewed.json: a collection admits a
// name ahead of its PUT, and the claim of it comes again, as the API sends
// a batch again whose answer was lost: the second claim renews the
// reservation and is answered without an admission. The job is then
// started without one, and asks its collection itself; the look at the
// reservation after its grace finds the job, and the collection keeps the
// name until its DELETE ends it and the job.
func recordRenewed(ctx context.Context, c client.Client, dir, tag, target string) error {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "renewed", Job: "late"}
	if err := put(ctx, c, k, jobs.CollectionWorkflowName, jobs.CollectionInput{Key: k.CollectionKey()}, k.CollectionWorkflowID(),
		jobs.UpdatePutCollection, jobs.PutCollectionRequest{Collection: jobs.Collection{}}); err != nil {
		return err
	}
	claim := jobs.LeaseRequest{Claims: []jobs.MembershipRequest{{Job: k.Job}}}
	var first, again jobs.LeaseAnswer
	if err := updateInto(ctx, c, k.CollectionWorkflowID(), jobs.UpdateLease, claim, &first); err != nil {
		return err
	}
	time.Sleep(time.Second)
	if err := updateInto(ctx, c, k.CollectionWorkflowID(), jobs.UpdateLease, claim, &again); err != nil {
		return err
	}
	if len(first.Answers) != 1 || first.Answers[0].Admission == nil || len(again.Answers) != 1 || again.Answers[0].Error != nil || again.Answers[0].Admission != nil {
		return fmt.Errorf("the collection did not admit job late once, then hold it: %+v, %+v", first, again)
	}
	job := jobs.Job{Properties: jobs.Properties{StartTime: recurrence.At(time.Now().UTC().Add(24 * time.Hour)),
		Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: target + "/renewed", Method: "POST"}}}}}
	if err := put(ctx, c, k, jobs.JobWorkflowName, jobs.JobInput{Key: k}, k.JobWorkflowID(), jobs.UpdatePutJob, jobs.PutJobRequest{Job: job}); err != nil {
		return err
	}
	// The renewed reservation lapses a grace after the second claim, and
	// is looked at a batch later.
	time.Sleep(collectionstate.ReservationGrace + 8*time.Second)
	if err := waitHeld(ctx, c, k, k.Job); err != nil {
		return err
	}
	// A job created completed, as recur import writes one that ran where
	// it came from: it runs nothing, and ends with its collection.
	done := k
	done.Job = "done"
	completed := job
	completed.Properties.State = jobs.Completed
	if err := put(ctx, c, done, jobs.JobWorkflowName, jobs.JobInput{Key: done}, done.JobWorkflowID(), jobs.UpdatePutJob,
		jobs.PutJobRequest{Job: completed}); err != nil {
		return err
	}
	if err := put(ctx, c, k, "", nil, k.CollectionWorkflowID(), jobs.UpdateDeleteCollection, jobs.DeleteCollectionRequest{}); err != nil {
		return err
	}
	for _, id := range []string{k.CollectionWorkflowID(), k.JobWorkflowID(), done.JobWorkflowID()} {
		if err := c.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
			return fmt.Errorf("%s never ended with its collection: %w", id, err)
		}
	}
	if err := save(ctx, c, done.JobWorkflowID(), dir, "job-completed", tag); err != nil {
		return err
	}
	return save(ctx, c, k.CollectionWorkflowID(), dir, "collection-renewed", tag)
}

// leaseOne asks collection k for a lease of one slot.
func leaseOne(ctx context.Context, c client.Client, k jobs.Key) (jobs.Lease, error) {
	var answer jobs.LeaseAnswer
	if err := updateInto(ctx, c, k.CollectionWorkflowID(), jobs.UpdateLease, jobs.LeaseRequest{Want: 1}, &answer); err != nil {
		return jobs.Lease{}, err
	}
	if answer.Grant == nil || answer.Grant.Slots != 1 {
		return jobs.Lease{}, fmt.Errorf("the collection did not lease a slot: %+v", answer)
	}
	return *answer.Grant, nil
}

// waitHeld waits until collection k holds every name of names.
func waitHeld(ctx context.Context, c client.Client, k jobs.Key, names ...string) error {
	for {
		v, err := c.QueryWorkflow(ctx, k.CollectionWorkflowID(), "", jobs.QueryCollection)
		if err != nil {
			return err
		}
		var view jobs.CollectionView
		if err := v.Get(&view); err != nil {
			return err
		}
		if !slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(view.Jobs, n) }) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("collection %s never held %v (it holds %v): %w", k.Collection, names, view.Jobs, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// lostIdentity is the identity of the worker recordLost loses.
const lostIdentity = "recordhistories-lost-worker"

// givenAgain checks that the history of workflow id shows what
// job-lost.json is recorded for: the await of an attempt handed off on the
// lost worker timed out as a lost worker's (its heartbeat, or never
// started), then a second activity was scheduled, which another worker
// started and completed.
func givenAgain(ctx context.Context, c client.Client, id string) error {
	iter := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var timedOut, again int64
	identity := map[int64]string{} // of each activity's worker, by the activity's scheduled event
	for iter.HasNext() {
		e, err := iter.Next()
		if err != nil {
			return fmt.Errorf("history of %s: %w", id, err)
		}
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			a := e.GetActivityTaskStartedEventAttributes()
			identity[a.GetScheduledEventId()] = a.GetIdentity()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			// The await of the attempt handed off is lost with its worker:
			// its heartbeat stops, or, cut before it started, nobody
			// polls its process's queue.
			a := e.GetActivityTaskTimedOutEventAttributes()
			switch t := a.GetFailure().GetTimeoutFailureInfo().GetTimeoutType(); t {
			case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
				timedOut = e.GetEventId()
				continue
			case enumspb.TIMEOUT_TYPE_HEARTBEAT:
			default:
				return fmt.Errorf("history of %s: event %d: the attempt timed out on %s, not as a lost worker's", id, e.GetEventId(), t)
			}
			if w := identity[a.GetScheduledEventId()]; w != lostIdentity {
				return fmt.Errorf("history of %s: event %d: the attempt that timed out ran on %q, not the lost worker", id, e.GetEventId(), w)
			}
			timedOut = e.GetEventId()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if timedOut != 0 && again == 0 {
				again = e.GetEventId()
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if again == 0 || e.GetActivityTaskCompletedEventAttributes().GetScheduledEventId() != again {
				continue
			}
			if w := identity[again]; w == lostIdentity {
				return fmt.Errorf("history of %s: event %d: the lost worker completed the attempt given again", id, e.GetEventId())
			}
			return nil
		}
	}
	switch {
	case timedOut == 0:
		return fmt.Errorf("history of %s: no activity timed out on its heartbeat: the worker was not lost", id)
	case again == 0:
		return fmt.Errorf("history of %s: the attempt that timed out at event %d was not given again", id, timedOut)
	}
	return fmt.Errorf("history of %s: the attempt given again at event %d never completed", id, again)
}

// proxy forwards TCP connections to Temporal's frontend until it is cut.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	done  bool
}

// startProxy starts a proxy to backend on a free port of 127.0.0.1.
func startProxy(backend string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, conns: map[net.Conn]struct{}{}}
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", backend)
			if err != nil {
				in.Close()
				continue
			}
			if !p.track(in, out) {
				continue
			}
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	return p, nil
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

// track keeps conns to close at the cut; once cut, it closes them.
func (p *proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		if p.done {
			c.Close()
			continue
		}
		p.conns[c] = struct{}{}
	}
	return !p.done
}

// cut closes the listener and every connection: whoever dialed through
// the proxy reaches Temporal no more, not even to say goodbye.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
}
