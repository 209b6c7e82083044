package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/jobs"
)

// The secrets of the job secretJob puts: none may show in Temporal's raw
// history.
const (
	secretPassword = "enc-pa55word-7f3a"
	secretSAS      = "sig=enc-SAS-s1gnature-9c1e"
	secretHeader   = "enc-api-key-42d8"
)

// secretSigning signs the secret job's main action: its failure record
// keeps it, with the password, to run it again.
var secretSigning = "whsec_" + base64.StdEncoding.EncodeToString([]byte("enc signing key of 32 bytes, ok"))

var secretsAtRest = []string{secretPassword, secretSAS, secretHeader,
	base64.StdEncoding.EncodeToString([]byte("user1:" + secretPassword)), secretSigning}

// secretTarget fails the main action (/fail) and records the error
// action's request (/error).
func secretTarget(t *testing.T) (*httptest.Server, chan received) {
	got := make(chan received, 16)
	srv := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{method: r.Method + " " + r.URL.RequestURI(), header: r.Header.Clone(), body: string(body)}
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	t.Cleanup(srv.Close)
	return srv, got
}

// secretJob puts an hourly job with Basic authentication, a signing
// secret, a SAS-like token in its URI and a secret header on its error
// action, first due at start. (Recurring, it stays enabled when its run faults.)
func secretJob(t *testing.T, s *stack, target string, start time.Time) {
	t.Helper()
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/secret", map[string]any{"properties": map[string]any{
		"startTime":  start.Format(time.RFC3339),
		"recurrence": map[string]any{"frequency": "Hour"},
		"action": map[string]any{
			"type": "Http",
			"request": map[string]any{"uri": target + "/fail?sv=2026-01-01&" + secretSAS, "method": "POST",
				"authentication": map[string]any{"type": "Basic", "username": "user1", "password": secretPassword},
				"signing":        map[string]any{"secrets": []string{secretSigning}}},
			"retryPolicy": map[string]any{"retryType": "None"},
			"errorAction": map[string]any{"type": "Http",
				"request": map[string]any{"uri": target + "/error", "method": "POST", "headers": map[string]any{"x-api-key": secretHeader}}},
		},
	}})
	require.Equal(t, http.StatusCreated, status, body)
}

// waitForSecretRun waits for the job's run: the main action with the
// password and token, then the error action with the header; then for
// its two history rows, read through the API.
func waitForSecretRun(t *testing.T, s *stack, got chan received) {
	t.Helper()
	for _, want := range []string{"/fail?sv=2026-01-01&" + secretSAS, "/error"} {
		select {
		case r := <-got:
			require.Equal(t, "POST "+want, r.method)
			if want == "/error" {
				require.Equal(t, secretHeader, r.header.Get("x-api-key"), "the worker decrypted the definition")
			} else {
				require.Equal(t, "Basic "+secretsAtRest[3], r.header.Get("Authorization"))
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the target never got %s", want)
		}
	}
	var rows []map[string]any
	require.Eventually(t, func() bool {
		status, body := s.get(t, collectionPath+"/jobs/secret/history", nil)
		if status != http.StatusOK {
			return false
		}
		rows = historyRows(t, body)
		return len(rows) == 2
	}, 20*time.Second, 200*time.Millisecond, "the run's history rows, decoded by the API")
	require.Equal(t, "ErrorAction", rows[0]["actionName"])
	require.Equal(t, "Completed", rows[0]["status"])
	require.Equal(t, "MainAction", rows[1]["actionName"])
	require.Equal(t, "Failed", rows[1]["status"])
}

// rawHistories reads, through a client without recur's codec, the
// history events of the secret job's collection, job and run workflows
// and the run's visibility record (its memo), each serialized as stored.
func rawHistories(t *testing.T, s *stack) [][]byte {
	t.Helper()
	plain := s.temporal.NewClientWithOptions(client.Options{})
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "secret"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var raw [][]byte
	for _, id := range []string{k.CollectionWorkflowID(), k.JobWorkflowID()} {
		iter := plain.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		n := 0
		for iter.HasNext() {
			e, err := iter.Next()
			require.NoError(t, err, id)
			data, err := proto.Marshal(e)
			require.NoError(t, err)
			raw, n = append(raw, data), n+1
		}
		require.Greater(t, n, 2, "history of %s", id)
		d, err := plain.DescribeWorkflowExecution(ctx, id, "")
		require.NoError(t, err)
		data, err := proto.Marshal(d)
		require.NoError(t, err)
		raw = append(raw, data)
	}
	return raw
}

func containsAny(raw [][]byte, s string) bool {
	for _, data := range raw {
		if bytes.Contains(data, []byte(s)) {
			return true
		}
	}
	return false
}

// TestSecretsAreEncryptedAtRest runs a job whose action carries a
// password, a signing secret, a SAS-like token and a secret header: it
// runs with them and fails for good, the API reads its definition and
// history, and its raw Temporal histories (its failure record's upsert
// among them), read without the codec, hold none of them. The same job on a stack
// without encryption shows them: the scan can fail.
func TestSecretsAreEncryptedAtRest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it runs the job on two stacks (about 6 s)")
	}
	for _, encrypted := range []bool{true, false} {
		t.Run(map[bool]string{true: "encrypted", false: "plain"}[encrypted], func(t *testing.T) {
			st, err := recurtest.StartWith(recurtest.Config{Plain: !encrypted})
			require.NoError(t, err)
			t.Cleanup(st.Stop)
			s := &stack{api: st.API, temporal: st.Temporal}
			target, got := secretTarget(t)
			start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
			secretJob(t, s, target.URL, start)
			waitForSecretRun(t, s, got)

			status, job := s.do(t, http.MethodGet, collectionPath+"/jobs/secret", nil)
			require.Equal(t, http.StatusOK, status, job)
			require.Equal(t, target.URL+"/fail?sv=2026-01-01&"+secretSAS, path(job, "properties", "action", "request", "uri"))
			require.Equal(t, "user1", path(job, "properties", "action", "request", "authentication", "username"))
			require.Equal(t, secretHeader, path(job, "properties", "action", "errorAction", "request", "headers", "x-api-key"))
			requireNoSecret(t, job, secretPassword)
			requireNoSecret(t, job, secretSigning)

			raw := rawHistories(t, s)
			// The run failed for good: its failure record, which keeps the
			// action with its password and signing secret, is in the job's
			// history (its memo key is not encrypted, its value is).
			require.True(t, containsAny(raw, jobs.MemoFailures), "the failure record is in the history")
			if !encrypted {
				require.True(t, containsAny(raw, secretPassword), "without encryption the password is in the history: the scan works")
				require.True(t, containsAny(raw, secretSAS))
				require.True(t, containsAny(raw, secretHeader))
				require.True(t, containsAny(raw, secretSigning))
				return
			}
			for _, secret := range secretsAtRest {
				require.False(t, containsAny(raw, secret), "%q is in a raw history", secret)
			}
			require.True(t, containsAny(raw, codec.EncodingEncrypted))
			require.True(t, containsAny(raw, st.Keys.Current()), "payloads name their key")
		})
	}
}

