package api

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/jobs"
)

const (
	badCollection = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
	badJob        = badCollection + "/jobs/j"
	badVersion    = "?api-version=" + APIVersion
)

// armAnswer decodes an error answer's envelope.
func armAnswer(t *testing.T, rec *httptest.ResponseRecorder) armErrorBody {
	t.Helper()
	var body armError
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	return body.Error
}

// TestBodiesJSONWouldMendAreRefused: encoding/json takes these bodies
// (or most of them) without a word; the API does not. Each is refused
// before the handler reaches Temporal, which this router does not have.
func TestBodiesJSONWouldMendAreRefused(t *testing.T) {
	valid := `{"properties":{"action":{"type":"Http","request":{"uri":"http://example.com/","method":"GET","body":"BODY"}}}}`
	for name, body := range map[string]string{
		"invalid UTF-8":           strings.Replace(valid, "BODY", "caf\xe9", 1),
		"UTF-8 of a surrogate":    strings.Replace(valid, "BODY", "\xed\xa0\x80", 1),
		"overlong UTF-8":          strings.Replace(valid, "BODY", "\xc0\xaf", 1),
		"65 levels":               `{"properties":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`,
		"past json's own limit":   strings.Repeat("[", 10001),
		"null":                    `null`,
		"an array":                `[` + valid + `]`,
		"a string":                `"x"`,
		"a byte order mark first": "\xef\xbb\xbf" + valid,
	} {
		for _, method := range []string{http.MethodPut, http.MethodPatch} {
			for _, path := range []string{badCollection, badJob} {
				rec := serve(t, method, path+badVersion, "application/json", body)
				require.Equal(t, http.StatusBadRequest, rec.Code, "%s %s %s: %s", name, method, path, rec.Body)
				require.Equal(t, "InvalidRequestContent", armAnswer(t, rec).Code, name)
			}
		}
	}
}

func TestNestingCountsBracketsOutsideStrings(t *testing.T) {
	for text, want := range map[string]int{
		`{}`:                            1,
		`{"a":[{"b":[]}]}`:              4,
		`{"a":"[[[[{{{{"}`:              1,
		`{"a":"\"[[[["}`:                1,
		`{"a":"\\"}`:                    1,
		`{"a":"\\\"[["}`:                1,
		`{"a":"\\","b":[[]]}`:           3,
		`"]]]]"`:                        0,
		`[[[` + `]]]` + `[[[[` + `]]]]`: 4,
	} {
		require.Equal(t, want, nesting([]byte(text)), text)
	}
	require.Equal(t, maxDepth, nesting([]byte(strings.Repeat("[", maxDepth)+strings.Repeat("]", maxDepth))))
}

// TestDefinitionsNestedToTheLimitAreTaken: a workflow input may nest as
// deep as the four levels of definition around it leave, and no deeper.
func TestDefinitionsNestedToTheLimitAreTaken(t *testing.T) {
	input := strings.Repeat("[", maxDepth-4) + strings.Repeat("]", maxDepth-4)
	body := `{"properties":{"action":{"type":"Workflow","workflow":{"workflowType":"w","taskQueue":"q","input":` + input + `}}}}`
	require.Equal(t, maxDepth, nesting([]byte(body)))
	var job jobs.Job
	require.NoError(t, checkJSONText([]byte(body), jobMembers))
	require.NoError(t, json.Unmarshal([]byte(body), &job))
	require.Error(t, checkJSONText([]byte(strings.Replace(body, "[", "[[", 1)), jobMembers))
}

// jobMembers checks the member names of a job's body, as PUT does.
func jobMembers(data []byte) error { return jobs.CheckMembers(data, reflect.TypeFor[jobs.Job]()) }

// unreadBody fails the test if the handler reads it.
type unreadBody struct{ t *testing.T }

func (b unreadBody) Read([]byte) (int, error) {
	b.t.Error("the body was read")
	return 0, http.ErrBodyReadAfterClose
}

