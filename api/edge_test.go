package api

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/codec"
)

// newRequest is httptest.NewRequest addressed to localhost, a name the
// API answers without tokens (httptest's example.com is not one).
func newRequest(method, target string, body io.Reader) *http.Request {
	req := httptest.NewRequest(method, target, body)
	req.Host = "localhost"
	return req
}

const (
	victimPath = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/victim"
	victimColl = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
)

// sendTo sends a request to h: header holds name, value pairs, "Host"
// among them sets the request's Host (localhost otherwise).
func sendTo(h http.Handler, method, target, body string, header ...string) *httptest.ResponseRecorder {
	req := newRequest(method, target, strings.NewReader(body))
	if body == "" {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// pastTheEdge checks that a request without api-version went past the
// edge: the ARM routes' next check answers it.
func pastTheEdge(t *testing.T, rec *httptest.ResponseRecorder, what string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", what, rec.Body)
	require.Equal(t, "MissingApiVersionParameter", armAnswer(t, rec).Code, what)
}

// TestWebPagesCannotDriveTheOpenAPI: without tokens, what a page of
// another site can make a browser send is refused before any route's
// work: a POST from another origin (fetch with mode no-cors, a form), one
// a browser marks cross-site without an Origin, and a body not said to be
// JSON. A page of the API's own (the dashboard), a program with no body
// and a link followed still pass.
func TestWebPagesCannotDriveTheOpenAPI(t *testing.T) {
	h := New(nil, Options{Logger: discardLogger(), ListenAddr: "127.0.0.1:8080"})
	own := []string{"Host", "localhost:8080", "Origin", "http://localhost:8080", "Sec-Fetch-Site", "same-origin"}
	for _, tc := range []struct {
		name, method, target, body string
		header                     []string
		status                     int
		code, message              string
	}{
		{"a no-cors fetch of another site", http.MethodPost, victimPath + "/run" + version, "",
			[]string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors"},
			http.StatusForbidden, "CrossOriginRequest", "another origin (Origin: https://evil.example)"},
		{"a form of another site", http.MethodPost, victimPath + "/run" + version, "a=b",
			[]string{"Origin", "https://evil.example", "Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Mode", "navigate"},
			http.StatusForbidden, "CrossOriginRequest", "answers its own pages only"},
		{"a sandboxed page", http.MethodPost, victimPath + "/run" + version, "", []string{"Origin", "null"},
			http.StatusForbidden, "CrossOriginRequest", "Origin: null"},
		{"another port of the same host", http.MethodPost, victimColl + "/disable" + version, "",
			[]string{"Host", "localhost:8080", "Origin", "http://localhost:3000", "Sec-Fetch-Site", "same-site"},
			http.StatusForbidden, "CrossOriginRequest", "Origin: http://localhost:3000"},
		{"cross-site without Origin", http.MethodPost, victimPath + "/backfill" + version, `{}`,
			[]string{"Sec-Fetch-Site", "cross-site", "Content-Type", "application/json"},
			http.StatusForbidden, "CrossOriginRequest", "Sec-Fetch-Site: cross-site"},
		{"a cross-site read of a script", http.MethodGet, "/dashboard/dashboard.js", "",
			[]string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors"},
			http.StatusForbidden, "CrossOriginRequest", "Sec-Fetch-Site: cross-site"},
		{"text/plain from the API's own page", http.MethodPost, victimPath + "/backfill" + version, `{}`,
			append(own, "Content-Type", "text/plain"),
			http.StatusUnsupportedMediaType, "UnsupportedMediaType", "not text/plain"},
		{"a browser's disable without Content-Type", http.MethodPost, victimColl + "/disable" + version, "", own,
			http.StatusUnsupportedMediaType, "UnsupportedMediaType", "a browser's POST needs Content-Type: application/json, even without a body"},
		{"a backfill without Content-Type", http.MethodPost, victimPath + "/backfill" + version,
			`{"startTime":"2026-01-01T00:00:00Z","endTime":"2026-01-02T00:00:00Z"}`, nil,
			http.StatusUnsupportedMediaType, "UnsupportedMediaType", "sent with Content-Type: application/json"},
		{"an empty form", http.MethodPost, victimPath + "/run" + version, "",
			[]string{"Content-Type", "application/x-www-form-urlencoded"},
			http.StatusUnsupportedMediaType, "UnsupportedMediaType", "not application/x-www-form-urlencoded"},
	} {
		rec := sendTo(h, tc.method, tc.target, tc.body, tc.header...)
		require.Equal(t, tc.status, rec.Code, "%s: %s", tc.name, rec.Body)
		answer := armAnswer(t, rec)
		assert.Equal(t, tc.code, answer.Code, tc.name)
		assert.Contains(t, answer.Message, tc.message, tc.name)
	}

	pastTheEdge(t, sendTo(h, http.MethodPost, victimPath+"/run", "", append(own, "Content-Type", "application/json")...),
		"the dashboard's run")
	pastTheEdge(t, sendTo(h, http.MethodPut, victimPath, `{}`, append(own, "Content-Type", "application/json; charset=utf-8")...),
		"the dashboard's PUT")
	pastTheEdge(t, sendTo(h, http.MethodPost, victimPath+"/run", ""), "a program's run, without a body or Content-Type")
	pastTheEdge(t, sendTo(h, http.MethodGet, victimPath, "", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate"),
		"a link followed from another site")
	rec := sendTo(h, http.MethodGet, "/dashboard", "", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate")
	require.Equal(t, http.StatusOK, rec.Code, "a link to the dashboard from another site opens it")

	// With tokens a page cannot send one (browsers attach no bearer
	// token of their own): the token's rule refuses it, and a body must
	// still be JSON.
	authed := New(nil, Options{Logger: discardLogger(), Auth: testTokens(t)})
	rec = sendTo(authed, http.MethodPost, victimPath+"/run"+version, "", "Origin", "https://evil.example", "Content-Type", "application/json")
	require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
	rec = sendTo(authed, http.MethodPost, victimPath+"/run"+version, "", "Origin", "https://evil.example")
	require.Equal(t, http.StatusUnsupportedMediaType, rec.Code, rec.Body.String())
	rec = sendTo(authed, http.MethodPost, victimPath+"/run"+version, "x", "Content-Type", "text/plain", "Authorization", "Bearer "+tokenOp)
	require.Equal(t, http.StatusUnsupportedMediaType, rec.Code, rec.Body.String())
}

// TestTheCodecAnswersItsWebUIsOrigins: the Web UIs allowed to call
// /codec/ from a browser are answered there as the API's own pages, on
// another port or name; anyone else's page is refused.
func TestTheCodecAnswersItsWebUIsOrigins(t *testing.T) {
	keys, err := codec.Generate()
	require.NoError(t, err)
	const ui = "http://localhost:8233"
	h := New(nil, Options{Logger: discardLogger(), Codec: codec.Handler(keys, ui), CodecOrigins: []string{ui}})
	preflight := []string{"Host", "127.0.0.1:8080", "Access-Control-Request-Method", "POST", "Sec-Fetch-Site", "cross-site"}
	rec := sendTo(h, http.MethodOptions, "/codec/decode", "", append(preflight, "Origin", ui)...)
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	require.Equal(t, ui, rec.Header().Get("Access-Control-Allow-Origin"))
	rec = sendTo(h, http.MethodPost, "/codec/decode", `{"payloads":[]}`, "Host", "127.0.0.1:8080", "Origin", ui,
		"Sec-Fetch-Site", "cross-site", "Content-Type", "application/json")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	rec = sendTo(h, http.MethodPost, "/codec/decode", `{"payloads":[]}`, "Host", "127.0.0.1:8080", "Origin", "https://evil.example",
		"Content-Type", "application/json")
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	rec = sendTo(h, http.MethodPost, victimPath+"/run"+version, "", "Host", "127.0.0.1:8080", "Origin", ui, "Content-Type", "application/json")
	require.Equal(t, http.StatusForbidden, rec.Code, "the Web UI may call /codec/ only: %s", rec.Body)
}

// TestHostsTheAPIAnswers: without tokens a Host that is not localhost,
// an IP address, the listen address's name or a name the operator allowed
// is refused on every route, the dashboard and /codec/ included, so that
// a page under a name its owner points at 127.0.0.1 (DNS rebinding) reads
// nothing. With tokens any Host is served until the operator names some.
func TestHostsTheAPIAnswers(t *testing.T) {
	keys, err := codec.Generate()
	require.NoError(t, err)
	var named Hosts
	require.NoError(t, named.Add("recur.example.com, .corp.example"))
	open := New(nil, Options{Logger: discardLogger(), ListenAddr: "devbox:8080", Codec: codec.Handler(keys)})
	openNamed := New(nil, Options{Logger: discardLogger(), AllowedHosts: named})
	const rebind = "rebind.attacker.example:28081"
	for _, target := range []string{victimColl + "/jobs" + version, "/codec/decode", "/dashboard", "/healthz", "/openapi.json", "/nowhere"} {
		method, body, ct := http.MethodGet, "", ""
		if strings.HasPrefix(target, "/codec/") {
			method, body, ct = http.MethodPost, `{"payloads":[]}`, "application/json"
		}
		rec := sendTo(open, method, target, body, "Host", rebind, "Content-Type", ct)
		require.Equal(t, http.StatusForbidden, rec.Code, "%s: %s", target, rec.Body)
		answer := armAnswer(t, rec)
		require.Equal(t, "HostNotAllowed", answer.Code, target)
		require.Contains(t, answer.Message, `the Host "`+rebind+`" is not one of this API's names`, target)
		require.Contains(t, answer.Message, "DNS rebinding", target)
	}
	for _, host := range []string{"localhost:8080", "LOCALHOST", "app.localhost:8080", "127.0.0.1:8080", "[::1]:8080",
		"10.1.2.3", "devbox:8080", ""} {
		require.Equal(t, http.StatusOK, sendTo(open, http.MethodGet, "/healthz", "", "Host", host).Code, "Host %q", host)
	}
	for host, want := range map[string]int{
		"recur.example.com:443": http.StatusOK, "a.corp.example": http.StatusOK, "corp.example": http.StatusOK,
		"notcorp.example": http.StatusForbidden, "example.com": http.StatusForbidden, "devbox:8080": http.StatusForbidden,
	} {
		require.Equal(t, want, sendTo(openNamed, http.MethodGet, "/healthz", "", "Host", host).Code, "Host %q", host)
	}
	rec := sendTo(openNamed, http.MethodPost, victimPath+"/run", "", "Host", "127.0.0.1:8080",
		"Origin", "https://recur.example.com", "Content-Type", "application/json")
	pastTheEdge(t, rec, "a page under a name the operator allowed is one of the API's own")

	authed := New(nil, Options{Logger: discardLogger(), Auth: testTokens(t)})
	require.Equal(t, http.StatusOK, sendTo(authed, http.MethodGet, "/healthz", "", "Host", rebind).Code,
		"with tokens and no names, any Host is served")
	authedNamed := New(nil, Options{Logger: discardLogger(), Auth: testTokens(t), AllowedHosts: named})
	require.Equal(t, http.StatusForbidden, sendTo(authedNamed, http.MethodGet, "/healthz", "", "Host", rebind).Code)
	require.Equal(t, http.StatusOK, sendTo(authedNamed, http.MethodGet, "/healthz", "", "Host", "recur.example.com").Code)
	var anyHost Hosts
	require.NoError(t, anyHost.Add("*"))
	require.Equal(t, http.StatusOK, sendTo(New(nil, Options{Logger: discardLogger(), AllowedHosts: anyHost}),
		http.MethodGet, "/healthz", "", "Host", rebind).Code)
}

func TestHostsAdd(t *testing.T) {
	var h Hosts
	require.NoError(t, h.Add(" Recur.Example.com,*.corp.example,.lab.example, ,10.0.0.1"))
	require.NoError(t, h.Add("*"))
	require.Equal(t, "recur.example.com,10.0.0.1,*.corp.example,*.lab.example,*", h.String())
	for _, bad := range []string{"https://recur.example.com", "recur.example.com:8080", "recur.example.com/", "a b", "*.", "..x", "x..y", "[::1]"} {
		require.Error(t, new(Hosts).Add(bad), bad)
	}
}

func TestTrustedProxiesAdd(t *testing.T) {
	var p TrustedProxies
	require.NoError(t, p.Add("127.0.0.1, 10.1.2.0/24,::1,10.9.9.9/8,::ffff:192.0.2.1"))
	require.Equal(t, "127.0.0.1/32,10.1.2.0/24,::1/128,10.0.0.0/8,192.0.2.1/32", p.String())
	require.True(t, p.contains("10.1.2.200"))
	require.True(t, p.contains("::ffff:10.1.2.7"))
	require.False(t, p.contains("10.1.3.1x"))
	require.False(t, p.contains("11.0.0.1"))
	for _, bad := range []string{"localhost", "10.0.0.0/33", "fe80::1%eth0", "*"} {
		require.Error(t, new(TrustedProxies).Add(bad), bad)
	}
}

// TestLinksNameOnlyVettedHosts: a nextLink names the request's Host only
// when it is allowed; otherwise, with tokens and no names, the listen
// address, so that no client follows a link to a name someone else chose
// with its token. X-Forwarded-Proto is believed from trusted proxies only.
func TestLinksNameOnlyVettedHosts(t *testing.T) {
	f := newListFake()
	f.addCollection(t, "rg1", "a")
	f.addCollection(t, "rg1", "b")
	var named Hosts
	require.NoError(t, named.Add("recur.example.com"))
	var proxies TrustedProxies
	require.NoError(t, proxies.Add("192.0.2.0/24"))
	page := rgPath + version + "&$top=1"
	for _, tc := range []struct {
		name   string
		opts   Options
		header []string
		want   string
	}{
		{"an unvetted Host, listening on every interface", Options{ListenAddr: "0.0.0.0:8080"},
			[]string{"Host", "evil.example"}, "http://localhost:8080" + rgPath},
		{"an unvetted Host, listening on an address", Options{ListenAddr: "127.0.0.1:9000"},
			[]string{"Host", "evil.example:9000"}, "http://127.0.0.1:9000" + rgPath},
		{"an unvetted Host, listening on a name", Options{ListenAddr: "devbox:9000"},
			[]string{"Host", "evil.example:9000"}, "http://devbox:9000" + rgPath},
		{"a named Host", Options{ListenAddr: "0.0.0.0:8080", AllowedHosts: named},
			[]string{"Host", "recur.example.com"}, "http://recur.example.com" + rgPath},
		{"an IP address", Options{ListenAddr: "0.0.0.0:8080"},
			[]string{"Host", "10.1.2.3:8080"}, "http://10.1.2.3:8080" + rgPath},
		{"X-Forwarded-Proto from anyone", Options{ListenAddr: "0.0.0.0:8080"},
			[]string{"Host", "10.1.2.3:8080", "X-Forwarded-Proto", "https"}, "http://10.1.2.3:8080" + rgPath},
		{"X-Forwarded-Proto from a trusted proxy", Options{ListenAddr: "0.0.0.0:8080", TrustedProxies: proxies},
			[]string{"Host", "recur.example.com", "X-Forwarded-Proto", "https"}, "https://localhost:8080" + rgPath},
		{"X-Forwarded-Proto from a trusted proxy for a named Host", Options{ListenAddr: "0.0.0.0:8080", TrustedProxies: proxies, AllowedHosts: named},
			[]string{"Host", "recur.example.com", "X-Forwarded-Proto", "https"}, "https://recur.example.com" + rgPath},
	} {
		opts := tc.opts
		opts.Auth, opts.Logger = testTokens(t), discardLogger()
		h := New(f, opts)
		rec := sendTo(h, http.MethodGet, page, "", append(tc.header, "Authorization", "Bearer "+tokenOp)...)
		require.Equal(t, http.StatusOK, rec.Code, "%s: %s", tc.name, rec.Body)
		var body struct{ NextLink string }
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		assert.True(t, strings.HasPrefix(body.NextLink, tc.want+"?"), "%s: %s", tc.name, body.NextLink)
		assert.NotContains(t, body.NextLink, "evil", tc.name)
	}

	// The operator hears of it, once.
	var logs bytes.Buffer
	h := New(f, Options{Auth: testTokens(t), Logger: slog.New(slog.NewJSONHandler(&logs, nil)), ListenAddr: "0.0.0.0:8080"})
	for range 3 {
		require.Equal(t, http.StatusOK, sendTo(h, http.MethodGet, page, "", "Host", "evil.example", "Authorization", "Bearer "+tokenOp).Code)
	}
	require.Equal(t, 1, strings.Count(logs.String(), "links in answers (nextLink, Location) name the listen address"), logs.String())
	require.Contains(t, logs.String(), `"host":"evil.example","links":"localhost:8080"`)
}

// TestForwardedHeadersAreBelievedFromTrustedProxiesOnly: a client's
// X-Forwarded-For and X-Real-IP name its address in the log and choose
// its bucket of the preview's rate limit only when it is a proxy the
// operator trusts.
func TestForwardedHeadersAreBelievedFromTrustedProxiesOnly(t *testing.T) {
	var local TrustedProxies
	require.NoError(t, local.Add("127.0.0.1,::1"))
	for _, tc := range []struct {
		proxies TrustedProxies
		remote  string
	}{{nil, "127.0.0.1"}, {local, "6.6.6.6"}} {
		var logs bytes.Buffer
		srv := httptest.NewServer(New(nil, Options{Auth: testTokens(t), TrustedProxies: tc.proxies,
			Logger: slog.New(slog.NewJSONHandler(&logs, nil))}))
		req, err := http.NewRequest(http.MethodGet, srv.URL+victimColl+version, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer not-a-token-of-anyone-0123")
		req.Header.Set("X-Forwarded-For", "6.6.6.6")
		req.Header.Set("X-Real-IP", "6.6.6.7")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		srv.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		var line struct{ Msg, Remote string }
		require.NoError(t, json.Unmarshal(logs.Bytes(), &line), logs.String())
		require.Equal(t, "bearer token refused", line.Msg)
		require.Equal(t, tc.remote, line.Remote, "trusted proxies %v", tc.proxies)
	}

	// The open API limits the preview by client address.
	const burst = 3
	for _, tc := range []struct {
		proxies TrustedProxies
		limited bool
	}{{nil, true}, {local, false}} {
		srv := httptest.NewServer(New(nil, Options{Logger: discardLogger(), TrustedProxies: tc.proxies,
			RateLimit: RateLimit{PerSecond: 0.001, Burst: burst}}))
		limited := false
		for i := range 3 * burst {
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/recur/v1/preview", nil)
			require.NoError(t, err)
			req.Header.Set("X-Forwarded-For", "6.6.6."+string(rune('0'+i)))
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			limited = limited || resp.StatusCode == http.StatusTooManyRequests
		}
		srv.Close()
		require.Equal(t, tc.limited, limited, "trusted proxies %v: a header of anyone else's choosing is not a client", tc.proxies)
	}
}

// TestRefusalLogsAreSampled: a thousand requests with a bad token write a
// few lines, not a thousand; the lines are at most the burst and one a
// second after it.
func TestRefusalLogsAreSampled(t *testing.T) {
	var logs bytes.Buffer
	h := New(nil, Options{Auth: testTokens(t), Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	began := time.Now()
	for range 1000 {
		require.Equal(t, http.StatusUnauthorized, sendTo(h, http.MethodGet, victimColl+version, "",
			"Authorization", "Bearer not-a-token-of-anyone-0123").Code)
	}
	elapsed := time.Since(began)
	lines := strings.Count(logs.String(), "bearer token refused")
	require.GreaterOrEqual(t, lines, refusalBurst)
	require.LessOrEqual(t, lines, refusalBurst+int(elapsed.Seconds()*refusalsAsecond)+1, "in %s", elapsed)
}

// TestSamplerSaysHowManyItHeldBack: past its burst the sampler lets one
// line a second through, which says how many it held back.
func TestSamplerSaysHowManyItHeldBack(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newSampler()
	s.bucket.now = func() time.Time { return now }
	let := 0
	for range 1000 {
		if ok, held := s.take(); ok {
			require.Zero(t, held)
			let++
		}
	}
	require.Equal(t, refusalBurst, let)
	now = now.Add(time.Second)
	ok, held := s.take()
	require.True(t, ok)
	require.EqualValues(t, 1000-refusalBurst, held)
	ok, _ = s.take()
	require.False(t, ok)
}

// TestCodecBodiesAreBoundedAsOnEveryRoute: /codec/ reads at most
// codec.MaxRequestBody bytes of a body and answers one larger as every route
// does, unread, whether its length is declared or not.
func TestCodecBodiesAreBoundedAsOnEveryRoute(t *testing.T) {
	keys, err := codec.Generate()
	require.NoError(t, err)
	h := New(nil, Options{Logger: discardLogger(), Codec: codec.Handler(keys)})
	body := `{"payloads":[{"data":"` + strings.Repeat("A", 25<<20) + `"}]}`
	for _, length := range []int64{int64(len(body)), -1} {
		req := newRequest(http.MethodPost, "/codec/decode", strings.NewReader(body))
		req.ContentLength = length
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, "Content-Length %d: %.200s", length, rec.Body)
		answer := armAnswer(t, rec)
		require.Equal(t, "RequestTooLarge", answer.Code)
		require.Contains(t, answer.Message, "the body is larger than the limit of 4194304 bytes")
	}
}