// TestRotationReadsOldPayloads: payloads written under one key stay
// readable once another is current. The stack's processes know both keys
// and encrypt with the first (step one of a rotation); an API whose
// current key is the second (step two) reads the job and its history,
// and changes the job, which then runs with its secret.
func TestRotationReadsOldPayloads(t *testing.T) {
	first, err := codec.Generate()
	require.NoError(t, err)
	both, err := first.WithNewKey(false)
	require.NoError(t, err)
	st, err := recurtest.StartWith(recurtest.Config{Keys: both})
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	s := &stack{api: st.API, temporal: st.Temporal}
	target, got := secretTarget(t)
	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	secretJob(t, s, target.URL, start)
	waitForSecretRun(t, s, got)

	var second string
	for _, id := range both.IDs() {
		if id != first.Current() {
			second = id
		}
	}
	rotated, err := both.WithCurrent(second)
	require.NoError(t, err)
	dc := codec.DataConverter(rotated)
	c := st.Temporal.NewClientWithOptions(client.Options{DataConverter: dc, FailureConverter: codec.FailureConverter(dc)})
	newAPI := httptest.NewServer(api.New(c, api.Options{Namespace: st.Temporal.GetDefaultNamespace(), DataConverter: dc}))
	t.Cleanup(newAPI.Close)
	r := &stack{api: newAPI, temporal: st.Temporal}

	waitForHistory := func(rows int) {
		t.Helper()
		require.Eventually(t, func() bool {
			status, body := r.get(t, collectionPath+"/jobs/secret/history", nil)
			return status == http.StatusOK && len(historyRows(t, body)) == rows
		}, 20*time.Second, 200*time.Millisecond)
	}
	waitForHistory(2)
	status, job := r.do(t, http.MethodPatch, collectionPath+"/jobs/secret", map[string]any{"properties": map[string]any{
		"action": map[string]any{"errorAction": map[string]any{"request": map[string]any{"body": "after rotation"}}},
	}})
	require.Equal(t, http.StatusOK, status, job)
	require.Equal(t, secretHeader, path(job, "properties", "action", "errorAction", "request", "headers", "x-api-key"))
	status, body := r.do(t, http.MethodPost, collectionPath+"/jobs/secret/run", nil)
	require.Equal(t, http.StatusOK, status, body)
	for range 2 {
		select {
		case req := <-got:
			if req.method == "POST /error" {
				require.Equal(t, "after rotation", req.body)
				require.Equal(t, secretHeader, req.header.Get("x-api-key"))
			} else {
				require.Equal(t, "Basic "+secretsAtRest[3], req.header.Get("Authorization"))
			}
		case <-time.After(30 * time.Second):
			t.Fatal("run now never reached the target")
		}
	}
	waitForHistory(4)

	raw := rawHistories(t, s)
	require.True(t, containsAny(raw, first.Current()), "payloads of the first key")
	require.True(t, containsAny(raw, second), "payloads of the second key (the PATCH)")
	for _, secret := range secretsAtRest {
		require.False(t, containsAny(raw, secret), "%q is in a raw history", secret)
	}
}