func TestBodyDeclaredOverTheLimitIsRefusedUnread(t *testing.T) {
	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		for _, path := range []string{badCollection, badJob} {
			req := newRequest(method, path+badVersion, unreadBody{t})
			req.ContentLength = 100 << 20
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			New(nil, Options{}).ServeHTTP(rec, req)
			require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, "%s %s", method, path)
			require.Equal(t, "RequestTooLarge", armAnswer(t, rec).Code)
			require.Equal(t, "close", rec.Header().Get("Connection"), "the rest of the body is never read")
		}
	}
}

func TestBodyOverTheLimitWithoutALengthIsRefused(t *testing.T) {
	req := newRequest(http.MethodPut, badJob+badVersion, strings.NewReader(`{"`+strings.Repeat("x", MaxJobSize)+`":1}`))
	req.ContentLength = -1 // chunked: the size shows only while reading
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	New(nil, Options{}).ServeHTTP(rec, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, rec.Body.String())
	require.Equal(t, "close", rec.Header().Get("Connection"))
}

// TestEscapedSlashesStayInTheirName: %2F is part of a name, never a
// separator, so it cannot move a request to another resource (nor
// redirect it); the name check refuses it.
func TestEscapedSlashesStayInTheirName(t *testing.T) {
	for _, path := range []string{
		badCollection + "%2Fjobs%2Fj",
		badCollection + "%2fjobs%2fj",
		badCollection + "%2F",
		badJob + "%2F",
		badCollection + "/jobs/..%2F..%2Fjobs%2Fj",
		"/subscriptions/s%2FresourceGroups%2Frg/providers/Microsoft.Scheduler/jobCollections",
	} {
		rec := serve(t, http.MethodGet, path+badVersion, "", "")
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", path, rec.Body)
		require.Equal(t, jobs.CodeInvalidName, armAnswer(t, rec).Code, path)
	}
}

func TestKeepEscapedSlashes(t *testing.T) {
	for raw, want := range map[string]string{
		"/a/b%2Fc/d":      "/a/b%2Fc/d",
		"/a/b%2fc%2F":     "/a/b%2Fc%2F",
		"/a/%C3%A9%2F%41": "/a/é%2FA",
		"/a/b%252Fc":      "/a/b%2Fc", // an escaped "%": unescaped as before
		"/a/b/c":          "/a/b/c",
	} {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		keepEscapedSlashes(u)
		require.Equal(t, want, u.Path, raw)
	}
}

