package temporalcli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/internal/recurproc"
	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/internal/temporalcli"
	"github.com/recurhq/recur/jobs"
)

// testBody is what the test itself needs after the install: the stack, two
// runs and a dozen CLI calls.
const testBody = 2 * time.Minute

// installCLI installs the temporal CLI within what go test's -timeout
// leaves after testBody. Cold, the install takes minutes (8 on two busy
// cores); when it cannot fit, the test fails and says so: the build cache
// keeps what was compiled, so the next run finishes it.
func installCLI(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: it needs the temporal CLI")
	}
	ctx := context.Background()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-testBody))
		defer cancel()
	}
	started := time.Now()
	_, err := temporalcli.Install(ctx)
	require.NoError(t, err, "install the temporal CLI %s; cold, give it time once: go test -timeout 30m ./e2e/temporalcli", temporalcli.Version)
	t.Logf("temporal CLI %s ready in %s", temporalcli.Version, time.Since(started).Round(time.Second))
}

// cli runs the temporal CLI against the stack's frontend and namespace.
type cli struct {
	t         *testing.T
	address   string
	namespace string
}

func (c cli) run(args ...string) []byte {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := temporalcli.Run(ctx, append(args, "--address", c.address, "--namespace", c.namespace)...)
	require.NoError(c.t, err)
	return out
}

// list runs `temporal workflow list --query query -o json` and returns the
// workflow IDs it prints, sorted.
func (c cli) list(query string) []string {
	c.t.Helper()
	out := c.run("workflow", "list", "--query", query, "-o", "json")
	var ids []string
	for _, e := range decodeAll(c.t, out) {
		var w struct {
			Execution struct {
				WorkflowID string `json:"workflowId"`
			} `json:"execution"`
		}
		require.NoError(c.t, json.Unmarshal(e, &w), string(e))
		ids = append(ids, w.Execution.WorkflowID)
	}
	slices.Sort(ids)
	return ids
}

// decodeAll reads the JSON values of out: an array's elements, or one
// value after another.
func decodeAll(t *testing.T, out []byte) []json.RawMessage {
	t.Helper()
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var all []json.RawMessage
		require.NoError(t, json.Unmarshal(trimmed, &all), string(out))
		return all
	}
	var all []json.RawMessage
	dec := json.NewDecoder(bufio.NewReader(bytes.NewReader(trimmed)))
	for dec.More() {
		var v json.RawMessage
		require.NoError(t, dec.Decode(&v), string(out))
		all = append(all, v)
	}
	return all
}

