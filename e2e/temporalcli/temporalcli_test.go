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

// TestTemporalCLIFindsJobsAndRuns runs Temporal's own CLI against a recur
// (in-process Temporal, real worker and API, payloads encrypted): jobs by
// state and the failed runs of one job are found by recur's search
// attributes alone, and `temporal workflow describe` shows a job's summary
// only through recur's codec endpoint.
func TestTemporalCLIFindsJobsAndRuns(t *testing.T) {
	installCLI(t)
	st, err := recurtest.Start()
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	api := recurproc.NewClient(st.API.URL)
	ctx := context.Background()
	c := cli{t: t, address: st.Temporal.GetFrontendHostPort(), namespace: st.Temporal.GetDefaultNamespace()}

	ok, failing := target(t, http.StatusOK), target(t, http.StatusInternalServerError)
	require.NoError(t, api.Do(ctx, http.MethodPut, collPath, map[string]any{"properties": map[string]any{}}, nil, http.StatusCreated))
	// A one-time job whose start has passed runs at once, a recurring one
	// at its next occurrence: the start must still be ahead when "good"
	// and "bad" are created, first.
	start := time.Now().UTC().Add(6 * time.Second).Truncate(time.Second)
	hourly := map[string]any{"frequency": "Hour"}
	for _, j := range []struct {
		name string
		body map[string]any
	}{
		{"good", httpJob(ok+"/ping?token=SECRET", start, nil)},          // runs once, succeeds: Completed
		{"bad", httpJob(failing+"/ping", start, hourly)},                // runs, fails, stays Enabled
		{"once", httpJob(failing+"/once", start, nil)},                  // runs once, fails: Faulted
		{"later", httpJob(ok+"/later", start.Add(time.Hour), hourly)},   // Enabled, no run yet
		{"paused", httpJob(ok+"/paused", start.Add(time.Hour), hourly)}, // Disabled below
		{"gone", httpJob(ok+"/gone", start.Add(time.Hour), hourly)},     // deleted below
	} {
		var created jobs.Job
		require.NoError(t, api.Do(ctx, http.MethodPut, collPath+"/jobs/"+j.name, j.body, &created, http.StatusCreated), j.name)
		require.NotNil(t, created.Properties.Status)
		require.NotNil(t, created.Properties.Status.NextExecutionTime, j.name)
		if j.name == "good" || j.name == "bad" || j.name == "once" {
			require.Equal(t, start, created.Properties.Status.NextExecutionTime.UTC(),
				"%s: the machine was too slow to create the job before its start", j.name)
		}
	}
	require.NoError(t, api.Do(ctx, http.MethodDelete, collPath+"/jobs/gone", nil, nil, http.StatusOK))
	require.NoError(t, api.Do(ctx, http.MethodPatch, collPath+"/jobs/paused",
		map[string]any{"properties": map[string]any{"state": "Disabled"}}, nil, http.StatusOK))

	// Both runs are over once the API counts them.
	require.Eventually(t, func() bool {
		for _, name := range []string{"good", "bad", "once"} {
			var j jobs.Job
			if api.Do(ctx, http.MethodGet, collPath+"/jobs/"+name, nil, &j, http.StatusOK) != nil ||
				j.Properties.Status == nil || j.Properties.Status.ExecutionCount != 1 {
				return false
			}
		}
		return true
	}, 60*time.Second, 250*time.Millisecond)

	occurrence := "@" + start.Format(time.RFC3339)
	runs := []string{jobID + "bad" + occurrence, jobID + "good" + occurrence, jobID + "once" + occurrence}
	c.listEventually(`RecurKind="run" AND RecurJob="bad" AND RecurStatus="Failed"`, jobID+"bad"+occurrence)
	c.listEventually(`RecurKind="run" AND RecurCollection="ops" AND RecurJob="bad" AND RecurStatus="Failed"`, jobID+"bad"+occurrence)
	c.listEventually(`RecurKind="run" AND RecurJob="good" AND RecurStatus="Failed"`)
	c.listEventually(`RecurKind="run" AND RecurStatus="Completed"`, jobID+"good"+occurrence)
	c.listEventually(`RecurKind="run" AND ExecutionStatus="Failed"`, jobID+"bad"+occurrence, jobID+"once"+occurrence)
	c.listEventually(`RecurKind="job" AND RecurState="Faulted" AND ExecutionStatus="Running"`, jobID+"once")
	c.listEventually(`RecurKind="job" AND ExecutionStatus="Completed"`, jobID+"gone")
	// A deleted job's workflow has ended in the state it had; so have the
	// earlier runs of a job that continued as new. The jobs that exist are
	// the running job workflows.
	c.listEventually(`RecurKind="job" AND RecurState="Enabled" AND ExecutionStatus="Running"`, jobID+"bad", jobID+"later")
	c.listEventually(`RecurKind="job" AND RecurState="Enabled"`, jobID+"bad", jobID+"gone", jobID+"later")
	c.listEventually(`RecurKind="job" AND RecurCollection="ops" AND RecurState="Disabled"`, jobID+"paused")
	c.listEventually(`RecurKind="job" AND RecurState="Completed"`, jobID+"good")
	c.listEventually(`RecurKind="run" AND RecurCollection="ops" AND RecurNominalTime >= "`+start.Format(time.RFC3339)+`"`,
		runs...)
	c.listEventually(`RecurKind="run" AND RecurCollection="ops" AND RecurNominalTime > "`+start.Add(-time.Hour).Format(time.RFC3339)+`"`, runs...)
	// Not "> start": the embedded server's SQLite visibility takes a stored
	// whole second for later than the same second in a query.
	after := start.Add(time.Second).Format(time.RFC3339)
	c.listEventually(`RecurKind="run" AND RecurNominalTime > "` + after + `"`)
	c.listEventually(`RecurKind="run" AND RecurNominalTime < "`+after+`"`, runs...)
	c.listEventually(`RecurKind="run" AND ExecutionStatus="Running"`)
	c.listEventually(`RecurKind="collection" AND RecurState="Enabled"`, "collection:sub1/rg1/ops")
	c.listEventually(`RecurCollection="ops" AND RecurSubscription="sub1"`, append([]string{"collection:sub1/rg1/ops",
		jobID + "bad", jobID + "gone", jobID + "good", jobID + "later", jobID + "once", jobID + "paused"}, runs...)...)

	// The summary is a payload: encrypted at rest, readable through the
	// codec endpoint, and without the target's query either way.
	describe := func(args ...string) string {
		return string(c.run(append([]string{"workflow", "describe", "--workflow-id", jobID + "good"}, args...)...))
	}
	summary := "job ops/good: once at " + start.Format(time.RFC3339) + " → POST " + ok + "/ping"
	plain := describe()
	require.Contains(t, plain, base64.StdEncoding.EncodeToString([]byte(codec.EncodingEncrypted)), "the summary's encoding, as the CLI prints it")
	require.NotContains(t, plain, summary, "without the codec the summary is encrypted")
	decoded := describe("--codec-endpoint", st.API.URL+"/codec")
	require.Contains(t, decoded, summary)
	require.NotContains(t, plain+decoded, "SECRET")
	t.Logf("temporal workflow describe --codec-endpoint ...:\n%s", decoded)

	run := string(c.run("workflow", "describe", "--workflow-id", jobID+"bad"+occurrence, "--codec-endpoint", st.API.URL+"/codec"))
	require.Contains(t, run, "occurrence "+start.Format(time.RFC3339)+" of ops/bad → POST "+failing+"/ping")

	meta := string(c.run("workflow", "metadata", "--workflow-id", jobID+"bad", "--codec-endpoint", st.API.URL+"/codec"))
	require.Contains(t, meta, "**Enabled**, next occurrence "+start.Add(time.Hour).Format(time.RFC3339))
	require.Contains(t, meta, "runs: 1, failed attempts 1, faulted 1")
	t.Logf("temporal workflow metadata --codec-endpoint ...:\n%s", meta)

	// The job query's answer, decoded: the definition and status.
	var answer struct {
		QueryResult []jobs.JobView `json:"queryResult"`
	}
	query := c.run("workflow", "query", "--workflow-id", jobID+"bad", "--type", jobs.QueryJob,
		"--codec-endpoint", st.API.URL+"/codec", "-o", "json")
	require.NoError(t, json.Unmarshal(query, &answer), string(query))
	require.Len(t, answer.QueryResult, 1, string(query))
	p := answer.QueryResult[0].Job.Properties
	require.Equal(t, jobs.Enabled, p.State)
	require.Equal(t, 1, p.Status.FaultedCount)
	require.Equal(t, start.Add(time.Hour), p.Status.NextExecutionTime.UTC())
}