// ambiguousBodies are bodies encoding/json decodes with the last of two
// members winning, or with null read as 0; the API refuses each with a
// 400 at the path named, for PUT and PATCH.
var ambiguousBodies = []struct {
	name, path, body, target string
}{
	{"a member in two letter cases", badJob,
		`{"properties":{"action":{"type":"Http","request":{"uri":"http://a.example/","URI":"http://b.example/","method":"GET"}}}}`,
		"properties.action.request.URI"},
	{"a member twice", badJob,
		`{"properties":{"action":{"type":"Http","request":{"uri":"http://a.example/","method":"GET","method":"DELETE"}}}}`,
		"properties.action.request.method"},
	{"a member escaped", badJob,
		`{"properties":{"action":{"type":"Http","request":{"uri":"http://a.example/","ur\u0069":"http://b.example/","method":"GET"}}}}`,
		"properties.action.request.uri"},
	{"a member in Unicode case folding", badJob,
		"{\"properties\":{\"startTime\":\"2099-01-01T00:00:00Z\",\"\u017ftartTime\":\"2000-01-01T00:00:00Z\"}}",
		"properties.\u017ftartTime"},
	{"properties twice", badJob, `{"properties":{},"Properties":{"state":"Disabled"}}`, "Properties"},
	{"a header in two letter cases", badJob,
		`{"properties":{"action":{"type":"Http","request":{"uri":"http://a.example/","method":"GET","headers":{"X-A":"1","x-a":"2"}}}}}`,
		"properties.action.request.headers.x-a"},
	{"an error action header in two letter cases", badJob,
		`{"properties":{"action":{"type":"Http","request":{"uri":"http://a.example/","method":"GET"},` +
			`"errorAction":{"type":"Http","request":{"uri":"http://a.example/","method":"GET","headers":{"X-A":"1","x-A":"2"}}}}}}`,
		"properties.action.errorAction.request.headers.x-A"},
	{"a workflow input member twice", badJob,
		`{"properties":{"action":{"type":"Workflow","workflow":{"workflowType":"w","taskQueue":"q","input":{"a":1,"b":{"c":1,"c":2}}}}}}`,
		"properties.action.workflow.input.b.c"},
	{"null in the minutes", badJob,
		`{"properties":{"recurrence":{"frequency":"Hour","schedule":{"minutes":[null]}}}}`,
		"properties.recurrence.schedule.minutes[0]"},
	{"null after a minute", badJob,
		`{"properties":{"recurrence":{"frequency":"Hour","schedule":{"minutes":[15,null]}}}}`,
		"properties.recurrence.schedule.minutes[1]"},
	{"null in the monthly occurrences", badJob,
		`{"properties":{"recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"Monday"},null]}}}}`,
		"properties.recurrence.schedule.monthlyOccurrences[1]"},
	{"a collection member in two letter cases", badCollection, `{"location":"westus","Location":"eastus","properties":{}}`, "Location"},
	{"a collection tag in two letter cases", badCollection, `{"location":"westus","tags":{"env":"a","ENV":"b"},"properties":{}}`, "tags.ENV"},
	{"a collection quota member twice", badCollection,
		`{"properties":{"quota":{"maxJobCount":5,"maxJobCount":500}}}`, "properties.quota.maxJobCount"},
}

func TestAmbiguousBodiesAreRefusedAtTheirPath(t *testing.T) {
	for _, b := range ambiguousBodies {
		for _, method := range []string{http.MethodPut, http.MethodPatch} {
			rec := serve(t, method, b.path+badVersion, "application/json", b.body)
			require.Equal(t, http.StatusBadRequest, rec.Code, "%s %s: %s", b.name, method, rec.Body)
			answer := armAnswer(t, rec)
			require.Equal(t, "InvalidRequestContent", answer.Code, b.name)
			require.Equal(t, b.target, answer.Target, b.name)
			require.Contains(t, answer.Message, b.target, b.name)
		}
	}
}

// TestWorkflowInputKeepsItsLetterCase: a workflow's input is the user's
// own JSON, passed on as written: "a" and "A" are two members there, and
// null is a value like any other.
func TestWorkflowInputKeepsItsLetterCase(t *testing.T) {
	for _, action := range []string{
		`{"type":"Workflow","workflow":{"workflowType":"w","taskQueue":"q","input":{"a":1,"A":2,"list":[null,{"b":null,"B":[null]}]}}}`,
		`{"type":"Http","request":{"uri":"http://a.example/","method":"GET"},` +
			`"errorAction":{"type":"Workflow","Workflow":{"workflowType":"w","taskQueue":"q","Input":{"a":1,"A":2}}}}`,
	} {
		body := `{"properties":{"action":` + action + `}}`
		require.NoError(t, checkJSONText([]byte(body), jobMembers), body)
	}
	// Members beside the input still fold.
	err := checkJSONText([]byte(`{"properties":{"action":{"type":"Workflow","workflow":{"workflowType":"w","WorkflowType":"v","taskQueue":"q"}}}}`), jobMembers)
	var jobErr *jobs.Error
	require.ErrorAs(t, err, &jobErr)
	require.Equal(t, "properties.action.workflow.WorkflowType", jobErr.Target)
}

