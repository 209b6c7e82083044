package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/internal/azuresdk"
	"github.com/recurhq/recur/internal/recurtest"
)

// sdkRun is what testdata/azuresdk.js gives the script and what the test
// expects back.
type sdkRun struct {
	BaseURI        string `json:"baseUri"`
	Token          string `json:"token"`
	SubscriptionID string `json:"subscriptionId"`
	ResourceGroup  string `json:"resourceGroup"`
	Collection     string `json:"collection"`
	Target         string `json:"target"`
	StartTime      string `json:"startTime"`
	EndTime        string `json:"endTime"`
	Password       string `json:"password"`
	SASToken       string `json:"sasToken"`
}

// sdkStep is what the script saw of one step: the SDK's result, or the
// error it reported.
type sdkStep struct {
	OK    bool `json:"ok"`
	Value any  `json:"value"`
	Error *struct {
		StatusCode int    `json:"statusCode"`
		Code       string `json:"code"`
		Message    string `json:"message"`
	} `json:"error"`
}

// sdkStepNames are the script's steps, in order; the two named deleted
// are expected to fail with a 404.
var sdkStepNames = []string{
	"client",
	"jobCollections.createOrUpdate", "jobCollections.get", "jobCollections.listByResourceGroup",
	"jobCollections.listBySubscription", "jobCollections.patch",
	"jobCollections.get before put back", "jobCollections.createOrUpdate put back",
	"jobs.createOrUpdate", "jobs.get", "jobs.createOrUpdate second", "jobs.list",
	"jobCollections.disable", "jobCollections.get disabled", "jobs.get collection disabled",
	"jobCollections.enable", "jobCollections.get enabled", "jobs.get collection enabled",
	"jobs.patch",
	"jobs.run", "jobs.listJobHistory",
	"jobs.get before put back", "jobs.createOrUpdate put back", "jobs.get after put back",
	"jobs.deleteMethod", "jobs.get deleted",
	"jobCollections.deleteMethod", "jobCollections.get deleted",
}

// TestAzureNodeSDK: Azure's own Node SDK for Scheduler (azure-arm-scheduler,
// its last release), unchanged, drives recur through every operation of
// its two operation groups, with its model classes, its serializer and
// its long-running-operation poller, authenticated by a bearer token. What
// it writes reads back as written; a job read with the SDK, changed in one
// member and written back is taken; a collection's disable, enable and
// DELETE answer 202 (the stack's operation wait is a nanosecond) and the
// SDK follows the Location to the end; a deleted resource is a 404 the SDK reports as
// ResourceNotFound. No request of the SDK is refused but those two GETs.
func TestAzureNodeSDK(t *testing.T) {
	const token, sub = "azure-sdk-token-0123456789", "sdk-sub"
	azuresdk.Modules(t) // installs the SDK, or skips under -short, before the stack starts
	tokens, err := api.ParseTokenList(token + "=" + sub)
	require.NoError(t, err)
	target, got := newTLSTarget(t)
	log := &accessLog{}
	st := newStackWith(t, recurtest.Config{Auth: tokens, OperationWait: time.Nanosecond, Logger: slog.New(log),
		Activities: []func(*activities.Activities){trusting(target)}})
	// Far in the future: the job runs only when the SDK says run.
	start := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Hour)
	run := sdkRun{BaseURI: st.api.URL, Token: token, SubscriptionID: sub, ResourceGroup: "sdk-rg", Collection: "sdk-coll",
		Target: target.URL, StartTime: start.Format(time.RFC3339), EndTime: start.AddDate(1, 0, 0).Format(time.RFC3339),
		Password: "sdk-pa55word", SASToken: "?sv=2015-04-05&sig=sdk"}
	steps := runSDK(t, run)

	client := steps.object(t, "client")
	assert.Equal(t, azuresdk.Version, client["version"])
	assert.Equal(t, api.APIVersion, client["apiVersion"], "the api-version the SDK sends")

	checkSDKCollection(t, steps, run)
	checkSDKJobs(t, steps, run, start)
	checkSDKRun(t, got, run)
	checkSDKTraffic(t, log, "/subscriptions/"+sub+"/resourceGroups/"+run.ResourceGroup+
		"/providers/Microsoft.Scheduler/jobCollections/"+run.Collection)
}

// checkSDKRun checks the request of the run the SDK asked for: the
// headers, body and Basic authentication it wrote.
func checkSDKRun(t *testing.T, got <-chan received, run sdkRun) {
	t.Helper()
	select {
	case r := <-got:
		assert.Equal(t, http.MethodPost, r.method)
		assert.Equal(t, "Basic "+base64.StdEncoding.EncodeToString([]byte("sdk-user:"+run.Password)), r.header.Get("Authorization"))
		assert.Equal(t, "application/json", r.header.Get("Content-Type"))
		assert.Equal(t, "azure-arm-scheduler", r.header.Get("X-Sdk"))
		assert.Equal(t, `{"from":"sdk"}`, r.body)
	default:
		// The target has the request before it answers, and the history
		// row comes after the answer.
		t.Error("the job's target received nothing, though its history has a run")
	}
}