// Bearer tokens of TestCodecEndpoint.
const (
	opToken     = "operator-token-2b7d9e41"
	tenantToken = "tenant-token-5c0a8f13"
)

// TestCodecEndpoint: the Web UI's codec endpoint decodes a payload of
// the history for an operator's token only; a browser's CORS preflight
// passes without one.
func TestCodecEndpoint(t *testing.T) {
	st, err := recurtest.Start()
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	s := &stack{api: st.API, temporal: st.Temporal}
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/secret", map[string]any{"properties": map[string]any{
		"startTime": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		"action": map[string]any{"type": "Http", "request": map[string]any{"uri": "https://example.com/", "method": "POST",
			"authentication": map[string]any{"type": "Basic", "username": "user1", "password": secretPassword}}},
	}})
	require.Equal(t, http.StatusCreated, status, body)

	// An encrypted payload as the UI gets it: the input that started the
	// new job's workflow, which holds its definition.
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "secret"}
	plain := st.Temporal.NewClientWithOptions(client.Options{})
	iter := plain.GetWorkflowHistory(context.Background(), k.JobWorkflowID(), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var payload *commonpb.Payload
	for iter.HasNext() && payload == nil {
		e, err := iter.Next()
		require.NoError(t, err)
		if a := e.GetWorkflowExecutionStartedEventAttributes(); a != nil {
			payload = a.GetInput().GetPayloads()[0]
		}
	}
	require.NotNil(t, payload, "the job's history has its start")
	require.Equal(t, codec.EncodingEncrypted, string(payload.Metadata[codec.MetadataEncoding]))
	request, err := json.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{payload}})
	require.NoError(t, err)

	tokens, err := api.ParseTokenList(opToken + "=*;" + tenantToken + "=sub1")
	require.NoError(t, err)
	const ui = "http://127.0.0.1:8233"
	authAPI := httptest.NewServer(api.New(st.Temporal.GetDefaultClient(), api.Options{
		Namespace: st.Temporal.GetDefaultNamespace(), Auth: tokens, Codec: codec.Handler(st.Keys, ui),
	}))
	t.Cleanup(authAPI.Close)
	post := func(base, token string) (int, []byte) {
		req, err := http.NewRequest(http.MethodPost, base+"/codec/decode", bytes.NewReader(request))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Namespace", st.Temporal.GetDefaultNamespace())
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, data
	}

	status, data := post(authAPI.URL, "")
	require.Equal(t, http.StatusUnauthorized, status, string(data))
	require.NotContains(t, string(data), secretPassword)
	status, data = post(authAPI.URL, tenantToken)
	require.Equal(t, http.StatusForbidden, status, "a tenant's token may not decode: %s", data)
	require.NotContains(t, string(data), secretPassword)
	for _, base := range []string{authAPI.URL, st.API.URL} { // with an operator's token; on an API without auth
		status, data = post(base, opToken)
		require.Equal(t, http.StatusOK, status, string(data))
		var decoded commonpb.Payloads
		require.NoError(t, protojson.Unmarshal(data, &decoded))
		require.Len(t, decoded.Payloads, 1)
		var in jobs.JobInput
		require.NoError(t, converter.GetDefaultDataConverter().FromPayload(decoded.Payloads[0], &in))
		require.Equal(t, "user1", in.State.Job.Properties.Action.Request.Authentication.Username)
		require.Contains(t, string(decoded.Payloads[0].Data), secretPassword, "the operator sees the definition as stored")
	}

	req, err := http.NewRequest(http.MethodOptions, authAPI.URL+"/codec/decode", nil)
	require.NoError(t, err)
	req.Header.Set("Origin", ui)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-namespace")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.Equal(t, ui, resp.Header.Get("Access-Control-Allow-Origin"))
}

// greetPlain is the workflow a Workflow action starts, on a worker with
// Temporal's default converter.
func greetPlain(_ workflow.Context, in map[string]any) (string, error) {
	return "hello " + in["name"].(string), nil
}

