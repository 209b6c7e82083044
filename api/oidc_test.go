package api

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
)

const testAudience = "api://recur"

// issuer is a real OpenID Connect issuer on a local TLS server: discovery
// document and key set, with keys generated for the test.
type issuer struct {
	srv       *httptest.Server
	rsaKey    *rsa.PrivateKey
	ecKey     *ecdsa.PrivateKey
	jwksGets  atomic.Int32
	mu        sync.Mutex
	published []map[string]string
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	is := &issuer{rsaKey: rsaKey, ecKey: ecKey}
	is.publish(rsaJWK("rsa-1", &rsaKey.PublicKey), ecJWK("ec-1", &ecKey.PublicKey))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/keys"})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		is.jwksGets.Add(1)
		is.mu.Lock()
		defer is.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": is.published})
	})
	is.srv = httptest.NewTLSServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) publish(keys ...map[string]string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.published = keys
}

func rsaJWK(kid string, k *rsa.PublicKey) map[string]string {
	return map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
		"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
}

func ecJWK(kid string, k *ecdsa.PublicKey) map[string]string {
	raw, err := k.Bytes() // 0x04 || x || y
	if err != nil {
		panic(err)
	}
	return map[string]string{"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(raw[1:33]), "y": b64(raw[33:])}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// claims are valid claims for the test issuer, for sub-a.
func (is *issuer) claims() jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{"iss": is.srv.URL, "aud": []string{"other-api", testAudience}, "sub": "alice",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(), "subscriptions": []string{"sub-a"}}
}

func sign(t *testing.T, method jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

func (is *issuer) oidc(t *testing.T) *OIDC {
	t.Helper()
	o, err := NewOIDC(OIDCConfig{Issuer: is.srv.URL, Audience: testAudience, HTTPClient: is.srv.Client()})
	require.NoError(t, err)
	return o
}

func TestOIDCTokens(t *testing.T) {
	is := newIssuer(t)
	o := is.oidc(t)
	with := func(change func(jwt.MapClaims)) jwt.MapClaims {
		c := is.claims()
		change(c)
		return c
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&is.rsaKey.PublicKey)
	require.NoError(t, err)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	valid := sign(t, jwt.SigningMethodRS256, "rsa-1", is.rsaKey, is.claims())
	parts := strings.Split(valid, ".")
	tampered := parts[0] + "." + b64([]byte(strings.Replace(mustB64Decode(t, parts[1]), `"sub-a"`, `"*"`, 1))) + "." + parts[2]
	none := b64([]byte(`{"alg":"none","typ":"JWT","kid":"rsa-1"}`)) + "." + parts[1] + "."

	for _, tc := range []struct {
		name, token string
		want        []string // subscriptions; nil: refused
	}{
		{"RS256", valid, []string{"sub-a"}},
		{"ES256", sign(t, jwt.SigningMethodES256, "ec-1", is.ecKey, is.claims()), []string{"sub-a"}},
		{"subscriptions as one string", sign(t, jwt.SigningMethodES256, "ec-1", is.ecKey, with(func(c jwt.MapClaims) { c["subscriptions"] = "*" })), []string{"*"}},
		{"audience as one string", sign(t, jwt.SigningMethodRS256, "rsa-1", is.rsaKey, with(func(c jwt.MapClaims) { c["aud"] = testAudience })), []string{"sub-a"}},
		{"expired", sign(t, jwt.SigningMethodRS256, "rsa-1", is.rsaKey, with(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Minute).Unix() })), nil},
		{"expired within leeway", sign(t, jwt.SigningMethodRS256, "rsa-1", is.rsaKey, with(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-10 * time.Second).Unix() })), []string{"sub-a"}},
		{"no exp", sign(t, jwt.SigningMethodRS256, "rsa-1", is.rsaKey, with(func(c jwt.MapClaims) { delete(c, "exp") })), nil},
		{"not yet valid", sign(t, jwt.SigningMethodRS256, "rsa-1", is.rsaKey, with(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(5 * time.Minute).Unix() })), nil},
		{"wrong audience", sign(t, jwt.SigningMethodRS256, "rsa-1", is.rsaKey, with(func(c jwt.MapClaims) { c["aud"] = "api://other" })), nil},
		{"wrong issuer", sign(t, jwt.SigningMethodRS256, "rsa-1", is.rsaKey, with(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })), nil},
		{"no subscriptions claim", sign(t, jwt.SigningMethodRS256, "rsa-1", is.rsaKey, with(func(c jwt.MapClaims) { delete(c, "subscriptions") })), nil},
		{"empty subscriptions claim", sign(t, jwt.SigningMethodRS256, "rsa-1", is.rsaKey, with(func(c jwt.MapClaims) { c["subscriptions"] = []string{} })), nil},
		{"unknown kid", sign(t, jwt.SigningMethodRS256, "rsa-2", is.rsaKey, is.claims()), nil},
		{"signed by another key", sign(t, jwt.SigningMethodRS256, "rsa-1", mustRSA(t), is.claims()), nil},
		{"ES256 naming the RSA key", sign(t, jwt.SigningMethodES256, "rsa-1", is.ecKey, is.claims()), nil},
		{"alg none", none, nil},
		{"HS256 with the public key as secret", sign(t, jwt.SigningMethodHS256, "rsa-1", pubPEM, is.claims()), nil},
		{"HS256 with the JWK modulus as secret", sign(t, jwt.SigningMethodHS256, "rsa-1", is.rsaKey.N.Bytes(), is.claims()), nil},
		{"tampered payload", tampered, nil},
		{"not a JWT", "abc.def", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := o.Authenticate(context.Background(), tc.token)
			if tc.want == nil {
				require.Error(t, err)
				require.NotErrorIs(t, err, ErrAuthUnavailable)
				return
			}
			require.NoError(t, err)
			require.Equal(t, Principal{Name: "oidc:alice", Subscriptions: tc.want}, p)
		})
	}
	require.Equal(t, int32(1), is.jwksGets.Load(), "one fetch: the unknown kid came within a minute of it")
}

