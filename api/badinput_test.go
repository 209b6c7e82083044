package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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
	require.NoError(t, checkJSONText([]byte(body)))
	require.NoError(t, json.Unmarshal([]byte(body), &job))
	require.Error(t, checkJSONText([]byte(strings.Replace(body, "[", "[[", 1))))
}

// unreadBody fails the test if the handler reads it.
type unreadBody struct{ t *testing.T }

func (b unreadBody) Read([]byte) (int, error) {
	b.t.Error("the body was read")
	return 0, http.ErrBodyReadAfterClose
}

func TestBodyDeclaredOverTheLimitIsRefusedUnread(t *testing.T) {
	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		for _, path := range []string{badCollection, badJob} {
			req := httptest.NewRequest(method, path+badVersion, unreadBody{t})
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
	req := httptest.NewRequest(http.MethodPut, badJob+badVersion, strings.NewReader(`{"`+strings.Repeat("x", MaxJobSize)+`":1}`))
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

// TestMergeKeepsNumbersAsWritten: a patch's numbers reach the definition
// as written, so one out of range is refused at its field.
func TestMergeKeepsNumbersAsWritten(t *testing.T) {
	_, err := merge(basicJob(), json.RawMessage(`{"properties":{"maxConsecutiveFaults":1e400}}`))
	var apiErr *apiError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusBadRequest, apiErr.status)
	require.Equal(t, "properties.maxConsecutiveFaults", apiErr.target)

	got, err := merge(basicJob(), json.RawMessage(`{"properties":{"maxConsecutiveFaults":9007199254740993}}`))
	require.NoError(t, err)
	require.Equal(t, 9007199254740993, got.Properties.MaxConsecutiveFaults, "not rounded through float64")
}
