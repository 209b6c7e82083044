package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/recurhq/recur/internal/recurtest"
)

// Bad input at the API: whatever the body or the names in the path, the
// answer is a 4xx with the ARM envelope and nothing is stored.

const (
	rg1CollectionsPath = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/"
	// badStart is a start time no test outlives: the jobs here never run.
	badStart = `"startTime":"2099-01-01T00:00:00Z"`
	// badAction is a valid action, for bodies that are bad elsewhere.
	badAction = `"action":{"type":"Http","request":{"uri":"http://example.invalid/","method":"GET"}}`
)

// badJobBody returns a job body with these properties besides its start
// time. Each bad body below is a valid job but for the one thing it tries,
// so that its 4xx can only come from the check of that thing.
func badJobBody(props string) string {
	return `{"properties":{` + badStart + `,` + props + `}}`
}

// badRequestHeaders returns a job body whose action request has these
// members besides its uri and method.
func badRequestHeaders(members string) string {
	return badJobBody(`"action":{"type":"Http","request":{"uri":"http://example.invalid/","method":"GET",` + members + `}}`)
}

// badNesting returns JSON arrays nested depth deep.
func badNesting(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

// badBody is a body the API must refuse with status, at target when one
// is given.
type badBody struct {
	name   string
	body   string
	status int
	target string
}

// badJobBodies are refused by PUT and PATCH of a job.
var badJobBodies = []badBody{
	{"invalid UTF-8 in a value", badRequestHeaders(`"body":"caf` + "\xe9" + `"`), http.StatusBadRequest, ""},
	{"invalid UTF-8 in a member name", badJobBody(`"` + "\xff\xfe" + `":1,` + badAction), http.StatusBadRequest, ""},
	{"overlong UTF-8 slash", badRequestHeaders(`"body":"` + "\xc0\xaf" + `"`), http.StatusBadRequest, ""},
	{"UTF-8 of a surrogate", badRequestHeaders(`"body":"` + "\xed\xa0\x80" + `"`), http.StatusBadRequest, ""},
	{"truncated UTF-8 sequence", badRequestHeaders(`"body":"` + "\xe2\x82" + `"`), http.StatusBadRequest, ""},
	{"byte order mark", "\xef\xbb\xbf" + badJobBody(badAction), http.StatusBadRequest, ""},
	{"deep nesting in an unknown property", badJobBody(`"extra":` + badNesting(100) + `,` + badAction), http.StatusBadRequest, ""},
	{"deep nesting in a workflow input", badJobBody(`"action":{"type":"Workflow","workflow":{"workflowType":"w","taskQueue":"q","input":` +
		badNesting(1000) + `}}`), http.StatusBadRequest, ""},
	{"nesting past encoding/json's limit", strings.Repeat("[", 10001), http.StatusBadRequest, ""},
	{"CR LF in a header value", badRequestHeaders(`"headers":{"X-A":"1\r\nX-Injected: yes"}`), http.StatusBadRequest, "properties.action.request.headers"},
	{"LF in a header value", badRequestHeaders(`"headers":{"X-A":"1\nX-Injected: yes"}`), http.StatusBadRequest, "properties.action.request.headers"},
	{"NUL in a header value", badRequestHeaders(`"headers":{"X-A":"1\u0000"}`), http.StatusBadRequest, "properties.action.request.headers"},
	{"CR LF in a header name", badRequestHeaders(`"headers":{"X-A\r\nX-Injected":"yes"}`), http.StatusBadRequest, "properties.action.request.headers"},
	{"colon in a header name", badRequestHeaders(`"headers":{"X-A: 1\r\nX-B":"2"}`), http.StatusBadRequest, "properties.action.request.headers"},
	{"space in a header name", badRequestHeaders(`"headers":{"X A":"1"}`), http.StatusBadRequest, "properties.action.request.headers"},
	{"a signing secret that is no base64", badRequestHeaders(`"signing":{"secrets":["whsec_s3cretpw!"]}`), http.StatusBadRequest,
		"properties.action.request.signing.secrets[0]"},
	{"a signed request's own signature header", badRequestHeaders(`"headers":{"Webhook-Signature":"v1,forged"},` +
		`"signing":{"secrets":["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]}`), http.StatusBadRequest, "properties.action.request.headers"},
	{"empty header name", badRequestHeaders(`"headers":{"":"1"}`), http.StatusBadRequest, "properties.action.request.headers"},
	{"non-ASCII header name", badRequestHeaders(`"headers":{"Ünicode":"1"}`), http.StatusBadRequest, "properties.action.request.headers"},
	{"CR LF in an error action header", badJobBody(`"action":{"type":"Http","request":{"uri":"http://example.invalid/","method":"GET"},` +
		`"errorAction":{"type":"Http","request":{"uri":"http://example.invalid/e","method":"POST","headers":{"X-A":"1\r\nX-Injected: yes"}}}}`),
		http.StatusBadRequest, "properties.action.errorAction.request.headers"},
	{"CR LF in the method", badJobBody(`"action":{"type":"Http","request":{"uri":"http://example.invalid/","method":"GET\r\nX-Injected: yes"}}`),
		http.StatusBadRequest, "properties.action.request.method"},
	{"CR LF in the uri", badJobBody(`"action":{"type":"Http","request":{"uri":"http://example.invalid/\r\nX-Injected: yes","method":"GET"}}`),
		http.StatusBadRequest, "properties.action.request.uri"},
	{"null", `null`, http.StatusBadRequest, ""},
	{"a string", `"properties"`, http.StatusBadRequest, ""},
	{"a number", `42`, http.StatusBadRequest, ""},
	{"an array", `[` + badJobBody(badAction) + `]`, http.StatusBadRequest, ""},
	{"two objects", badJobBody(badAction) + `{}`, http.StatusBadRequest, ""},
	{"empty", ``, http.StatusBadRequest, ""},
	{"truncated", badJobBody(badAction)[:40], http.StatusBadRequest, ""},
	{"number out of range", badJobBody(`"maxConsecutiveFaults":1e400,` + badAction), http.StatusBadRequest, "properties.maxConsecutiveFaults"},
	{"properties a string", `{"properties":"x"}`, http.StatusBadRequest, "properties"},
	{"a member in two letter cases", badRequestHeaders(`"URI":"http://other.invalid/"`), http.StatusBadRequest, "properties.action.request.URI"},
	{"a header in two letter cases", badRequestHeaders(`"headers":{"X-A":"1","x-a":"2"}`), http.StatusBadRequest, "properties.action.request.headers.x-a"},
	{"null in the minutes", badJobBody(`"recurrence":{"frequency":"Hour","schedule":{"minutes":[null]}},` + badAction),
		http.StatusBadRequest, "properties.recurrence.schedule.minutes[0]"},
	{"a TimeSpan of 99 minutes", badJobBody(`"action":{"type":"Http","request":{"uri":"http://example.invalid/","method":"GET"},` +
		`"retryPolicy":{"retryInterval":"99:99:99"}}`), http.StatusBadRequest, "properties.action.retryPolicy.retryInterval"},
	{"user info in the uri", badJobBody(`"action":{"type":"Http","request":{"uri":"https://alice:s3cretpw@example.invalid/","method":"GET"}}`),
		http.StatusBadRequest, "properties.action.request.uri"},
	{"user info in an error action uri", badJobBody(`"action":{"type":"Http","request":{"uri":"http://example.invalid/","method":"GET"},` +
		`"errorAction":{"type":"Https","request":{"uri":"http://s3cretpw@example.invalid/e","method":"POST"}}}`),
		http.StatusBadRequest, "properties.action.errorAction.request.uri"},
	{"a jitter of 99 seconds", badJobBody(`"jitter":"00:00:99",` + badAction), http.StatusBadRequest, "properties.jitter"},
	{"a misspelt property (the issue's)", badJobBody(`"maxConcurentRuns":2,` + badAction), http.StatusBadRequest, "properties.maxConcurentRuns"},
	{"a misspelt retry policy member (the issue's)", badJobBody(`"action":{"type":"Http","request":{"uri":"http://example.invalid/","method":"GET"},` +
		`"retryPolicy":{"retryType":"Fixed","retryIntervall":"00:01:00"}}`), http.StatusBadRequest, "properties.action.retryPolicy.retryIntervall"},
	{"a misspelt monthly occurrence member", badJobBody(`"recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"Monday","ocurrence":1}]}},` +
		badAction), http.StatusBadRequest, "properties.recurrence.schedule.monthlyOccurrences[0].ocurrence"},
	{"a main action field of the wrong type", badJobBody(`"action":{"type":"Http","request":{"uri":"http://example.invalid/","method":"GET"},` +
		`"retryPolicy":{"retryCount":"4"}}`), http.StatusBadRequest, "properties.action.retryPolicy.retryCount"},
}

// badCollectionBodies are refused by PUT and PATCH of a collection.
var badCollectionBodies = []badBody{
	{"invalid UTF-8 in the location", `{"location":"west` + "\xff" + `us","properties":{}}`, http.StatusBadRequest, ""},
	{"invalid UTF-8 in a tag name", `{"location":"westus","tags":{"` + "\xc3\x28" + `":"v"},"properties":{}}`, http.StatusBadRequest, ""},
	{"deep nesting in an unknown property", `{"location":"westus","extra":` + badNesting(100) + `,"properties":{}}`, http.StatusBadRequest, ""},
	{"null", `null`, http.StatusBadRequest, ""},
	{"an array", `[{"location":"westus","properties":{}}]`, http.StatusBadRequest, ""},
	{"two objects", `{"location":"westus","properties":{}}{}`, http.StatusBadRequest, ""},
	{"byte order mark", "\xef\xbb\xbf" + `{"location":"westus","properties":{}}`, http.StatusBadRequest, ""},
	{"a member in two letter cases", `{"location":"westus","Location":"eastus","properties":{}}`, http.StatusBadRequest, "Location"},
	{"a misspelt quota member", `{"location":"westus","properties":{"quota":{"maxJobCont":5}}}`, http.StatusBadRequest, "properties.quota.maxJobCont"},
}

// badPath is a path whose names the API must refuse, with a body that
// would be stored at a good path.
type badPath struct {
	name   string
	path   string
	status int
}

// badJobPaths are job paths: a name that is not one is a 400 (an escaped
// slash stays in its name); a path that matches no route is a 404.
var badJobPaths = []badPath{
	{"dot dot", collectionPath + "/jobs/..", http.StatusBadRequest},
	{"dot", collectionPath + "/jobs/.", http.StatusBadRequest},
	{"escaped dot dot", collectionPath + "/jobs/%2e%2e", http.StatusBadRequest},
	{"escaped dot dot in capitals", collectionPath + "/jobs/%2E%2E", http.StatusBadRequest},
	{"escaped slash in a name", collectionPath + "/jobs/a%2Fb", http.StatusBadRequest},
	{"escaped slash at the end", collectionPath + "/jobs/sneaky%2F", http.StatusBadRequest},
	{"escaped traversal", collectionPath + "/jobs/..%2F..%2Fjobs%2Fsneaky", http.StatusBadRequest},
	{"escaped slashes reaching a job route", collectionPath + "%2Fjobs%2Fsneaky", http.StatusBadRequest},
	{"escaped slashes in lower case", collectionPath + "%2fjobs%2fsneaky", http.StatusBadRequest},
	{"dot segments", collectionPath + "/jobs/x/../sneaky", http.StatusNotFound},
	{"escaped backslash", collectionPath + "/jobs/..%5Csneaky", http.StatusBadRequest},
	{"NUL", collectionPath + "/jobs/a%00b", http.StatusBadRequest},
	{"CR LF", collectionPath + "/jobs/a%0D%0AX-Injected:%20yes", http.StatusBadRequest},
	{"101 characters", collectionPath + "/jobs/" + strings.Repeat("x", 101), http.StatusBadRequest},
	{"8000 characters", collectionPath + "/jobs/" + strings.Repeat("x", 8000), http.StatusBadRequest},
	{"accented", collectionPath + "/jobs/caf%C3%A9", http.StatusBadRequest},
	{"right-to-left override", collectionPath + "/jobs/a%E2%80%AEb", http.StatusBadRequest},
	{"invalid UTF-8", collectionPath + "/jobs/a%FF", http.StatusBadRequest},
	{"escaped question mark", collectionPath + "/jobs/a%3Fb", http.StatusBadRequest},
	{"dot dot as the collection", rg1CollectionsPath + "%2e%2e/jobs/sneaky", http.StatusBadRequest},
	{"dot dot as the resource group", "/subscriptions/sub1/resourceGroups/%2e%2e/providers/Microsoft.Scheduler/jobCollections/coll1/jobs/sneaky",
		http.StatusBadRequest},
	{"NUL as the subscription", "/subscriptions/%00/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/coll1/jobs/sneaky",
		http.StatusBadRequest},
}

// badCollectionPaths are collection paths.
var badCollectionPaths = []badPath{
	{"dot dot", rg1CollectionsPath + "..", http.StatusBadRequest},
	{"escaped dot dot", rg1CollectionsPath + "%2e%2e", http.StatusBadRequest},
	{"escaped slash", rg1CollectionsPath + "a%2Fb", http.StatusBadRequest},
	{"escaped slash at the end", rg1CollectionsPath + "sneaky%2F", http.StatusBadRequest},
	{"escaped slashes reaching another resource group",
		"/subscriptions/sub1/resourceGroups/rg2%2Fproviders%2FMicrosoft.Scheduler%2FjobCollections%2Fsneaky", http.StatusNotFound},
	{"NUL", rg1CollectionsPath + "c%00", http.StatusBadRequest},
	{"200 characters", rg1CollectionsPath + strings.Repeat("c", 200), http.StatusBadRequest},
	{"accented", rg1CollectionsPath + "coll%C3%A9", http.StatusBadRequest},
}

// badCase is one request of the table.
type badCase struct {
	name, method, path, body string
	status                   int
	target                   string
}

// badCases returns every bad request: each bad body by PUT and PATCH of
// a collection and a job, and each bad path by PUT. PUTs go to resources
// that do not exist (refusedcoll, refused); PATCHes to coll1 and its job
// kept, which must stay as they were.
func badCases() []badCase {
	var out []badCase
	for _, b := range badJobBodies {
		out = append(out,
			badCase{"PUT job: " + b.name, http.MethodPut, collectionPath + "/jobs/refused", b.body, b.status, b.target},
			badCase{"PATCH job: " + b.name, http.MethodPatch, collectionPath + "/jobs/kept", b.body, b.status, b.target})
	}
	for _, b := range badCollectionBodies {
		out = append(out,
			badCase{"PUT collection: " + b.name, http.MethodPut, rg1CollectionsPath + "refusedcoll", b.body, b.status, b.target},
			badCase{"PATCH collection: " + b.name, http.MethodPatch, collectionPath, b.body, b.status, b.target})
	}
	for _, p := range badJobPaths {
		out = append(out, badCase{"job path: " + p.name, http.MethodPut, p.path, badJobBody(badAction), p.status, ""})
	}
	for _, p := range badCollectionPaths {
		out = append(out, badCase{"collection path: " + p.name, http.MethodPut, p.path, `{"location":"westus","properties":{}}`, p.status, ""})
	}
	return out
}

// refuseRedirects makes a client answer with a redirect as it is: a 3xx
// is no refusal, and following it could store what the path tried.
func refuseRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// badClient sends the bad requests.
var badClient = &http.Client{CheckRedirect: refuseRedirects}

// sendRaw sends body as it is (json.Marshal would mend invalid UTF-8)
// with api-version, and returns the status and the raw answer.
func (s *stack) sendRaw(tb testing.TB, client *http.Client, method, path, body string) (int, []byte) {
	tb.Helper()
	req, err := http.NewRequest(method, s.api.URL+path+"?api-version=2016-03-01", strings.NewReader(body))
	require.NoError(tb, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	return resp.StatusCode, data
}

// requireRefused checks an answer is the case's 4xx, in the ARM envelope.
func requireRefused(tb testing.TB, c badCase, status int, data []byte) {
	tb.Helper()
	require.Equal(tb, c.status, status, "%s: %s", c.name, data)
	var envelope struct {
		Error struct{ Code, Message, Target string }
	}
	require.NoError(tb, json.Unmarshal(data, &envelope), "%s: %s", c.name, data)
	require.NotEmpty(tb, envelope.Error.Code, "%s: %s", c.name, data)
	require.NotEmpty(tb, envelope.Error.Message, "%s: %s", c.name, data)
	require.NotContains(tb, string(data), "s3cretpw", "%s: a refusal quotes no secret of the body", c.name)
	if c.target != "" {
		require.Equal(tb, c.target, envelope.Error.Target, "%s: %s", c.name, data)
	}
}

// workflowIDs lists the ID of every workflow of the stack's namespace,
// open or closed: what the API stored, whatever names it used.
func (s *stack) workflowIDs(tb testing.TB) []string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := s.temporal.GetDefaultClient().ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: s.temporal.GetDefaultNamespace(), PageSize: 1000})
	require.NoError(tb, err)
	seen := map[string]bool{}
	for _, e := range resp.Executions {
		seen[e.GetExecution().GetWorkflowId()] = true
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// newBadInputStack starts a stack with collection coll1 and its job kept.
func newBadInputStack(t *testing.T) *stack {
	s := newStack(t)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"location": "westus", "properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	status, data := s.sendRaw(t, http.DefaultClient, http.MethodPut, collectionPath+"/jobs/kept", badJobBody(badAction))
	require.Equal(t, http.StatusCreated, status, string(data))
	return s
}

func TestBadInputIsRefusedAndNothingStored(t *testing.T) {
	s := newBadInputStack(t)
	_, collBefore := s.do(t, http.MethodGet, collectionPath, nil)
	_, keptBefore := s.do(t, http.MethodGet, collectionPath+"/jobs/kept", nil)

	for _, c := range badCases() {
		t.Run(c.name, func(t *testing.T) {
			status, data := s.sendRaw(t, badClient, c.method, c.path, c.body)
			requireRefused(t, c, status, data)
		})
	}

	// Reads that go to the workflows themselves: consistent at once.
	status, body := s.do(t, http.MethodGet, collectionPath+"/jobs/refused", nil)
	require.Equal(t, http.StatusNotFound, status, body)
	status, body = s.do(t, http.MethodGet, collectionPath+"/jobs/sneaky", nil)
	require.Equal(t, http.StatusNotFound, status, body)
	for _, coll := range []string{rg1CollectionsPath + "refusedcoll", rg1CollectionsPath + "sneaky", rg2Path + "/sneaky"} {
		status, body = s.do(t, http.MethodGet, coll, nil)
		require.Equal(t, http.StatusNotFound, status, body)
	}
	status, body = s.do(t, http.MethodGet, collectionPath, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, collBefore, body, "PATCHes that were refused changed nothing")
	status, body = s.do(t, http.MethodGet, collectionPath+"/jobs/kept", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, keptBefore, body, "PATCHes that were refused changed nothing")

	// Lists come from visibility, which lags: a job put after every bad
	// request is a barrier; once the list shows it, it shows the others.
	status, data := s.sendRaw(t, http.DefaultClient, http.MethodPut, collectionPath+"/jobs/last", badJobBody(badAction))
	require.Equal(t, http.StatusCreated, status, string(data))
	s.listEventually(t, collectionPath+"/jobs", nil, jobNames, []string{"kept", "last"})
	s.listEventually(t, subscriptionPath, nil, listIDs, []string{collectionPath})
	require.Equal(t, []string{"collection:sub1/rg1/coll1", "job:sub1/rg1/coll1/kept", "job:sub1/rg1/coll1/last"}, s.workflowIDs(t),
		"no workflow under any other name")
}

// TestBadInputHugeBodyIsRefusedPromptly streams 100 MB bodies: the answer
// is a 413 that closes the connection, long before the client could
// have sent them, and the server reads no more than it must.
func TestBadInputHugeBodyIsRefusedPromptly(t *testing.T) {
	s := newBadInputStack(t)
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			sent := s.streamHugeBody(t, http.MethodPut, collectionPath+"/jobs/huge", chunked)
			t.Logf("the connection took %d KiB of the body", sent>>10)
			require.Less(t, sent, int64(hugeBody/2), "the server stopped reading long before the end")
		})
	}
	t.Run("expect 100-continue", func(t *testing.T) {
		// A Content-Length over the limit is refused before the body is
		// read: the client is never told to go on and send it.
		conn, err := net.Dial("tcp", s.api.Listener.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.SetDeadline(time.Now().Add(20*time.Second)))
		_, err = fmt.Fprintf(conn, "PUT %s?api-version=2016-03-01 HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"+
			"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n", collectionPath+"/jobs/huge", hugeBody)
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "the first answer, not 100 Continue")
		require.True(t, resp.Close)
	})
	t.Run("with the Go client", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPut, s.api.URL+collectionPath+"/jobs/huge?api-version=2016-03-01",
			io.LimitReader(endlessJSON{}, hugeBody))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, string(data))
		require.Contains(t, string(data), `"code":"RequestTooLarge"`)
	})
	status, body := s.do(t, http.MethodGet, collectionPath+"/jobs/huge", nil)
	require.Equal(t, http.StatusNotFound, status, body)
}