// checkSDKTraffic checks how recur answered the SDK's requests to the
// collection: disable, enable and DELETE with a 202 whose Location the
// SDK polled to its 200, every request with the SDK's bearer token, and
// none refused but the GETs after the deletes.
func checkSDKTraffic(t *testing.T, log *accessLog, collection string) {
	t.Helper()
	// The last request's row is written as its answer goes out.
	require.Eventually(t, func() bool { return log.answered(http.MethodGet, collection, http.StatusNotFound) > 0 },
		5*time.Second, 10*time.Millisecond, "the access log has the last request")
	for _, op := range []struct{ method, path string }{
		{http.MethodPost, collection + "/disable"}, {http.MethodPost, collection + "/enable"}, {http.MethodDelete, collection}} {
		assert.Equal(t, 1, log.answered(op.method, op.path, http.StatusAccepted), "%s %s answered 202 once", op.method, op.path)
	}
	assert.GreaterOrEqual(t, log.answered(http.MethodGet, collection+"/operations/", http.StatusOK), 3,
		"the SDK followed each Location to its 200")
	for _, row := range log.all() {
		assert.Equal(t, "env#1", row.principal, "%+v: every request carries the SDK's bearer token", row)
		if row.status >= 400 {
			assert.True(t, row.method == http.MethodGet && (row.path == collection || row.path == collection+"/jobs/rich") &&
				row.status == http.StatusNotFound, "%+v: refused", row)
		}
	}
}

// checkSDKCollection checks the collection steps: what createOrUpdate
// wrote reads back and is listed, the patch and the SDK's put back of
// what it read are taken, and disable and enable change the state of the
// collection and its jobs.
func checkSDKCollection(t *testing.T, steps sdkSteps, run sdkRun) {
	t.Helper()
	created := steps.object(t, "jobCollections.createOrUpdate")
	assert.Equal(t, run.Collection, created["name"])
	assert.Equal(t, "West Europe", created["location"])
	assert.Equal(t, map[string]any{"team": "sdk"}, created["tags"])
	assertFold(t, "Standard", path(created, "properties", "sku", "name"))
	assertFold(t, "Enabled", path(created, "properties", "state"))
	assert.Equal(t, 10.0, path(created, "properties", "quota", "maxJobCount"))
	assertFold(t, "Minute", path(created, "properties", "quota", "maxRecurrence", "frequency"))
	assert.Equal(t, 1.0, path(created, "properties", "quota", "maxRecurrence", "interval"))
	assert.Equal(t, created, steps.object(t, "jobCollections.get"))
	for _, list := range []string{"jobCollections.listByResourceGroup", "jobCollections.listBySubscription"} {
		assert.Contains(t, steps.list(t, list), any(created), "%s lists the collection", list)
	}

	patched := steps.object(t, "jobCollections.patch")
	assert.Equal(t, 20.0, path(patched, "properties", "quota", "maxJobCount"))
	delete(path(patched, "properties", "quota").(map[string]any), "maxJobCount")
	delete(path(created, "properties", "quota").(map[string]any), "maxJobCount")
	assert.Equal(t, created, patched, "the rest is kept")

	read := steps.object(t, "jobCollections.get before put back")
	putBack := steps.object(t, "jobCollections.createOrUpdate put back")
	assert.Equal(t, 200.0, putBack["statusCode"])
	assert.Equal(t, run.Collection, path(putBack, "sent", "name"), "the SDK sends the name it read")
	assert.Equal(t, map[string]any{"team": "sdk", "stage": "put back"}, path(putBack, "body", "tags"))
	delete(path(putBack, "body").(map[string]any), "tags")
	delete(read, "tags")
	assert.Equal(t, read, path(putBack, "body"), "the rest is kept")

	// The operation has ended when the SDK's poller returns: the job
	// shows the change too.
	assertFold(t, "Disabled", path(steps.object(t, "jobCollections.get disabled"), "properties", "state"))
	assertFold(t, "Disabled", path(steps.object(t, "jobs.get collection disabled"), "properties", "state"))
	assertFold(t, "Enabled", path(steps.object(t, "jobCollections.get enabled"), "properties", "state"))
	assertFold(t, "Enabled", path(steps.object(t, "jobs.get collection enabled"), "properties", "state"))
	steps.notFound(t, "jobCollections.get deleted")
}

