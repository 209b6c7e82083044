package activities

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/egress"
	"github.com/recurhq/recur/internal/servicebusfake"
	"github.com/recurhq/recur/jobs"
)

// localPolicy is the egress policy of tests whose targets are httptest
// servers on 127.0.0.1: loopback allowed, and redirects followed as the
// hostile-target tests expect.
var localPolicy = egress.Policy{AllowLoopback: true, FollowRedirects: true}

// countingTarget is an httptest server that counts the connections it
// accepts: a refused call must open none.
type countingTarget struct {
	*httptest.Server
	conns atomic.Int32
}

func newCountingTarget(t *testing.T, tlsServer bool, h http.HandlerFunc) *countingTarget {
	t.Helper()
	ct := &countingTarget{Server: httptest.NewUnstartedServer(h)}
	ct.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			ct.conns.Add(1)
		}
	}
	if tlsServer {
		ct.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
		ct.StartTLS()
	} else {
		ct.Start()
	}
	t.Cleanup(ct.Close)
	return ct
}

// requireRefusal checks that err is a non-retryable refusal by the egress
// policy whose message contains each of want and no secret.
func requireRefusal(t *testing.T, err error, want ...string) {
	t.Helper()
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	require.Equal(t, ErrTypeRefused, appErr.Type(), appErr.Message())
	require.True(t, appErr.NonRetryable(), "the next attempt would be refused as well")
	require.Contains(t, appErr.Message(), "refused by policy")
	for _, w := range want {
		require.Contains(t, appErr.Message(), w)
	}
	for _, secret := range []string{"s3cr3t", "pa55word", "sig="} {
		require.NotContains(t, appErr.Message(), secret)
	}
}

func TestHTTPActionToARefusedDestination(t *testing.T) {
	target := newCountingTarget(t, false, func(w http.ResponseWriter, _ *http.Request) {})
	host := strings.TrimPrefix(target.URL, "http://")
	uri := "http://user:pa55word@" + host + "/hook?sig=s3cr3t"

	_, err := runHTTP(t, New(egress.Policy{}), jobs.HTTPRequest{URI: uri, Method: "POST"})
	requireRefusal(t, err, "POST http://"+host+"/hook: destination "+host+" refused by policy: a loopback address (allow it with --egress-allow-loopback)")
	_, err = runHTTP(t, &Activities{}, jobs.HTTPRequest{URI: uri, Method: "POST"})
	requireRefusal(t, err, "loopback")
	require.Zero(t, target.conns.Load(), "a refused call opens no connection")

	out, err := runHTTP(t, New(localPolicy), jobs.HTTPRequest{URI: uri, Method: "POST"})
	require.NoError(t, err, "allowed, the same call goes through")
	require.Equal(t, http.StatusOK, out.StatusCode)
}

func TestHTTPActionRefusesOtherSchemes(t *testing.T) {
	for _, uri := range []string{"ftp://example.com/file", "file:///etc/passwd", "gopher://127.0.0.1:70/_x"} {
		_, err := runHTTP(t, New(localPolicy), jobs.HTTPRequest{URI: uri, Method: "GET"})
		requireRefusal(t, err, "only http and https")
	}
}

func TestHTTPActionRedirects(t *testing.T) {
	elsewhere := newCountingTarget(t, false, func(w http.ResponseWriter, _ *http.Request) {})
	var to string
	redirector := newCountingTarget(t, false, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to, http.StatusFound)
	})
	var p egress.Policy
	require.NoError(t, p.AddAllowed("127.0.0.1"))

	to = elsewhere.URL + "/next"
	_, err := runHTTP(t, New(p), jobs.HTTPRequest{URI: redirector.URL, Method: "GET"})
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	require.Equal(t, ErrTypeHTTPStatus, appErr.Type())
	require.True(t, appErr.NonRetryable())
	require.Contains(t, appErr.Message(), "302 Found (a redirect, not followed)")
	var out jobs.HTTPResponse
	require.NoError(t, appErr.Details(&out))
	require.Equal(t, http.StatusFound, out.StatusCode)
	require.Contains(t, out.Headers, "Location: "+elsewhere.URL+"/next", "history shows where it pointed")
	require.Zero(t, elsewhere.conns.Load(), "not followed")

	p.FollowRedirects = true
	out, err = runHTTP(t, New(p), jobs.HTTPRequest{URI: redirector.URL, Method: "GET"})
	require.NoError(t, err, "followed to an allowed address")
	require.Equal(t, http.StatusOK, out.StatusCode)
	require.EqualValues(t, 1, elsewhere.conns.Load())

	for dest, want := range map[string]string{
		"http://169.254.169.254/latest/meta-data/": "destination 169.254.169.254:80 refused by policy",
		"http://127.0.0.2:8080/":                   "destination 127.0.0.2:8080 refused by policy: a loopback address",
		"http://10.1.2.3/":                         "destination 10.1.2.3:80 refused by policy: a private address",
		"file:///etc/passwd":                       `scheme "file"`,
	} {
		to = dest
		_, err = runHTTP(t, New(p), jobs.HTTPRequest{URI: redirector.URL + "/?sig=s3cr3t", Method: "GET"})
		requireRefusal(t, err, "GET "+redirector.URL+"/: ", want)
	}
}