// hugeBody is the size of the streamed bodies.
const hugeBody = 100 << 20

// endlessJSON reads as the start of a JSON object that never ends, without
// holding it in memory.
type endlessJSON struct{}

func (endlessJSON) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	if len(p) >= 2 {
		copy(p, `{"`)
	}
	return len(p), nil
}

// streamHugeBody sends a hugeBody-byte request on a connection of its
// own, chunked or with a Content-Length, and checks the answer is a 413
// in the ARM envelope after which the server closes the connection. It
// returns how many bytes of body the connection took before the server
// reset it.
func (s *stack) streamHugeBody(t *testing.T, method, path string, chunked bool) int64 {
	conn, err := net.Dial("tcp", s.api.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(20*time.Second)), "promptly")

	framing := fmt.Sprintf("Content-Length: %d", hugeBody)
	if chunked {
		framing = "Transfer-Encoding: chunked"
	}
	_, err = fmt.Fprintf(conn, "%s %s?api-version=2016-03-01 HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n%s\r\n\r\n",
		method, path, framing)
	require.NoError(t, err)
	sent := make(chan int64, 1)
	go func() { sent <- writeHugeBody(conn, chunked) }()

	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, string(data))
	require.True(t, resp.Close, "the answer closes the connection: %v", resp.Header)
	require.Contains(t, string(data), `"code":"RequestTooLarge"`)
	select {
	case n := <-sent:
		return n
	case <-time.After(20 * time.Second):
		t.Fatal("the server kept the connection open")
		return 0
	}
}