// TestWorkflowActionInputIsPlain: recur encrypts what it writes for
// itself, not the input of the workflows Workflow actions start, whose
// workers do not have recur's keys.
func TestWorkflowActionInputIsPlain(t *testing.T) {
	var allowed jobs.WorkflowTargets
	require.NoError(t, allowed.Add("temporaltest-*/plain-queue"))
	s := newStackWith(t, recurtest.Config{WorkflowTargets: allowed})
	plain := s.temporal.NewClientWithOptions(client.Options{})
	w := sdkworker.New(plain, "plain-queue", sdkworker.Options{})
	w.RegisterWorkflowWithOptions(greetPlain, workflow.RegisterOptions{Name: "greetPlain"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/starter", map[string]any{"properties": map[string]any{
		"startTime": start.Format(time.RFC3339),
		"action": map[string]any{"type": "workflow", "workflow": map[string]any{
			"workflowType": "greetPlain", "taskQueue": "plain-queue", "input": map[string]any{"name": "plain"}}},
	}})
	require.Equal(t, http.StatusCreated, status, body)
	id := "job:sub1/rg1/coll1/starter@" + start.Format(time.RFC3339) + "/workflow"
	var greeting string
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return plain.GetWorkflow(ctx, id, "").Get(ctx, &greeting) == nil
	}, 30*time.Second, 250*time.Millisecond, "the workflow %s never completed on a worker without recur's keys", id)
	require.Equal(t, "hello plain", greeting)
}

// Failure text of TestFailureMessagesAreEncryptedAtRest: what the target
// says, and a password with characters JSON encoders escape.
const (
	targetSaid     = "target-said-7d1c40e2"
	secretAwkward  = `enc-pa"ss<w0rd>-5e9b`
	secretEscaped  = `enc-pa\"ss\u003cw0rd\u003e-5e9b`
	failingJobName = "secret"
)

// TestFailureMessagesAreEncryptedAtRest: a run's failure message holds
// what the target answered (its body, here with the password it got,
// JSON-escaped). With encryption, Temporal stores failure messages
// encoded by the codec, as it stores payloads; the API still shows the
// message, the password redacted. Without encryption the message is in
// the history as it is: the scan can fail.
func TestFailureMessagesAreEncryptedAtRest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it runs the job on two stacks (about 6 s)")
	}
	for _, encrypted := range []bool{true, false} {
		t.Run(map[bool]string{true: "encrypted", false: "plain"}[encrypted], func(t *testing.T) {
			st, err := recurtest.StartWith(recurtest.Config{Plain: !encrypted})
			require.NoError(t, err)
			t.Cleanup(st.Stop)
			s := &stack{api: st.API, temporal: st.Temporal}
			target := newJobTarget(func(w http.ResponseWriter, r *http.Request) {
				_, password, _ := r.BasicAuth()
				echo, _ := json.Marshal(map[string]string{"error": targetSaid, "password": password})
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write(echo)
			})
			t.Cleanup(target.Close)

			status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
			require.Equal(t, http.StatusCreated, status, body)
			start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
			status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/"+failingJobName, map[string]any{"properties": map[string]any{
				"startTime": start.Format(time.RFC3339),
				"action": map[string]any{"type": "Http", "retryPolicy": map[string]any{"retryType": "None"},
					"request": map[string]any{"uri": target.URL + "/fail", "method": "POST",
						"authentication": map[string]any{"type": "Basic", "username": "user1", "password": secretAwkward}}},
			}})
			require.Equal(t, http.StatusCreated, status, body)

			var rows []map[string]any
			require.Eventually(t, func() bool {
				status, body := s.get(t, collectionPath+"/jobs/"+failingJobName+"/history", nil)
				rows = historyRows(t, body)
				return status == http.StatusOK && len(rows) == 1
			}, 30*time.Second, 200*time.Millisecond, "the failed run's history row")
			message, _ := rows[0]["message"].(string)
			require.Contains(t, message, targetSaid, "the API decodes the row")
			require.Contains(t, message, `"password":"[redacted]"`)
			require.NotContains(t, message, secretEscaped)

			// A PATCH the job's workflow refuses (the job faulted, which
			// is final): workers encode the failure's message too, and
			// the API reads it.
			status, body = s.do(t, http.MethodPatch, collectionPath+"/jobs/"+failingJobName,
				map[string]any{"properties": map[string]any{"state": "Enabled"}})
			require.Equal(t, http.StatusConflict, status, body)
			require.Contains(t, fmt.Sprint(body), "is Faulted, which is final")

			raw := rawHistories(t, s)
			if !encrypted {
				require.True(t, containsAny(raw, targetSaid), "without encryption the failure message is in the history: the scan works")
				return
			}
			require.False(t, containsAny(raw, targetSaid), "the target's words are in a raw history")
			for _, secret := range []string{secretAwkward, secretEscaped} {
				require.False(t, containsAny(raw, secret), "%q is in a raw history", secret)
			}
		})
	}
}
