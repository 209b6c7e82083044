package activities

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/recurhq/recur/jobs"
)

// runHTTP runs the HTTP activity of a on request as a worker would.
func runHTTP(t *testing.T, a *Activities, request jobs.HTTPRequest) (jobs.HTTPResponse, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	val, err := env.ExecuteActivity(a.HTTP, jobs.HTTPRequestInput{
		ActionName: jobs.MainAction, Request: request, OccurrenceID: "job:s/rg/c/j@2026-01-01T00:00:00Z",
		Key: jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}, Timeout: 10 * time.Second,
	})
	var out jobs.HTTPResponse
	if err == nil {
		require.NoError(t, val.Get(&out))
	}
	return out, err
}

// echo is a target answering with the Authorization header it got, in
// its body and in a Location header.
func echo(t *testing.T, got chan<- *http.Request) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		w.Header().Set("Location", "/seen/"+r.Header.Get("Authorization"))
		_, _ = fmt.Fprintf(w, "you sent %s", r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestBasicAuthenticationHeader(t *testing.T) {
	got := make(chan *http.Request, 1)
	target := echo(t, got)
	out, err := runHTTP(t, &Activities{Client: target.Client()}, jobs.HTTPRequest{URI: target.URL, Method: "GET",
		Headers:        map[string]string{"Authorization": "Bearer from-headers"},
		Authentication: &jobs.Authentication{Type: jobs.AuthBasic, Username: "user1", Password: "pa55word"}})
	require.NoError(t, err)
	r := <-got
	user, pass, ok := r.BasicAuth()
	require.True(t, ok, "authentication wins over a header: %q", r.Header.Get("Authorization"))
	require.Equal(t, "user1", user)
	require.Equal(t, "pa55word", pass)

	creds := base64.StdEncoding.EncodeToString([]byte("user1:pa55word"))
	require.Equal(t, "you sent Basic [redacted]", out.Body, "history never keeps the credentials a target echoes")
	require.NotContains(t, out.Body, creds)
	require.Contains(t, out.Headers, "Location: /seen/Basic [redacted]", "nor in the headers it keeps")
}

// newPFX returns a new self-signed client certificate and its PFX, base64.
func newPFX(t *testing.T, password string) (*x509.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "recur client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pfx, err := pkcs12.Modern.Encode(key, cert, nil, password)
	require.NoError(t, err)
	return cert, base64.StdEncoding.EncodeToString(pfx)
}

func fingerprint(c *x509.Certificate) string {
	sum := sha1.Sum(c.Raw)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

func TestClientCertificatePresented(t *testing.T) {
	peers := make(chan string, 4)
	target := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peers <- fingerprint(r.TLS.PeerCertificates[0])
	}))
	target.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	target.StartTLS()
	t.Cleanup(target.Close)
	// target.Client trusts the target's certificate; the activity keeps that.
	a := &Activities{Client: target.Client()}

	_, err := runHTTP(t, a, jobs.HTTPRequest{URI: target.URL, Method: "GET"})
	require.Error(t, err, "the target refuses a client without a certificate")

	cert, pfx := newPFX(t, "pfx-pa55")
	auth := &jobs.Authentication{Type: jobs.AuthClientCertificate, Pfx: pfx, Password: "pfx-pa55"}
	for range 2 {
		out, err := runHTTP(t, a, jobs.HTTPRequest{URI: target.URL, Method: "GET", Authentication: auth})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, out.StatusCode)
		require.Equal(t, fingerprint(cert), <-peers)
	}
	require.Len(t, a.certs.clients, 1, "one client per certificate")

	bad := &jobs.Authentication{Type: jobs.AuthClientCertificate, Pfx: pfx, Password: "wrong-pa55"}
	_, err = runHTTP(t, a, jobs.HTTPRequest{URI: target.URL, Method: "GET", Authentication: bad})
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	require.Equal(t, ErrTypeAuthentication, appErr.Type())
	require.True(t, appErr.NonRetryable())
	require.NotContains(t, err.Error(), "wrong-pa55")
}

// idp is a local Azure AD token endpoint: it counts the tokens it issues
// and checks the client-credentials form.
type idp struct {
	*httptest.Server
	issued    atomic.Int32
	lifetime  string // expires_in, as the v1 endpoint writes it
	failFirst bool   // the first request answers 401 invalid_client
}

func newIDP(t *testing.T) *idp {
	p := &idp{lifetime: "3600"}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/tenant1/oauth2/token" || r.PostForm.Get("grant_type") != "client_credentials" ||
			r.PostForm.Get("client_id") != "client1" || r.PostForm.Get("resource") != "https://api.example/" ||
			r.PostForm.Get("client_secret") != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided."}`)
			return
		}
		n := p.issued.Add(1)
		_, _ = fmt.Fprintf(w, `{"token_type":"Bearer","expires_in":%q,"ext_expires_in":"3600","resource":"https://api.example/","access_token":"tok-%d"}`, p.lifetime, n)
	}))
	t.Cleanup(p.Close)
	return p
}

func oauth(secret string) *jobs.Authentication {
	return &jobs.Authentication{Type: jobs.AuthActiveDirectoryOAuth, Tenant: "tenant1",
		Audience: "https://api.example/", ClientID: "client1", Secret: secret}
}