func mustRSA(t *testing.T) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return k
}

func mustB64Decode(t *testing.T, s string) string {
	b, err := base64.RawURLEncoding.DecodeString(s)
	require.NoError(t, err)
	return string(b)
}

// TestOIDCKeyRotation: a key the issuer publishes later is fetched when a
// token names it, at most once a minute however many tokens ask.
func TestOIDCKeyRotation(t *testing.T) {
	is := newIssuer(t)
	o := is.oidc(t)
	now := time.Now()
	o.now = func() time.Time { return now }
	require.NoError(t, o.Refresh(context.Background()))
	require.Equal(t, int32(1), is.jwksGets.Load())

	newKey := mustRSA(t)
	is.publish(rsaJWK("rsa-2", &newKey.PublicKey))
	token := sign(t, jwt.SigningMethodRS256, "rsa-2", newKey, is.claims())
	for range 20 {
		_, err := o.Authenticate(context.Background(), token)
		require.ErrorContains(t, err, `unknown key ID "rsa-2"`)
	}
	require.Equal(t, int32(1), is.jwksGets.Load(), "refreshes are throttled")

	now = now.Add(jwksMinRefresh)
	p, err := o.Authenticate(context.Background(), token)
	require.NoError(t, err)
	require.Equal(t, "oidc:alice", p.Name)
	require.Equal(t, int32(2), is.jwksGets.Load())

	// The old key left the set: once the set is an hour old it is
	// fetched again, and the old key's tokens stop working.
	old := sign(t, jwt.SigningMethodRS256, "rsa-1", is.rsaKey, is.claims())
	_, err = o.Authenticate(context.Background(), old)
	require.Error(t, err)
	now = now.Add(jwksMaxAge)
	is.publish(rsaJWK("rsa-2", &newKey.PublicKey), rsaJWK("rsa-3", &mustRSA(t).PublicKey))
	later := is.claims()
	later["exp"] = now.Add(time.Hour).Unix()
	_, err = o.Authenticate(context.Background(), sign(t, jwt.SigningMethodRS256, "rsa-2", newKey, later))
	require.NoError(t, err)
	require.Equal(t, int32(3), is.jwksGets.Load())
}