// TestTimeSpansOutOfRangeAreRefused: in a TimeSpan ([d.]hh:mm:ss) minutes
// and seconds go to 59, hours to 23 when days are given.
func TestTimeSpansOutOfRangeAreRefused(t *testing.T) {
	action := func(extra string) string {
		return `{"properties":{"action":{"type":"Http","request":{"uri":"http://a.example/","method":"GET"}` + extra + `}}}`
	}
	for body, target := range map[string]string{
		action(`,"retryPolicy":{"retryType":"Fixed","retryInterval":"99:99:99"}`):           "properties.action.retryPolicy.retryInterval",
		action(`,"retryPolicy":{"retryType":"Fixed","retryInterval":"00:00:60"}`):           "properties.action.retryPolicy.retryInterval",
		action(`,"retryPolicy":{"retryType":"Exponential","maximumInterval":"1.24:00:00"}`): "properties.action.retryPolicy.maximumInterval",
		action(`,"timeout":"00:01:99"`):                                                     "properties.action.timeout",
		action(`,"errorAction":{"type":"Http","request":{"uri":"http://a.example/","method":"GET"},` +
			`"retryPolicy":{"retryInterval":"00:60:00"}}`): "properties.action.errorAction.retryPolicy.retryInterval",
		`{"properties":{"catchUpWindow":"00:99:00",` + action("")[len(`{"properties":{`):]: "properties.catchUpWindow",
	} {
		for _, method := range []string{http.MethodPut} {
			rec := serve(t, method, badJob+badVersion, "application/json", body)
			require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", body, rec.Body)
			require.Equal(t, target, armAnswer(t, rec).Target, body)
		}
	}
}

// TestTypeErrorsNameTheJSONPath: a value of the wrong type is refused at
// its JSON path, in the main action as in the error action: never at the
// Go struct the main action's fields are embedded from.
func TestTypeErrorsNameTheJSONPath(t *testing.T) {
	for body, target := range map[string]string{
		`{"properties":{"action":{"type":"Http","retryPolicy":{"retryCount":"x"}}}}`:                      "properties.action.retryPolicy.retryCount",
		`{"properties":{"action":{"type":"Http","RetryPolicy":"x"}}}`:                                     "properties.action.retryPolicy",
		`{"properties":{"action":{"type":"Http","request":{"headers":{"a":1}}}}}`:                         "properties.action.request.headers",
		`{"properties":{"action":{"errorAction":{"type":"Http","retryPolicy":{"retryCount":"x"}}}}}`:      "properties.action.errorAction.retryPolicy.retryCount",
		`{"properties":{"recurrence":{"frequency":"Hour","schedule":{"minutes":["x"]}}}}`:                 "properties.recurrence.schedule.minutes",
		`{"properties":{"action":{"type":7}}}`:                                                            "properties.action.type",
		`{"properties":{"action":{"type":"ServiceBusQueue","serviceBusQueueMessage":{"message":false}}}}`: "properties.action.serviceBusQueueMessage.message",
	} {
		rec := serve(t, http.MethodPut, badJob+badVersion, "application/json", body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", body, rec.Body)
		answer := armAnswer(t, rec)
		require.Equal(t, target, answer.Target, body)
		require.True(t, strings.HasPrefix(answer.Message, target+":"), "%s: %s", body, answer.Message)
	}
	_, err := jobs.MergePatch(basicJob(), json.RawMessage(`{"properties":{"action":{"retryPolicy":{"retryCount":"x"}}}}`))
	var jobErr *jobs.Error
	require.ErrorAs(t, err, &jobErr)
	require.Equal(t, "properties.action.retryPolicy.retryCount", jobErr.Target, "a PATCH's too")
}

// TestSlowBodyIsA400WithoutAddresses: a body that stops arriving meets the
// server's read timeout. Every route that reads a body answers 400 in
// ARM's envelope, the preview too (it once answered 499, as if the client
// had gone), and so does /codec/, and the message names neither the
// connection's addresses nor Go's error ("read tcp 127.0.0.1:...->...:
// i/o timeout").
func TestSlowBodyIsA400WithoutAddresses(t *testing.T) {
	keys, err := codec.Generate()
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(New(nil, Options{Namespace: "default", Logger: discardLogger(), Codec: codec.Handler(keys)}))
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	for _, route := range []string{
		"PUT " + badCollection + badVersion,
		"PATCH " + badCollection + badVersion,
		"PUT " + badJob + badVersion,
		"PATCH " + badJob + badVersion,
		"POST " + badJob + "/backfill" + badVersion,
		"POST /recur/v1/preview",
		"POST /codec/decode",
	} {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		method, target, _ := strings.Cut(route, " ")
		_, err = fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"properties\":", method, target)
		require.NoError(t, err)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err, route)
		data, err := io.ReadAll(resp.Body)
		conn.Close()
		require.NoError(t, err, route)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", route, data)
		var body armError
		require.NoError(t, json.Unmarshal(data, &body), "%s: %s", route, data)
		require.Equal(t, jobs.CodeInvalidContent, body.Error.Code, route)
		require.Contains(t, body.Error.Message, "did not arrive in time", route)
		for _, leak := range []string{"127.0.0.1", "tcp", "i/o timeout", srv.Listener.Addr().String()} {
			require.NotContains(t, string(data), leak, route)
		}
	}
}