func TestOAuthTokenCachedAndRefreshed(t *testing.T) {
	provider := newIDP(t)
	got := make(chan *http.Request, 4)
	target := echo(t, got)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := &Activities{Client: http.DefaultClient, Authority: provider.URL}
	a.tokens.now = func() time.Time { return now }
	call := func() string {
		t.Helper()
		out, err := runHTTP(t, a, jobs.HTTPRequest{URI: target.URL, Method: "POST", Authentication: oauth("s3cret")})
		require.NoError(t, err)
		require.Equal(t, "you sent Bearer [redacted]", out.Body)
		return (<-got).Header.Get("Authorization")
	}

	require.Equal(t, "Bearer tok-1", call())
	now = now.Add(30 * time.Minute)
	require.Equal(t, "Bearer tok-1", call(), "reused while valid")
	require.EqualValues(t, 1, provider.issued.Load())

	now = now.Add(26 * time.Minute) // 4 minutes before expiry: within the margin
	require.Equal(t, "Bearer tok-2", call(), "refreshed shortly before expiry")
	require.EqualValues(t, 2, provider.issued.Load())
}

func TestOAuthTokenSharedByConcurrentAttempts(t *testing.T) {
	provider := newIDP(t)
	a := &Activities{Client: http.DefaultClient, Authority: provider.URL}
	var wg sync.WaitGroup
	tokens := make([]string, 20)
	for i := range tokens {
		wg.Go(func() {
			tok, err := a.tokens.get(context.Background(), a.Client, a.Authority, oauth("s3cret"))
			if err == nil {
				tokens[i] = tok
			}
		})
	}
	wg.Wait()
	for _, tok := range tokens {
		require.Equal(t, "tok-1", tok)
	}
	require.EqualValues(t, 1, provider.issued.Load())
}

func TestOAuthTokenIsNeverBorrowedWithAnotherSecret(t *testing.T) {
	provider := newIDP(t)
	a := &Activities{Client: http.DefaultClient, Authority: provider.URL}
	_, authErr := a.tokens.get(context.Background(), a.Client, a.Authority, oauth("s3cret"))
	require.Nil(t, authErr)

	got := make(chan *http.Request, 1)
	target := echo(t, got)
	_, err := runHTTP(t, a, jobs.HTTPRequest{URI: target.URL, Method: "GET", Authentication: oauth("guessed-s3cret")})
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	require.Equal(t, ErrTypeAuthentication, appErr.Type())
	require.True(t, appErr.NonRetryable(), "invalid_client will not get better")
	require.Contains(t, appErr.Message(), "401")
	require.Contains(t, appErr.Message(), "invalid_client")
	require.NotContains(t, err.Error(), "guessed-s3cret")
	require.Empty(t, got, "the target is not called without a token")
}

func TestOAuthTokenEndpointDownIsRetryable(t *testing.T) {
	provider := newIDP(t)
	provider.Close()
	_, err := runHTTP(t, &Activities{Client: http.DefaultClient, Authority: provider.URL},
		jobs.HTTPRequest{URI: "http://127.0.0.1:1", Method: "GET", Authentication: oauth("s3cret")})
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	require.Equal(t, ErrTypeAuthentication, appErr.Type())
	require.False(t, appErr.NonRetryable())
	require.NotContains(t, err.Error(), "s3cret")
}

// TestUserinfoIsRedactedLikeBasicAuthentication: a job stored before
// URIs with user info were refused still runs, and what the target
// echoes of the credentials Go's client sends for it (the Basic header,
// its password, a token in the user name) never reaches history.
func TestUserinfoIsRedactedLikeBasicAuthentication(t *testing.T) {
	for _, tc := range []struct{ userinfo, user, pass string }{
		{"alice:s3cretpw", "alice", "s3cretpw"},
		{"tok3nvalue", "tok3nvalue", ""},
	} {
		got := make(chan *http.Request, 1)
		target := echoAll(t, got)
		uri := strings.Replace(target.URL, "://", "://"+tc.userinfo+"@", 1) + "/x"
		out, err := runHTTP(t, &Activities{Client: target.Client()}, jobs.HTTPRequest{URI: uri, Method: "GET"})
		require.NoError(t, err)
		r := <-got
		user, pass, ok := r.BasicAuth()
		require.True(t, ok, "the job runs as it did")
		require.Equal(t, tc.user, user)
		require.Equal(t, tc.pass, pass)
		creds := base64.StdEncoding.EncodeToString([]byte(tc.user + ":" + tc.pass))
		for _, secret := range []string{creds, tc.pass} {
			if secret == "" {
				secret = tc.user // a token
			}
			require.NotContains(t, out.Body, secret, tc.userinfo)
			require.NotContains(t, out.Headers, secret, tc.userinfo)
		}
		require.Contains(t, out.Body, "Basic [redacted]", tc.userinfo)
	}
}

// echoAll is a target answering with the Authorization header and the
// user info of the URL it got, in its body and in a Location header.
func echoAll(t *testing.T, got chan<- *http.Request) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		user, pass, _ := r.BasicAuth()
		w.Header().Set("Location", "/seen/"+r.Header.Get("Authorization"))
		_, _ = fmt.Fprintf(w, "you sent %s, that is %s and %s", r.Header.Get("Authorization"), user, pass)
	}))
	t.Cleanup(srv.Close)
	return srv
}