// checkSDKJobs checks the job steps: the rich job reads back as written,
// through PUT, GET, PATCH and the SDK's put back; the list pages; the run
// has its history; the deleted job is not found.
func checkSDKJobs(t *testing.T, steps sdkSteps, run sdkRun, start time.Time) {
	t.Helper()
	checkRichJob(t, run, start, steps.object(t, "jobs.createOrUpdate"), 2, "Enabled")
	checkRichJob(t, run, start, steps.object(t, "jobs.get"), 2, "Enabled")
	assert.Equal(t, []any{[]any{run.Collection + "/rich"}, []any{run.Collection + "/second"}}, steps.step(t, "jobs.list").Value,
		"$top=1 pages the two jobs, and the SDK follows nextLink")
	checkRichJob(t, run, start, steps.object(t, "jobs.patch"), 2, "Disabled")

	history := steps.list(t, "jobs.listJobHistory")
	require.NotEmpty(t, history)
	entry, _ := history[0].(map[string]any)
	assertFold(t, "Completed", path(entry, "properties", "status"))
	assert.Equal(t, "MainAction", path(entry, "properties", "actionName"))

	read := steps.object(t, "jobs.get before put back")
	checkRichJob(t, run, start, read, 2, "Disabled")
	assert.Equal(t, 1.0, path(read, "properties", "status", "executionCount"), "run counts")
	putBack := steps.object(t, "jobs.createOrUpdate put back")
	assert.Equal(t, 200.0, putBack["statusCode"])
	sent, _ := putBack["sent"].(map[string]any)
	// The SDK sends what it read, as recur wrote it (state in lower case)
	// and as Azure's contract names it ("Occurrence").
	assert.Equal(t, path(read, "properties", "state"), path(sent, "properties", "state"))
	occurrences, _ := path(sent, "properties", "recurrence", "schedule", "monthlyOccurrences").([]any)
	require.Len(t, occurrences, 2)
	assert.Contains(t, occurrences[0], "Occurrence")
	answered, _ := putBack["body"].(map[string]any)
	checkRichJob(t, run, start, answered, 3, "Disabled")
	checkRichJob(t, run, start, steps.object(t, "jobs.get after put back"), 3, "Disabled")
	steps.notFound(t, "jobs.get deleted")
}

// checkRichJob checks that job, as the SDK read it, is the script's rich
// job with retryCount and state, without its secrets.
func checkRichJob(t *testing.T, run sdkRun, start time.Time, job map[string]any, retryCount int, state string) {
	t.Helper()
	assert.Equal(t, run.Collection+"/rich", job["name"])
	props, _ := job["properties"].(map[string]any)
	assertTime(t, start, props["startTime"])
	assertFold(t, state, props["state"])

	assertFold(t, "Https", path(props, "action", "type"))
	request, _ := path(props, "action", "request").(map[string]any)
	assert.Equal(t, run.Target+"/hook", request["uri"])
	assert.Equal(t, "POST", request["method"])
	assert.Equal(t, `{"from":"sdk"}`, request["body"])
	assert.Equal(t, map[string]any{"Content-Type": "application/json", "X-Sdk": "azure-arm-scheduler"}, request["headers"])
	auth, _ := request["authentication"].(map[string]any)
	assertFold(t, "Basic", auth["type"])
	assert.Equal(t, "sdk-user", auth["username"])
	assert.NotContains(t, auth, "password")

	retry, _ := path(props, "action", "retryPolicy").(map[string]any)
	assertFold(t, "Fixed", retry["retryType"])
	assert.Equal(t, "PT1M", retry["retryInterval"])
	assert.Equal(t, float64(retryCount), retry["retryCount"])

	assertFold(t, "StorageQueue", path(props, "action", "errorAction", "type"))
	assert.Equal(t, map[string]any{"storageAccount": "sdkaccount", "queueName": "sdk-errors", "message": "the job failed"},
		path(props, "action", "errorAction", "queueMessage"), "without its SAS token")

	recurrence, _ := props["recurrence"].(map[string]any)
	assertFold(t, "Month", recurrence["frequency"])
	assert.Equal(t, 1.0, recurrence["interval"])
	assertTime(t, start.AddDate(1, 0, 0), recurrence["endTime"])
	assert.Equal(t, []any{2.0}, path(recurrence, "schedule", "hours"))
	assert.Equal(t, []any{30.0}, path(recurrence, "schedule", "minutes"))
	occurrences, _ := path(recurrence, "schedule", "monthlyOccurrences").([]any)
	require.Len(t, occurrences, 2)
	for i, want := range []struct {
		day        string
		occurrence float64
	}{{"Monday", 1}, {"Friday", -1}} {
		o, _ := occurrences[i].(map[string]any)
		assertFold(t, want.day, o["day"])
		assert.Equal(t, want.occurrence, o["occurrence"])
	}
}