func TestOAuthTokenFromARefusedAuthority(t *testing.T) {
	provider := newIDP(t)
	target := newCountingTarget(t, false, func(w http.ResponseWriter, _ *http.Request) {})
	a := New(egress.Policy{})
	a.Authority = provider.URL
	_, err := runHTTP(t, a, jobs.HTTPRequest{URI: target.URL, Method: "GET", Authentication: oauth("s3cret")})
	requireRefusal(t, err, "get token for client client1 of tenant tenant1 from "+provider.URL+": destination", "a loopback address")
	require.NotContains(t, err.Error(), "s3cret")
	require.Zero(t, provider.issued.Load())
	require.Zero(t, target.conns.Load(), "no token, no call")

	a = New(localPolicy)
	a.Authority = provider.URL
	out, err := runHTTP(t, a, jobs.HTTPRequest{URI: target.URL, Method: "GET", Authentication: oauth("s3cret")})
	require.NoError(t, err, "allowed, the token is fetched and the call made")
	require.Equal(t, http.StatusOK, out.StatusCode)
	require.EqualValues(t, 1, provider.issued.Load())
}

func TestClientCertificateClientIsGuarded(t *testing.T) {
	target := newCountingTarget(t, true, func(w http.ResponseWriter, _ *http.Request) {})
	_, pfx := newPFX(t, "pa55word")
	auth := &jobs.Authentication{Type: jobs.AuthClientCertificate, Pfx: pfx, Password: "pa55word"}
	client := func(p egress.Policy) *Activities {
		c := p.Client()
		// Trust the target's certificate, as target.Client() does.
		c.Transport.(*http.Transport).TLSClientConfig = target.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
		return &Activities{Client: c}
	}

	_, err := runHTTP(t, client(egress.Policy{}), jobs.HTTPRequest{URI: target.URL, Method: "GET", Authentication: auth})
	requireRefusal(t, err, "a loopback address")
	require.Zero(t, target.conns.Load())

	out, err := runHTTP(t, client(localPolicy), jobs.HTTPRequest{URI: target.URL, Method: "GET", Authentication: auth})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, out.StatusCode)
}

func TestStorageQueueToARefusedEndpoint(t *testing.T) {
	target := newCountingTarget(t, false, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusCreated) })
	a := New(egress.Policy{})
	a.StorageQueueEndpoint = target.URL + "/{account}"
	_, err := runStorageQueue(t, a, jobs.StorageQueueMessage{StorageAccount: "acct", QueueName: "orders", SasToken: "?sv=1&sig=s3cr3t", Message: "m"})
	requireRefusal(t, err, "put message on "+target.URL+"/acct/orders: destination", "a loopback address")
	require.Zero(t, target.conns.Load())
}

func TestServiceBusToARefusedEndpoint(t *testing.T) {
	sb := servicebusfake.Start(t)
	sb.AddKey(sbKeyName, sbKey)
	sb.AddEntity("contoso-ns", "orders")
	a := New(egress.Policy{})
	a.ServiceBusEndpoint = sb.Endpoint()
	_, err := runServiceBus(t, a, sbAction(t, false, nil), jobs.MainAction)
	requireRefusal(t, err, "POST ", "/contoso-ns/orders/messages: destination", "a loopback address")
	require.NotContains(t, err.Error(), sbKey)
	require.Empty(t, sb.Messages())
}

// redirectingTargets returns two targets of two origins: first redirects
// to its ?to= URL, and a request to /landed on either sends its headers
// to got.
func redirectingTargets(t *testing.T) (first, other *countingTarget, got chan http.Header) {
	got = make(chan http.Header, 2)
	landing := func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Clone() }
	other = newCountingTarget(t, false, landing)
	first = newCountingTarget(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/landed" {
			landing(w, r)
			return
		}
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusTemporaryRedirect)
	})
	return first, other, got
}

// TestRedirectToAnotherOriginDropsTheJobsSecrets: followed to another
// port of the same host, an HTTP action's redirect carries neither its
// Authorization nor its cookies nor any header the job set, but those
// that only describe the body and the answer wanted; within the origin it
// carries them all.
func TestRedirectToAnotherOriginDropsTheJobsSecrets(t *testing.T) {
	first, other, got := redirectingTargets(t)
	request := func(to string) jobs.HTTPRequest {
		return jobs.HTTPRequest{URI: first.URL + "/?to=" + to, Method: "POST", Body: "{}",
			Headers:        map[string]string{"X-Api-Key": "k3y", "Cookie": "session=s3ss", "Content-Type": "application/json", "Accept": "application/json"},
			Authentication: &jobs.Authentication{Type: jobs.AuthBasic, Username: "u", Password: "pa55word"}}
	}

	_, err := runHTTP(t, New(localPolicy), request(other.URL+"/landed"))
	require.NoError(t, err)
	h := <-got
	for _, name := range []string{"Authorization", "X-Api-Key", "Cookie"} {
		require.Empty(t, h.Get(name), "%s went to another origin", name)
	}
	require.Equal(t, "application/json", h.Get("Content-Type"))
	require.Equal(t, "application/json", h.Get("Accept"))
	require.Equal(t, "job:s/rg/c/j@2026-01-01T00:00:00Z", h.Get(HeaderIdempotencyKey), "recur's own headers are no secret")

	_, err = runHTTP(t, New(localPolicy), request(first.URL+"/landed"))
	require.NoError(t, err)
	h = <-got
	require.Equal(t, "k3y", h.Get("X-Api-Key"), "within the origin")
	require.Equal(t, "session=s3ss", h.Get("Cookie"))
	require.NotEmpty(t, h.Get("Authorization"))
}