// TestPreviewBodyOverTheLimitIsA413: the preview reads its body as PUT
// does, so a body over MaxJobSize is a 413, not a 400 for the JSON cut
// at the limit, declared or not.
func TestPreviewBodyOverTheLimitIsA413(t *testing.T) {
	body := `{"properties":{"action":{"type":"Http","request":{"uri":"http://example.com/","method":"POST","body":"` +
		strings.Repeat("x", MaxJobSize) + `"}}}}`
	for _, length := range []int64{int64(len(body)), -1} {
		req := newRequest(http.MethodPost, "/recur/v1/preview", strings.NewReader(body))
		req.ContentLength = length
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		New(nil, Options{Logger: discardLogger()}).ServeHTTP(rec, req)
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, "Content-Length %d: %s", length, rec.Body)
		require.Equal(t, "RequestTooLarge", armAnswer(t, rec).Code)
	}
}

// TestBackfillTimesAreReadInTheAPI: a backfill's times are refused
// before the job's workflow sees them, in terms of what is wanted: not Go's
// layout for a time that is not one, and "out of range" rather than
// "required" for a time Go's zero value would make look absent.
func TestBackfillTimesAreReadInTheAPI(t *testing.T) {
	const end = `"endTime":"2026-01-02T00:00:00Z"`
	for _, tc := range []struct {
		body, target, want string
	}{
		{`{"startTime":"garbage",` + end + `}`, "startTime", `startTime "garbage" is not an RFC 3339 date-time such as 2026-11-01T00:00:00Z`},
		{`{"startTime":"2026-01-01",` + end + `}`, "startTime", "such as 2026-11-01T00:00:00Z"},
		{`{"startTime":"0001-01-01T00:00:00Z",` + end + `}`, "startTime", "startTime 0001-01-01T00:00:00Z is out of range: a backfill reaches back to 1970-01-01T00:00:00Z at most"},
		{`{"startTime":"1969-12-31T23:59:59Z",` + end + `}`, "startTime", "out of range"},
		{`{"startTime":"2026-01-01T00:00:00Z","endTime":"0001-01-01T00:00:00Z"}`, "endTime", "endTime 0001-01-01T00:00:00Z is out of range"},
		{`{"startTime":"2026-01-01T00:00:00Z"}`, "endTime", "endTime is required"},
		{`{"startTime":null,` + end + `}`, "startTime", "startTime is required"},
		{`{"startTime":12,` + end + `}`, "startTime", "a JSON number is not allowed here"},
	} {
		rec := serve(t, http.MethodPost, badJob+"/backfill"+badVersion, "application/json", tc.body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", tc.body, rec.Body)
		answer := armAnswer(t, rec)
		require.Equal(t, tc.target, answer.Target, tc.body)
		require.Contains(t, answer.Message, tc.want, tc.body)
		require.NotContains(t, answer.Message, "2006-01-02", tc.body)
		if !strings.HasSuffix(tc.want, "required") {
			require.NotContains(t, answer.Message, "required", "%s: a time given is not missing", tc.body)
		}
	}
}