// listEventually waits until the query lists want (visibility lags a
// little behind the workflows) and fails with the last answer otherwise.
func (c cli) listEventually(query string, want ...string) {
	c.t.Helper()
	slices.Sort(want)
	var got []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		got = c.list(query)
		if slices.Equal(got, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	require.Equal(c.t, want, got, "temporal workflow list --query %q", query)
}

func target(t *testing.T, status int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

const (
	collPath = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/ops"
	jobID    = "job:sub1/rg1/ops/"
)

func httpJob(uri string, start time.Time, recurrence map[string]any) map[string]any {
	props := map[string]any{
		"startTime": start.Format(time.RFC3339),
		"action": map[string]any{"type": "Http", "request": map[string]any{"uri": uri, "method": "POST"},
			"retryPolicy": map[string]any{"retryType": "None"}},
	}
	if recurrence != nil {
		props["recurrence"] = recurrence
	}
	return map[string]any{"properties": props}
}

// TestTemporalCLIFindsJobsAndOccurrences runs Temporal's own CLI against a recur
// (in-process Temporal, real worker and API, payloads encrypted): jobs by
// state and by their last outcome are found by recur's search attributes
// alone, and `temporal workflow describe`, `show`, `metadata` and `query`
// show a job's summary, occurrences, current details and state only
// through recur's codec endpoint.
func TestTemporalCLIFindsJobsAndOccurrences(t *testing.T) {
	installCLI(t)
	st, err := recurtest.Start()
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	s := &scenario{t: t, api: recurproc.NewClient(st.API.URL), codec: st.API.URL + "/codec",
		ok: target(t, http.StatusOK), failing: target(t, http.StatusInternalServerError)}
	s.createJobs()
	c := cli{t: t, address: st.Temporal.GetFrontendHostPort(), namespace: st.Temporal.GetDefaultNamespace()}
	s.checkLists(c)
	s.checkSummaries(c)
	s.checkJobDetails(c)
}

// scenario is a collection "ops" with jobs in every state and occurrences
// that failed and succeeded.
type scenario struct {
	t           *testing.T
	api         *recurproc.Client
	codec       string // recur's codec endpoint
	ok, failing string // targets answering 200 and 500
	start       time.Time
}

// createJobs creates the collection and its jobs, and waits until the
// three that run at start have run.
func (s *scenario) createJobs() {
	t, ctx := s.t, context.Background()
	require.NoError(t, s.api.Do(ctx, http.MethodPut, collPath, map[string]any{"properties": map[string]any{}}, nil, http.StatusCreated))
	// A one-time job whose start has passed runs at once, a recurring one
	// at its next occurrence: the start must still be ahead when the jobs
	// that run at start are created, first.
	s.start = time.Now().UTC().Add(6 * time.Second).Truncate(time.Second)
	start, hourly := s.start, map[string]any{"frequency": "Hour"}
	for _, j := range []struct {
		name string
		body map[string]any
	}{
		{"good", httpJob(s.ok+"/ping?token=SECRET", start, nil)},          // runs once, succeeds: Completed
		{"bad", httpJob(s.failing+"/ping", start, hourly)},                // runs, fails, stays Enabled
		{"once", httpJob(s.failing+"/once", start, nil)},                  // runs once, fails: Faulted
		{"later", httpJob(s.ok+"/later", start.Add(time.Hour), hourly)},   // Enabled, no run yet
		{"paused", httpJob(s.ok+"/paused", start.Add(time.Hour), hourly)}, // Disabled below
		{"gone", httpJob(s.ok+"/gone", start.Add(time.Hour), hourly)},     // deleted below
	} {
		var created jobs.Job
		require.NoError(t, s.api.Do(ctx, http.MethodPut, collPath+"/jobs/"+j.name, j.body, &created, http.StatusCreated), j.name)
		require.NotNil(t, created.Properties.Status)
		require.NotNil(t, created.Properties.Status.NextExecutionTime, j.name)
		if j.name == "good" || j.name == "bad" || j.name == "once" {
			require.Equal(t, start, created.Properties.Status.NextExecutionTime.UTC(),
				"%s: the machine was too slow to create the job before its start", j.name)
		}
	}
	require.NoError(t, s.api.Do(ctx, http.MethodDelete, collPath+"/jobs/gone", nil, nil, http.StatusOK))
	require.NoError(t, s.api.Do(ctx, http.MethodPatch, collPath+"/jobs/paused",
		map[string]any{"properties": map[string]any{"state": "Disabled"}}, nil, http.StatusOK))
	// The runs are over once the API counts them.
	require.Eventually(t, func() bool {
		for _, name := range []string{"good", "bad", "once"} {
			var j jobs.Job
			if s.api.Do(ctx, http.MethodGet, collPath+"/jobs/"+name, nil, &j, http.StatusOK) != nil ||
				j.Properties.Status == nil || j.Properties.Status.ExecutionCount != 1 {
				return false
			}
		}
		return true
	}, 60*time.Second, 250*time.Millisecond)
}

// checkLists checks what `temporal workflow list --query` finds, by
// search attributes only.
func (s *scenario) checkLists(c cli) {
	// A job's last outcome is its RecurStatus: failing jobs are one
	// filter away.
	c.listEventually(`RecurKind="job" AND RecurStatus="Failed"`, jobID+"bad", jobID+"once")
	c.listEventually(`RecurKind="job" AND RecurCollection="ops" AND RecurJob="bad" AND RecurStatus="Failed"`, jobID+"bad")
	c.listEventually(`RecurKind="job" AND RecurJob="good" AND RecurStatus="Failed"`)
	c.listEventually(`RecurKind="job" AND RecurStatus="Completed"`, jobID+"good")
	// A deleted job's workflow has ended in the state it had; so have the
	// earlier runs of a job that continued as new. The jobs that exist are
	// the running job workflows.
	c.listEventually(`RecurKind="job" AND RecurState="Enabled" AND ExecutionStatus="Running"`, jobID+"bad", jobID+"later")
	c.listEventually(`RecurKind="job" AND RecurState="Enabled"`, jobID+"bad", jobID+"gone", jobID+"later")
	c.listEventually(`RecurKind="job" AND RecurState="Faulted" AND ExecutionStatus="Running"`, jobID+"once")
	c.listEventually(`RecurKind="job" AND RecurCollection="ops" AND RecurState="Disabled"`, jobID+"paused")
	c.listEventually(`RecurKind="job" AND RecurState="Completed"`, jobID+"good")
	c.listEventually(`RecurKind="job" AND ExecutionStatus="Completed"`, jobID+"gone")
	c.listEventually(`RecurKind="collection" AND RecurState="Enabled"`, "collection:sub1/rg1/ops")
	c.listEventually(`RecurCollection="ops" AND RecurSubscription="sub1"`, "collection:sub1/rg1/ops",
		jobID+"bad", jobID+"gone", jobID+"good", jobID+"later", jobID+"once", jobID+"paused")
}

// checkSummaries checks the summaries `temporal workflow describe` shows:
// encrypted at rest, readable through the codec endpoint, and without the
// target's query either way.
func (s *scenario) checkSummaries(c cli) {
	t := s.t
	describe := func(id string, args ...string) string {
		return string(c.run(append([]string{"workflow", "describe", "--workflow-id", id}, args...)...))
	}
	summary := "job ops/good: once at " + s.start.Format(time.RFC3339) + " → POST " + s.ok + "/ping"
	plain := describe(jobID + "good")
	require.Contains(t, plain, base64.StdEncoding.EncodeToString([]byte(codec.EncodingEncrypted)), "the summary's encoding, as the CLI prints it")
	require.NotContains(t, plain, summary, "without the codec the summary is encrypted")
	decoded := describe(jobID+"good", "--codec-endpoint", s.codec)
	require.Contains(t, decoded, summary)
	require.NotContains(t, plain, "SECRET", "nothing of the target's query is readable without the codec")
	// Through the codec, the memo shows the job as GET does, its URI
	// whole, as the job's own input does; the summaries never show it.
	for line := range strings.Lines(decoded) {
		if strings.Contains(line, "StaticSummary") || strings.Contains(line, "StaticDetails") {
			require.NotContains(t, line, "SECRET")
		}
	}
	require.Contains(t, decoded, jobs.MemoJob, "the public view the API reads")
	t.Logf("temporal workflow describe --codec-endpoint ...:\n%s", decoded)

	// Each occurrence is a local activity of its job's workflow; the memo
	// upsert of the task that ran it holds its history rows, readable
	// through the codec only.
	show := string(c.run("workflow", "show", "--workflow-id", jobID+"bad", "--output", "json", "--codec-endpoint", s.codec))
	require.Contains(t, rowsShown(t, show), "POST "+s.failing+"/ping: 500 Internal Server Error", "the occurrence's row, decoded")
	plainShow := string(c.run("workflow", "show", "--workflow-id", jobID+"bad", "--output", "json"))
	require.NotContains(t, plainShow, "500 Internal Server Error", "without the codec neither the rows nor the failure is readable")
	require.NotContains(t, rowsShown(t, plainShow), "500 Internal Server Error")
	coll := describe("collection:sub1/rg1/ops", "--codec-endpoint", s.codec)
	require.Contains(t, coll, "collection ops (subscription sub1, resource group rg1)")
}

// checkJobDetails checks a job's current details (`temporal workflow
// metadata`) and the answer of its job query, both through the codec.
func (s *scenario) checkJobDetails(c cli) {
	t := s.t
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The answer of the metadata query is a payload too: encrypted, the CLI
	// cannot read it without the codec.
	raw, err := temporalcli.Run(ctx, "workflow", "metadata", "--workflow-id", jobID+"bad", "--address", c.address, "--namespace", c.namespace)
	require.ErrorContains(t, err, "failed to unmarshal metadata")
	require.NotContains(t, string(raw), "next occurrence")
	meta := string(c.run("workflow", "metadata", "--workflow-id", jobID+"bad", "--codec-endpoint", s.codec))
	require.Contains(t, meta, "**Enabled**, next occurrence "+s.start.Add(time.Hour).Format(time.RFC3339))
	require.Contains(t, meta, "runs: 1, failed attempts 1, faulted 1")
	t.Logf("temporal workflow metadata --codec-endpoint ...:\n%s", meta)

	var answer struct {
		QueryResult []jobs.JobView `json:"queryResult"`
	}
	query := c.run("workflow", "query", "--workflow-id", jobID+"bad", "--type", jobs.QueryJob,
		"--codec-endpoint", s.codec, "-o", "json")
	require.NoError(t, json.Unmarshal(query, &answer), string(query))
	require.Len(t, answer.QueryResult, 1, string(query))
	p := answer.QueryResult[0].Job.Properties
	require.Equal(t, jobs.Enabled, p.State)
	require.Equal(t, 1, p.Status.FaultedCount)
	require.Equal(t, s.start.Add(time.Hour), p.Status.NextExecutionTime.UTC())
}

// rowsShown returns the data of every memo upsert of history rows in the
// JSON of `temporal workflow show --output json`, base64-decoded.
func rowsShown(t *testing.T, show string) string {
	t.Helper()
	var h struct {
		Events []struct {
			WorkflowPropertiesModifiedEventAttributes struct {
				UpsertedMemo struct {
					Fields map[string]struct{ Data []byte }
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(show), &h))
	var rows []string
	for _, e := range h.Events {
		if f, ok := e.WorkflowPropertiesModifiedEventAttributes.UpsertedMemo.Fields[jobs.MemoRows]; ok {
			rows = append(rows, string(f.Data))
		}
	}
	require.NotEmpty(t, rows, "the job wrote history rows")
	return strings.Join(rows, "\n")
}
