package activities

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// awkwardSecret has what JSON encoders escape, each in its own way: a
// quote, a backslash, a slash, HTML's characters, an accented letter
// and a character beyond the Basic Multilingual Plane.
const awkwardSecret = `pa"ss\wo/rd<&>é😀`

// jsonForms are awkwardSecret as JSON encoders write it in a string.
func jsonForms(t *testing.T) map[string]string {
	goHTML, err := json.Marshal(awkwardSecret)
	require.NoError(t, err)
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(awkwardSecret))
	return map[string]string{
		"Go":                 strings.Trim(string(goHTML), `"`), // \u003c\u0026\u003e
		"Go without HTML":    strings.Trim(strings.TrimSpace(plain.String()), `"`),
		"PHP (escaped /)":    `pa\"ss\\wo\/rd<&>é😀`,
		"Python (ASCII)":     `pa\"ss\\wo/rd<&>\u00e9\ud83d\ude00`,
		".NET (upper case)":  `pa\u0022ss\u005Cwo/rd\u003C\u0026\u003E\u00E9\uD83D\uDE00`,
		"everything escaped": `\u0070\u0061\"\u0073s\\\u0077o\/rd\u003c&>\u00e9\ud83d\ude00`,
	}
}

func TestRedactSecretsFindsEveryEncoding(t *testing.T) {
	forms := jsonForms(t)
	forms["as it is"] = awkwardSecret
	forms["query-escaped"] = url.QueryEscape(awkwardSecret)
	forms["path-escaped"] = url.PathEscape(awkwardSecret)
	for name, form := range forms {
		got := redactSecrets(`{"echo":"`+form+`","n":1}`, []string{awkwardSecret})
		require.Equal(t, `{"echo":"[redacted]","n":1}`, got, name)
	}
	for _, s := range []string{
		`pa"ss\wo/rd<&>é`,          // a prefix is not the secret
		`pa\"ss\\wo\/rd<&>\u00e8😀`, // nor another letter
		`pa\"ss\\wo\/rd<&>é\ud83d`, // nor half a surrogate pair
		`\u00`,                     // nor a cut escape
	} {
		require.Equal(t, s, redactSecrets(s, []string{awkwardSecret}))
	}
	require.Equal(t, "no secret at all", redactSecrets("no secret at all", []string{awkwardSecret, ""}))
	require.Equal(t, "x\xff[redacted]", redactSecrets("x\xff\xfe\xfd", []string{"\xfe\xfd"}), "bytes that are no UTF-8 match as they are")
}

// TestEchoedSecretsAreRedactedInEveryForm: a target that echoes the
// password JSON-encoded, in its body, in its status line or in an answer
// that is no HTTP, gets it into neither the attempt's result nor its
// failure message.
func TestEchoedSecretsAreRedactedInEveryForm(t *testing.T) {
	auth := &jobs.Authentication{Type: jobs.AuthBasic, Username: "u", Password: awkwardSecret}
	for name, form := range jsonForms(t) {
		target := httptestJSONEcho(t, form)
		out, err := runHTTP(t, New(localPolicy), jobs.HTTPRequest{URI: target, Method: "POST", Authentication: auth})
		appErr := requireAppError(t, err)
		require.NoError(t, appErr.Details(&out))
		require.Contains(t, out.Body, `"password":"[redacted]"`, name)
		require.NotContains(t, out.Body, form, name)
	}

	// The status line and the words of a malformed answer (which net/http
	// quotes as Go does, escaping " and \ as JSON does) end up in the
	// failure's message.
	for _, tc := range []struct{ name, answer, form string }{
		{"status line", "HTTP/1.1 500 %s\r\nContent-Length: 0\r\n\r\n", awkwardSecret},
		{"status line, JSON-escaped", "HTTP/1.1 500 %s\r\nContent-Length: 0\r\n\r\n", jsonForms(t)["Go"]},
		{"not HTTP", "HTTP/1.1 %s\r\n\r\n", awkwardSecret},
	} {
		target := rawTarget(t, func(c net.Conn) { _, _ = fmt.Fprintf(c, tc.answer, tc.form) })
		_, err := runHTTP(t, New(localPolicy), jobs.HTTPRequest{URI: target, Method: "GET", Authentication: auth})
		appErr := requireAppError(t, err)
		var out jobs.HTTPResponse
		require.NoError(t, appErr.Details(&out))
		require.Contains(t, appErr.Message(), "[redacted]", "%s: %s", tc.name, appErr.Message())
		for _, leak := range []string{tc.form, "pa\"ss", `pa\"ss`} {
			require.NotContains(t, appErr.Message(), leak, tc.name)
			require.NotContains(t, out.Status, leak, tc.name)
		}
	}
}

// httptestJSONEcho is a target that fails with a JSON body echoing the
// Basic password it got, written as form: how one JSON encoder or another
// writes it.
func httptestJSONEcho(t *testing.T, form string) string {
	return rawTarget(t, func(c net.Conn) {
		body := `{"error":"denied","password":"` + form + `","basic":"` + base64.StdEncoding.EncodeToString([]byte("u:"+awkwardSecret)) + `"}`
		_, _ = fmt.Fprintf(c, "HTTP/1.1 %d Forbidden\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			http.StatusForbidden, len(body), body)
	})
}
