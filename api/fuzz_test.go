package api

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/http/httpguts"

	"github.com/recurhq/recur/jobs"
)

// FuzzJobBody runs any body through the steps PUT and PATCH of a job take
// before they reach Temporal: decode (for a PATCH, merge into a stored
// job) and Accept. Either writeError answers a 4xx, or the job is
// safe to store: it encodes to valid UTF-8 within the depth limit, and its
// HTTP requests cannot write lines of their own nor name a header twice. The e2e FuzzPutJobBody
// covers the handler itself, against a real Temporal.
func FuzzJobBody(f *testing.F) {
	valid := `{"properties":{"startTime":"2099-01-01T00:00:00Z","action":{"type":"Http","request":{"uri":"http://example.com/","method":"GET",` +
		`"headers":{"X-A":"1"},"body":"b"},"errorAction":{"type":"Http","request":{"uri":"http://example.com/e","method":"POST"}}},` +
		`"recurrence":{"frequency":"Month","interval":1,"schedule":{"monthlyOccurrences":[{"day":"Monday","occurrence":1}]}}}}`
	for _, seed := range []string{
		valid,
		strings.Replace(valid, `"1"`, `"1\r\nX-Injected: yes"`, 1),
		strings.Replace(valid, `"X-A"`, `"X-A\u0000"`, 1),
		strings.Replace(valid, `"GET"`, `"GET /x HTTP/1.1\r\n"`, 1),
		strings.Replace(valid, `"b"`, "\"\xff\"", 1),
		`{"properties":{"status":{"executionCount":1},"state":"disabled"}}`,
		`{"properties":{"maxConsecutiveFaults":1e400}}`,
		`{"properties":{"action":{"request":{"authentication":{"type":"ClientCertificate","pfx":"!!"}}}}}`,
		`{"properties":{"action":{"type":"Workflow","workflow":{"workflowType":"w","taskQueue":"q","input":[[[1]]]}}}}`,
		strings.Replace(valid, `"X-A":"1"`, `"X-A":"1","x-a":"2"`, 1),
		strings.Replace(valid, `"method":"GET"`, `"method":"GET","METHOD":"DELETE"`, 1),
		strings.Replace(valid, `"interval":1,`, `"interval":1,"schedule":{"minutes":[null]},`, 1),
		`{"properties":{"action":{"headers":{"X-B":"1"},"request":{"headers":{"x-a":"2"}},"retryPolicy":{"retryInterval":"99:99:99"}}}}`,
		`null`, `[]`, `{}`, ``, strings.Repeat("[", 100),
	} {
		f.Add([]byte(seed))
	}
	gin.SetMode(gin.ReleaseMode)
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		var put jobs.Job
		err := decode(bodyContext(body), &put, withoutStatus)
		if err == nil {
			err = put.Accept(k, now)
		}
		requireRefusedOrSafe(t, body, put, err)

		patched, err := patchSteps(bodyContext(body))
		if err == nil {
			err = patched.Accept(k, now)
		}
		requireRefusedOrSafe(t, body, patched, err)
	})
}

// patchSteps are patchJob's steps before it asks Temporal for the job,
// then merge into basicJob as if it were the stored one.
func patchSteps(c *gin.Context) (jobs.Job, error) {
	patch, err := decodePatch[jobs.Job](c)
	if err != nil {
		return jobs.Job{}, err
	}
	if _, given := dropStatus(patch); given {
		return jobs.Job{}, &apiError{status: http.StatusBadRequest, code: "ReadOnlyProperty"}
	}
	return jobs.PatchJob(basicJob(), patch)
}

func bodyContext(body []byte) *gin.Context {
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = newRequest(http.MethodPut, "/", bytes.NewReader(body))
	return c
}

// requireRefusedOrSafe checks that err is answered with a 4xx, or, when
// there is none, that job is safe to store.
func requireRefusedOrSafe(t *testing.T, body []byte, job jobs.Job, err error) {
	t.Helper()
	if err != nil {
		rec := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(rec)
		c.Request = newRequest(http.MethodPut, "/", nil)
		writeError(c, slog.New(slog.DiscardHandler), err)
		require.True(t, rec.Code >= 400 && rec.Code < 500, "%q: %d %s", body, rec.Code, rec.Body)
		return
	}
	out, err := json.Marshal(job)
	require.NoError(t, err)
	require.True(t, utf8.Valid(out), "%q is stored as invalid UTF-8", body)
	require.LessOrEqual(t, nesting(out), maxDepth, "%q", body)
	action := job.Properties.Action
	require.NotNil(t, action, "%q", body)
	for _, spec := range []*jobs.ActionSpec{&action.ActionSpec, action.ErrorAction} {
		if spec == nil || spec.Request == nil {
			continue
		}
		require.True(t, httpguts.ValidHeaderFieldName(spec.Request.Method), "%q: method %q", body, spec.Request.Method)
		seen := map[string]bool{}
		for name, value := range spec.Request.Headers {
			require.True(t, httpguts.ValidHeaderFieldName(name) && httpguts.ValidHeaderFieldValue(value), "%q: header %q", body, name)
			require.False(t, seen[http.CanonicalHeaderKey(name)], "%q: header %q given twice", body, name)
			seen[http.CanonicalHeaderKey(name)] = true
		}
	}
}
