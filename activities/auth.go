package activities

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/egress"
	"github.com/recurhq/recur/jobs"
)

// DefaultAuthority is the Azure AD authority ActiveDirectoryOAuth tokens
// come from when Activities.Authority is empty.
const DefaultAuthority = "https://login.microsoftonline.com"

// ErrTypeAuthentication is the error type of an attempt whose outbound
// authentication failed (no token, an unusable certificate).
const ErrTypeAuthentication = "Authentication"

// Bounds of the caches: when full, they are emptied (tokens: of the
// stale ones) rather than grown.
const (
	maxCertClients = 256
	maxTokens      = 1024
)

// authError is a failed outbound authentication, retryable when trying
// again may help (no answer, 408, 429, 5xx). Its message quotes no secret.
type authError struct {
	msg       string
	retryable bool
	refused   bool // by the egress policy: the token authority's address
}

func (e *authError) Error() string { return e.msg }

// applicationError is e as the HTTP activity fails with it.
func (e *authError) applicationError(out jobs.HTTPResponse) error {
	if e.refused {
		return temporal.NewNonRetryableApplicationError(e.msg, ErrTypeRefused, nil, out)
	}
	if e.retryable {
		return temporal.NewApplicationError(e.msg, ErrTypeAuthentication, out)
	}
	return temporal.NewNonRetryableApplicationError(e.msg, ErrTypeAuthentication, nil, out)
}

// authenticate applies in.Request.Authentication to req and returns the
// client to send it with: a.client(), or for a client certificate a client
// like it presenting the certificate. The returned secrets are what the response body must not
// echo into history. Errors never quote a secret.
func (a *Activities) authenticate(ctx context.Context, req *http.Request, auth *jobs.Authentication) (*http.Client, []string, *authError) {
	base := a.client()
	if auth == nil {
		return base, nil, nil
	}
	switch auth.Type {
	case jobs.AuthBasic:
		req.SetBasicAuth(auth.Username, auth.Password)
		creds := base64.StdEncoding.EncodeToString([]byte(auth.Username + ":" + auth.Password))
		return base, []string{auth.Password, creds}, nil
	case jobs.AuthClientCertificate:
		c, err := a.certs.client(base, auth)
		if err != nil {
			return nil, nil, &authError{msg: "client certificate: " + err.Error()}
		}
		return c, nil, nil
	case jobs.AuthActiveDirectoryOAuth:
		authority := a.Authority
		if authority == "" {
			authority = DefaultAuthority
		}
		token, err := a.tokens.get(ctx, base, authority, auth)
		if err != nil {
			// The authority's words (its error, its status line) may echo
			// the secret.
			err.msg = redactSecrets(err.msg, []string{auth.Secret})
			return nil, nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		return base, []string{auth.Secret, token}, nil
	}
	return nil, nil, &authError{msg: fmt.Sprintf("authentication type %q is not supported", auth.Type)}
}

// secretKey is a cache key for credentials: a digest, so that the caches
// hold no secret in their keys, and one over the secrets too, so that a
// job can never borrow a token or a certificate another job's secret got.
func secretKey(parts ...string) [sha256.Size]byte {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// certClients are HTTP clients presenting a client certificate, one per
// PFX and password: decoding once, and reusing connections.
type certClients struct {
	mu      sync.Mutex
	clients map[[sha256.Size]byte]*http.Client
}

// client returns a client like base that presents auth's certificate. It
// clones base's transport (its root CAs, timeouts and the egress policy's
// dialer), or the strict egress policy's when base's is not an
// *http.Transport; redirects are checked as base's are.
func (cc *certClients) client(base *http.Client, auth *jobs.Authentication) (*http.Client, error) {
	k := secretKey(auth.Pfx, auth.Password)
	cc.mu.Lock()
	c, ok := cc.clients[k]
	cc.mu.Unlock()
	if ok {
		return c, nil
	}
	cert, err := auth.Certificate()
	if err != nil {
		return nil, err
	}
	t, ok := base.Transport.(*http.Transport)
	if ok {
		t = t.Clone()
	} else {
		t = egress.Policy{}.Transport()
	}
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{}
	}
	t.TLSClientConfig.Certificates = []tls.Certificate{cert}
	t.TLSClientConfig.GetClientCertificate = nil
	c = &http.Client{Transport: t, CheckRedirect: base.CheckRedirect, Jar: base.Jar, Timeout: base.Timeout}

	cc.mu.Lock()
	defer cc.mu.Unlock()
	if old, ok := cc.clients[k]; ok {
		return old, nil // another attempt was quicker
	}
	if cc.clients == nil || len(cc.clients) >= maxCertClients {
		for _, old := range cc.clients {
			old.CloseIdleConnections()
		}
		cc.clients = map[[sha256.Size]byte]*http.Client{}
	}
	cc.clients[k] = c
	return c, nil
}

// tokenCache holds ActiveDirectoryOAuth access tokens until shortly
// before they expire, shared by concurrent attempts: one fetch at a time
// per credential, the others waiting for its token.
type tokenCache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]*tokenEntry
	now     func() time.Time // time.Now; tests move it
}