// runSDK runs testdata/azuresdk.js with run and returns its steps, each
// of sdkStepNames present.
func runSDK(t *testing.T, run sdkRun) sdkSteps {
	t.Helper()
	arg, err := json.Marshal(run)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := azuresdk.Command(ctx, t, filepath.Join("testdata", "azuresdk.js"), string(arg))
	out, err := cmd.Output()
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		t.Fatalf("node: %v\n%s", err, exit.Stderr)
	}
	require.NoError(t, err)
	var steps sdkSteps
	require.NoError(t, json.Unmarshal(out, &steps), "%s", out)
	for name, s := range steps {
		if !strings.HasSuffix(name, " deleted") {
			require.True(t, s.OK, "%s failed: %+v\nall steps: %s", name, s.Error, out)
		}
	}
	for _, name := range sdkStepNames {
		require.Contains(t, steps, name, "the script's output: %s", out)
	}
	return steps
}

// sdkSteps are the steps of a run of the script, by name.
type sdkSteps map[string]sdkStep

func (s sdkSteps) step(t *testing.T, name string) sdkStep {
	t.Helper()
	step, ok := s[name]
	require.True(t, ok, "no step %s", name)
	return step
}

// object returns the value of a step that answered a JSON object.
func (s sdkSteps) object(t *testing.T, name string) map[string]any {
	t.Helper()
	obj, ok := s.step(t, name).Value.(map[string]any)
	require.True(t, ok, "%s answered %v", name, s[name].Value)
	return obj
}

// list returns the value of a step that answered a JSON array.
func (s sdkSteps) list(t *testing.T, name string) []any {
	t.Helper()
	list, ok := s.step(t, name).Value.([]any)
	require.True(t, ok, "%s answered %v", name, s[name].Value)
	return list
}

// notFound checks that the SDK reported a step's 404 as Azure's.
func (s sdkSteps) notFound(t *testing.T, name string) {
	t.Helper()
	step := s.step(t, name)
	require.False(t, step.OK, "%s answered %v", name, step.Value)
	require.NotNil(t, step.Error)
	assert.Equal(t, http.StatusNotFound, step.Error.StatusCode, name)
	assert.Equal(t, "ResourceNotFound", step.Error.Code, name)
}

// assertFold checks an enumeration's value: recur writes some in the
// lower case the service wrote them in, as the SDK reads them.
func assertFold(t *testing.T, want string, got any) {
	t.Helper()
	s, _ := got.(string)
	assert.True(t, strings.EqualFold(want, s), "want %q in any case, got %v", want, got)
}

// assertTime checks a date-time the SDK read (and wrote back as an ISO
// string with milliseconds).
func assertTime(t *testing.T, want time.Time, got any) {
	t.Helper()
	s, _ := got.(string)
	at, err := time.Parse(time.RFC3339, s)
	if assert.NoError(t, err) {
		assert.True(t, want.Equal(at), "want %s, got %s", want, s)
	}
}

// newTLSTarget is newTarget over HTTPS, for Https actions.
func newTLSTarget(t testing.TB) (*httptest.Server, chan received) {
	got := make(chan received, 16)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case got <- received{method: r.Method, header: r.Header.Clone(), body: string(body)}:
		default:
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// trusting makes the activities trust srv's certificate, through the
// stack's egress policy.
func trusting(srv *httptest.Server) func(*activities.Activities) {
	return func(a *activities.Activities) {
		tr := recurtest.Egress.Transport()
		tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
		a.Client = &http.Client{Transport: tr, CheckRedirect: recurtest.Egress.CheckRedirect}
	}
}

// accessLog keeps the rows of the API's access log: how recur answered
// each request, which the SDK's results hide (its poller makes one
// result of a 202 and the polls of its Location).
type accessLog struct {
	mu   sync.Mutex
	rows []accessRow
}

type accessRow struct {
	method, path, principal string
	status                  int
}

func (l *accessLog) Enabled(context.Context, slog.Level) bool { return true }

func (l *accessLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "request" {
		return nil
	}
	var row accessRow
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "method":
			row.method = a.Value.String()
		case "path":
			row.path = a.Value.String()
		case "principal":
			row.principal = a.Value.String()
		case "status":
			row.status = int(a.Value.Int64())
		}
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows = append(l.rows, row)
	return nil
}

func (l *accessLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *accessLog) WithGroup(string) slog.Handler      { return l }

func (l *accessLog) all() []accessRow {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]accessRow(nil), l.rows...)
}

// answered counts the requests of method to path (to a path under it,
// when it ends with a slash) answered with status.
func (l *accessLog) answered(method, path string, status int) int {
	n := 0
	for _, row := range l.all() {
		under := strings.HasSuffix(path, "/") && strings.HasPrefix(row.path, path)
		if row.method == method && (row.path == path || under) && row.status == status {
			n++
		}
	}
	return n
}