// writeHugeBody writes hugeBody bytes of body, or as many as the
// connection takes before it fails, and returns how many it took.
func writeHugeBody(conn net.Conn, chunked bool) int64 {
	chunk := make([]byte, 64<<10)
	_, _ = endlessJSON{}.Read(chunk)
	var n int64
	for n < hugeBody {
		var buf bytes.Buffer
		if chunked {
			fmt.Fprintf(&buf, "%x\r\n%s\r\n", len(chunk), chunk)
		} else {
			buf.Write(chunk)
		}
		if _, err := conn.Write(buf.Bytes()); err != nil {
			return n
		}
		n += int64(len(chunk))
	}
	return n
}

// TestBadInputLeavesNoGoroutinesOrMemory sends 500 bad requests, mixed,
// and checks the process has no more goroutines and no more heap after
// them than before, give or take what the stack does on its own.
func TestBadInputLeavesNoGoroutinesOrMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 500 requests and a settled heap, twice (about 6 s)")
	}
	s := newBadInputStack(t)
	transport := &http.Transport{}
	client := &http.Client{Transport: transport, CheckRedirect: refuseRedirects}
	cases := badCases()
	send := func(i int) {
		c := cases[i%len(cases)]
		if i%100 == 99 {
			s.streamHugeBody(t, http.MethodPatch, collectionPath+"/jobs/kept", i%200 == 199)
			return
		}
		status, data := s.sendRaw(t, client, c.method, c.path, c.body)
		requireRefused(t, c, status, data)
	}
	settle := func() {
		transport.CloseIdleConnections()
		runtime.GC()
	}

	for i := range len(cases) {
		send(i)
	}
	settle()
	baseGoroutines := runtime.NumGoroutine()
	baseHeap := heapAlloc()

	for i := range leakRequests {
		send(i)
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		settle()
		assert.LessOrEqual(c, runtime.NumGoroutine(), baseGoroutines+goroutineSlack, "goroutines now, before")
	}, 20*time.Second, 100*time.Millisecond, "%d goroutines before", baseGoroutines)
	var heap uint64
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		settle()
		heap = heapAlloc()
		assert.LessOrEqual(c, heap>>10, (baseHeap+heapSlack)>>10, "KiB of heap now, allowed")
	}, 20*time.Second, 100*time.Millisecond, "%d KiB of heap before", baseHeap>>10)
	t.Logf("goroutines: %d before, %d after; heap: %d KiB before, %d KiB after",
		baseGoroutines, runtime.NumGoroutine(), baseHeap>>10, heap>>10)
}

