package jobs_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// httpJob is a valid Http job whose action and error action send headers.
func httpJob(headers, errorHeaders map[string]string) jobs.Job {
	return jobs.Job{Properties: jobs.Properties{Action: &jobs.Action{
		ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: "https://example.com/x", Method: "POST", Headers: headers}},
		ErrorAction: &jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{
			URI: "https://example.com/error", Method: "POST", Headers: errorHeaders}},
	}}}
}

func normalizeError(t *testing.T, j jobs.Job) *jobs.Error {
	t.Helper()
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	err := j.Accept(k, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err == nil {
		return nil
	}
	var e *jobs.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, jobs.CodeInvalidRequest, e.Code)
	return e
}

func TestWellFormedHeadersAreAccepted(t *testing.T) {
	headers := map[string]string{
		"X-Tab":        "a\tb",
		"X-Empty":      "",
		"X-Unicode":    "café ☕",
		"X-Tokenish":   "!#$%&'*+-.^_`|~ and spaces",
		"Content-Type": "application/json; charset=utf-8",
		"x.y_z~1!":     "v",
	}
	require.Nil(t, normalizeError(t, httpJob(headers, headers)))
}

// TestHeaderInjectionIsRefused: a header that would break out of its line
// in the outgoing request, in the action or the error action, is a 400 at
// the headers' path, and the message does not repeat the value (it may
// be a secret).
func TestHeaderInjectionIsRefused(t *testing.T) {
	const secret = "s3cret-token"
	for name, headers := range map[string]map[string]string{
		"CR LF in a value":   {"X-A": secret + "\r\nX-Injected: yes"},
		"LF in a value":      {"X-A": secret + "\nX-Injected: yes"},
		"CR in a value":      {"X-A": secret + "\r"},
		"NUL in a value":     {"X-A": secret + "\x00"},
		"DEL in a value":     {"X-A": secret + "\x7f"},
		"CR LF in a name":    {"X-A\r\nX-Injected": "yes"},
		"colon in a name":    {"X-A: yes\r\nX-B": "v"},
		"space in a name":    {"X A": "v"},
		"empty name":         {"": "v"},
		"non-ASCII name":     {"Ünicode": "v"},
		"NUL in a name":      {"X-A\x00": "v"},
		"brackets in a name": {"X-(A)": "v"},
	} {
		t.Run(name, func(t *testing.T) {
			e := normalizeError(t, httpJob(headers, nil))
			require.NotNil(t, e, "the action's headers")
			require.Equal(t, "properties.action.request.headers", e.Target)
			require.NotContains(t, e.Message, secret)

			e = normalizeError(t, httpJob(nil, headers))
			require.NotNil(t, e, "the error action's headers")
			require.Equal(t, "properties.action.errorAction.request.headers", e.Target)
			require.NotContains(t, e.Message, secret)
		})
	}
}

func TestRequestLineInjectionIsRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(*jobs.HTTPRequest)
		target string
	}{
		"CR LF in the method": {func(r *jobs.HTTPRequest) { r.Method = "GET\r\nX-Injected: yes" }, "properties.action.request.method"},
		"space in the method": {func(r *jobs.HTTPRequest) { r.Method = "GET / HTTP/1.1" }, "properties.action.request.method"},
		"NUL in the method":   {func(r *jobs.HTTPRequest) { r.Method = "GET\x00" }, "properties.action.request.method"},
		"CR LF in the uri":    {func(r *jobs.HTTPRequest) { r.URI = "https://example.com/\r\nX-Injected: yes" }, "properties.action.request.uri"},
		"LF in the uri host":  {func(r *jobs.HTTPRequest) { r.URI = "https://exam\nple.com/" }, "properties.action.request.uri"},
		"NUL in the uri":      {func(r *jobs.HTTPRequest) { r.URI = "https://example.com/\x00" }, "properties.action.request.uri"},
	} {
		t.Run(name, func(t *testing.T) {
			j := httpJob(nil, nil)
			tc.mutate(j.Properties.Action.Request)
			e := normalizeError(t, j)
			require.NotNil(t, e)
			require.Equal(t, tc.target, e.Target)
		})
	}
}

// TestKeyValidateRefusesPathTraversal: the names an unescaped path can
// carry to the API are refused, whatever they try.
func TestKeyValidateRefusesPathTraversal(t *testing.T) {
	for _, name := range []string{
		"..", ".", ".hidden", "../coll2", `..\coll2`, "a/../b", "a%2Fb", "%2e%2e", "a\x00b", "a\r\nb", "a b",
		"café", "ｊｏｂ", "\xff", "a?b", "a#b", strings.Repeat("x", 101), strings.Repeat("x", 100_000),
	} {
		for _, k := range []jobs.Key{
			{Subscription: name, ResourceGroup: "rg", Collection: "c"},
			{Subscription: "s", ResourceGroup: name, Collection: "c"},
			{Subscription: "s", ResourceGroup: "rg", Collection: name},
			{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: name},
		} {
			err := k.Validate()
			var e *jobs.Error
			require.ErrorAs(t, err, &e, "%q", name)
			require.Equal(t, jobs.CodeInvalidName, e.Code)
			require.Less(t, len(e.Message), 400, "the message quotes a long name only in part")
		}
	}
	require.NoError(t, jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: strings.Repeat("x", 100)}.Validate())
}