func TestOIDCIssuerUnreachable(t *testing.T) {
	is := newIssuer(t)
	o := is.oidc(t)
	token := sign(t, jwt.SigningMethodRS256, "rsa-1", is.rsaKey, is.claims())
	is.srv.Close()
	_, err := o.Authenticate(context.Background(), token)
	require.ErrorIs(t, err, ErrAuthUnavailable, "never fetched: the token cannot be checked, which is not its fault")

	// Through the API: 503, not 401.
	rec := serveWith(t, Options{Auth: o}, http.MethodGet,
		"/subscriptions/sub-a/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c", token, "")
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
}

func TestOIDCDiscoveryMustNameTheIssuer(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": "https://elsewhere.example", "jwks_uri": "https://elsewhere.example/keys"})
	}))
	defer srv.Close()
	o, err := NewOIDC(OIDCConfig{Issuer: srv.URL, Audience: testAudience, HTTPClient: srv.Client()})
	require.NoError(t, err)
	require.ErrorContains(t, o.Refresh(context.Background()), `names issuer "https://elsewhere.example"`)
}

func TestNewOIDCChecksItsConfig(t *testing.T) {
	for cfg, want := range map[OIDCConfig]string{
		{Issuer: "http://idp.example", Audience: "a"}:     "must be an https URL",
		{Issuer: "idp.example", Audience: "a"}:            "not an absolute URL",
		{Issuer: "https://idp.example"}:                   "audience is required",
		{Issuer: "http://127.0.0.1:5556/dex"}:             "audience is required", // http on loopback is fine
		{Issuer: "http://localhost:8080/realms/r"}:        "audience is required",
		{Issuer: "ftp://idp.example/x", Audience: "a"}:    "must be an https URL",
		{Issuer: "https:///no-host", Audience: "a"}:       "not an absolute URL",
		{Issuer: "http://[::1]:5556/dex", Audience: "aa"}: "",
	} {
		_, err := NewOIDC(cfg)
		if want == "" {
			require.NoError(t, err)
			continue
		}
		require.ErrorContains(t, err, want, cfg.Issuer)
	}
}

// TestOIDCThroughTheAPI: a JWT reaches its subscriptions and only those.
func TestOIDCThroughTheAPI(t *testing.T) {
	is := newIssuer(t)
	opts := Options{Auth: Authenticators{testTokens(t), is.oidc(t)}}
	token := sign(t, jwt.SigningMethodES256, "ec-1", is.ecKey, is.claims())
	path := "/subscriptions/%s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
	rec := serveWith(t, opts, http.MethodGet, strings.Replace(path, "%s", "sub-a", 1), token, "")
	require.Equal(t, http.StatusBadRequest, rec.Code, "authenticated; then the api-version is missing: %s", rec.Body)
	rec = serveWith(t, opts, http.MethodGet, strings.Replace(path, "%s", "sub-b", 1), token, "")
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	rec = serveWith(t, opts, http.MethodGet, strings.Replace(path, "%s", "sub-a", 1), token+"x", "")
	require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
}

// TestOIDCConcurrentFirstUse: many requests at once on a cold cache fetch
// the keys once.
func TestOIDCConcurrentFirstUse(t *testing.T) {
	is := newIssuer(t)
	o := is.oidc(t)
	good := sign(t, jwt.SigningMethodRS256, "rsa-1", is.rsaKey, is.claims())
	unknown := sign(t, jwt.SigningMethodRS256, "rsa-9", is.rsaKey, is.claims())
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			token := good
			if i%2 == 1 {
				token = unknown
			}
			_, err := o.Authenticate(context.Background(), token)
			if token == good {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, int32(1), is.jwksGets.Load())
}