// heapAlloc returns the bytes of live heap.
func heapAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

const (
	// leakRequests is how many bad requests the leak check sends.
	leakRequests = 500
	// goroutineSlack is how far the goroutine count may be above where it
	// was. The Temporal server and the worker in the process start and
	// end goroutines on their own (long polls, timers, gRPC streams), so
	// the count moves by a few tens at rest; a leak of even one goroutine
	// per request would leave 500 more.
	goroutineSlack = 50
	// heapSlack is how much more live heap there may be after the bad
	// requests: Temporal's caches fill on their own, but the 5 huge bodies
	// alone, were any of them kept, would be 500 MiB.
	heapSlack = 32 << 20
)

// FuzzPutJobBody puts any body as a job: the answer is never a 5xx, and
// a refused body stores nothing. One stack serves every input; a body the
// API takes is deleted again so that the next input finds no job.
func FuzzPutJobBody(f *testing.F) {
	for _, b := range badJobBodies {
		f.Add([]byte(b.body))
	}
	for _, b := range badCollectionBodies {
		f.Add([]byte(b.body))
	}
	f.Add([]byte(badJobBody(badAction)))
	f.Add([]byte(badRequestHeaders(`"headers":{"X-Ok":"yes"},"body":"café"`)))

	st, err := recurtest.Start()
	require.NoError(f, err)
	f.Cleanup(st.Stop)
	s := &stack{api: st.API, temporal: st.Temporal}
	status, data := s.sendRaw(f, http.DefaultClient, http.MethodPut, collectionPath, `{"properties":{"sku":{"name":"P20Premium"}}}`)
	require.Equal(f, http.StatusCreated, status, string(data))

	jobPath := collectionPath + "/jobs/fuzzed"
	f.Fuzz(func(t *testing.T, body []byte) {
		status, data := s.sendRaw(t, badClient, http.MethodPut, jobPath, string(body))
		require.Less(t, status, 500, "%q: %s", body, data)
		if status < 300 {
			status, data = s.sendRaw(t, http.DefaultClient, http.MethodDelete, jobPath, "")
			require.Equal(t, http.StatusOK, status, string(data))
			return
		}
		require.Contains(t, string(data), `"error":{"code":`)
		status, data = s.sendRaw(t, http.DefaultClient, http.MethodGet, jobPath, "")
		require.Equal(t, http.StatusNotFound, status, "%q was refused but stored: %s", body, data)
	})
}