type tokenEntry struct {
	lock    chan struct{} // held (full) while fetching; waiting can be cancelled
	token   string
	refresh time.Time // fetch a new token from here on
}

func (tc *tokenCache) clock() time.Time {
	if tc.now != nil {
		return tc.now()
	}
	return time.Now()
}

func (tc *tokenCache) entry(k [sha256.Size]byte) *tokenEntry {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if e, ok := tc.entries[k]; ok {
		return e
	}
	if tc.entries == nil {
		tc.entries = map[[sha256.Size]byte]*tokenEntry{}
	}
	if len(tc.entries) >= maxTokens {
		now := tc.clock()
		for old, e := range tc.entries {
			if !now.Before(e.refresh) {
				delete(tc.entries, old)
			}
		}
	}
	e := &tokenEntry{lock: make(chan struct{}, 1)}
	tc.entries[k] = e
	return e
}

// get returns a valid access token for auth, fetching one from authority
// when the cached one is missing or about to expire.
func (tc *tokenCache) get(ctx context.Context, client *http.Client, authority string, auth *jobs.Authentication) (string, *authError) {
	e := tc.entry(secretKey(authority, auth.Tenant, auth.ClientID, auth.Audience, auth.Secret))
	select {
	case e.lock <- struct{}{}:
	case <-ctx.Done():
		return "", &authError{msg: "wait for an access token: " + ctx.Err().Error(), retryable: true}
	}
	defer func() { <-e.lock }()
	now := tc.clock()
	if e.token != "" && now.Before(e.refresh) {
		return e.token, nil
	}
	token, lifetime, err := fetchToken(ctx, client, authority, auth)
	if err != nil {
		return "", err
	}
	// Refresh a tenth of the lifetime early, at most five minutes.
	e.token, e.refresh = token, now.Add(lifetime-min(lifetime/10, 5*time.Minute))
	return token, nil
}

// tokenResponse is the authority's answer. The v1 endpoint writes its
// numbers as strings.
type tokenResponse struct {
	AccessToken string      `json:"access_token"`
	TokenType   string      `json:"token_type"`
	ExpiresIn   jsonSeconds `json:"expires_in"`
	Error       string      `json:"error"`
}

// jsonSeconds is a number of seconds written as a number or a string.
type jsonSeconds int64

func (s *jsonSeconds) UnmarshalJSON(b []byte) error {
	n, err := strconv.ParseInt(string(bytes.Trim(b, `"`)), 10, 64)
	if err != nil {
		return fmt.Errorf("expires_in is not a number of seconds")
	}
	*s = jsonSeconds(n)
	return nil
}

// fetchToken gets a client-credentials token (Azure AD v1: resource is
// the audience) and its lifetime.
func fetchToken(ctx context.Context, client *http.Client, authority string, auth *jobs.Authentication) (string, time.Duration, *authError) {
	endpoint := strings.TrimRight(authority, "/") + "/" + url.PathEscape(auth.Tenant) + "/oauth2/token"
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {auth.ClientID},
		"client_secret": {auth.Secret},
		"resource":      {auth.Audience},
	}
	what := fmt.Sprintf("get token for client %s of tenant %s from %s", auth.ClientID, auth.Tenant, redactURL(authority))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, &authError{msg: what + ": " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if refused := egress.AsRefused(err); refused != nil {
		return "", 0, &authError{msg: what + ": " + refused.Error(), refused: true}
	}
	if err != nil {
		err = withoutURL(err)
		return "", 0, &authError{msg: what + ": " + err.Error(), retryable: true}
	}
	defer resp.Body.Close()
	var tr tokenResponse
	decodeErr := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&tr)
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		msg := what + ": " + resp.Status
		if tr.Error != "" {
			msg += " (" + tr.Error + ")"
		}
		return "", 0, &authError{msg: msg, retryable: retryableStatus(resp.StatusCode)}
	case decodeErr != nil:
		return "", 0, &authError{msg: what + ": unreadable answer: " + decodeErr.Error(), retryable: true}
	case tr.AccessToken == "" || (tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "Bearer")):
		return "", 0, &authError{msg: what + ": the answer holds no bearer token", retryable: true}
	}
	return tr.AccessToken, time.Duration(tr.ExpiresIn) * time.Second, nil
}
