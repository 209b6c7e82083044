package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"
)

const (
	tokenA  = "token-of-team-a-0123456789"
	tokenOp = "token-of-operators-0123456789"
)

func testTokens(t *testing.T) *StaticTokens {
	t.Helper()
	digest := sha256.Sum256([]byte(tokenA))
	st, err := ParseTokenFile([]byte(`{"tokens":[
		{"name":"team-a","sha256":"` + hex.EncodeToString(digest[:]) + `","subscriptions":["sub-a"]},
		{"name":"ops","token":"` + tokenOp + `","subscriptions":["*"]}]}`))
	require.NoError(t, err)
	return st
}

// serveWith sends a request to a router with opts; it never reaches
// Temporal (requests that would get there have no api-version).
func serveWith(t *testing.T, opts Options, method, path, token, body string) *httptest.ResponseRecorder {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = discardLogger()
	}
	h := New(nil, opts)
	req := newRequest(method, path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestStaticTokensFileAndList(t *testing.T) {
	st := testTokens(t)
	p, err := st.Authenticate(context.Background(), tokenA)
	require.NoError(t, err)
	require.Equal(t, Principal{Name: "team-a", Subscriptions: []string{"sub-a"}}, p)
	require.True(t, p.Allows("sub-a"))
	require.False(t, p.Allows("sub-b"))
	require.False(t, p.Allows("SUB-A"), "subscription IDs compare exactly, as recur stores them")
	require.False(t, p.Operator())

	p, err = st.Authenticate(context.Background(), tokenOp)
	require.NoError(t, err)
	require.True(t, p.Operator())
	require.True(t, p.Allows("anything"))

	for _, bad := range []string{"", tokenA + "x", tokenA[:len(tokenA)-1], hexDigest(tokenA)} {
		_, err = st.Authenticate(context.Background(), bad)
		require.Error(t, err, "%q", bad)
	}

	list, err := ParseTokenList(" tok-with-padding-abc== = sub-b , sub-c ;operator-token-0123456789=*;")
	require.NoError(t, err)
	p, err = list.Authenticate(context.Background(), "tok-with-padding-abc==")
	require.NoError(t, err, "a token may end in '=', the last '=' splits")
	require.Equal(t, Principal{Name: "env#1", Subscriptions: []string{"sub-b", "sub-c"}}, p)

	all, err := st.Merge(list)
	require.NoError(t, err)
	require.Equal(t, 4, all.Len())
	_, err = all.Merge(list)
	require.ErrorContains(t, err, "used twice")
}

func hexDigest(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}

func TestStaticTokensRefuseBadEntries(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{`{"tokens":[{"token":"0123456789abcdefg","subscriptions":["s"]}]}`, "name is required"},
		{`{"tokens":[{"name":"a","token":"short","subscriptions":["s"]}]}`, "shorter than 16"},
		{`{"tokens":[{"name":"a","sha256":"abcd","subscriptions":["s"]}]}`, "64 hex digits"},
		{`{"tokens":[{"name":"a","token":"0123456789abcdefg","sha256":"` + hexDigest("x") + `","subscriptions":["s"]}]}`, "not both"},
		{`{"tokens":[{"name":"a","subscriptions":["s"]}]}`, "token or sha256 is required"},
		{`{"tokens":[{"name":"a","token":"0123456789abcdefg"}]}`, "subscriptions is required"},
		{`{"tokens":[{"name":"a","token":"0123456789abcdefg","subscriptions":["a/b"]}]}`, `subscription "a/b"`},
		{`{"tokens":[{"name":"a","token":"0123456789abcdefg","subscriptions":["s"]},
			{"name":"a","token":"0123456789abcdefgh","subscriptions":["s"]}]}`, "used twice"},
		{`{"tokens":[{"name":"a","token":"0123456789abcdefg","subscriptions":["s"]},
			{"name":"b","sha256":"` + hexDigest("0123456789abcdefg") + `","subscriptions":["s"]}]}`, "same token"},
		{`{"tokens":[{"name":"a","tokn":"0123456789abcdefg","subscriptions":["s"]}]}`, "unknown field"},
	} {
		_, err := ParseTokenFile([]byte(tc.file))
		require.ErrorContains(t, err, tc.want, tc.file)
	}
	_, err := ParseTokenList("no-equals-sign-0123456789")
	require.ErrorContains(t, err, "env#1")
	_, err = ParseTokenList("0123456789abcdefg=")
	require.ErrorContains(t, err, `subscription ""`)
}

func TestAuthMiddleware(t *testing.T) {
	opts := Options{Namespace: "default", Auth: testTokens(t)}
	coll := "/subscriptions/%s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
	pathIn := func(sub string) string { return strings.Replace(coll, "%s", sub, 1) }

	// Public: probes and the API's description.
	for _, path := range []string{"/healthz", "/openapi.json"} {
		require.Equal(t, http.StatusOK, serveWith(t, opts, http.MethodGet, path, "", "").Code, path)
	}

	for _, tc := range []struct {
		name, method, path, token string
		want                      int
		code                      string
	}{
		{"no token", http.MethodGet, pathIn("sub-a"), "", 401, "AuthenticationFailed"},
		{"wrong token", http.MethodGet, pathIn("sub-a"), "not-a-token-at-all-0123", 401, "AuthenticationFailed"},
		{"no token, subscription list", http.MethodGet, "/subscriptions/sub-a/providers/Microsoft.Scheduler/jobCollections", "", 401, "AuthenticationFailed"},
		{"no token, preview", http.MethodGet, "/recur/v1/subscriptions/sub-a/resourceGroups/rg/jobCollections/c/jobs/j/preview", "", 401, "AuthenticationFailed"},
		{"no token, unsaved preview", http.MethodPost, "/recur/v1/preview", "", 401, "AuthenticationFailed"},
		// Past authentication, the missing api-version is the answer.
		{"own subscription", http.MethodGet, pathIn("sub-a"), tokenA, 400, "MissingApiVersionParameter"},
		{"own subscription, case-folded path", http.MethodDelete, strings.ToUpper(pathIn("sub-a")[:14]) + pathIn("sub-a")[14:] + "/jobs/j", tokenA, 400, "MissingApiVersionParameter"},
		{"other subscription", http.MethodGet, pathIn("sub-b"), tokenA, 404, "SubscriptionNotFound"},
		{"other subscription, PUT", http.MethodPut, pathIn("sub-b") + "/jobs/j?api-version=2016-03-01", tokenA, 404, "SubscriptionNotFound"},
		{"other subscription, list", http.MethodGet, "/subscriptions/sub-b/providers/Microsoft.Scheduler/jobCollections?api-version=2016-03-01", tokenA, 404, "SubscriptionNotFound"},
		{"other subscription, preview", http.MethodGet, "/recur/v1/subscriptions/sub-b/resourceGroups/rg/jobCollections/c/jobs/j/preview", tokenA, 404, "SubscriptionNotFound"},
		{"operator, any subscription", http.MethodGet, pathIn("sub-b"), tokenOp, 400, "MissingApiVersionParameter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serveWith(t, opts, tc.method, tc.path, tc.token, "")
			require.Equal(t, tc.want, rec.Code, rec.Body.String())
			require.Contains(t, rec.Body.String(), `"code":"`+tc.code+`"`)
			if tc.want == http.StatusUnauthorized {
				require.True(t, strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer "), rec.Header())
			}
		})
	}

	body := `{"properties":{"startTime":"2030-01-01T00:00:00Z","recurrence":{"frequency":"Day","interval":1}}}`
	rec := serveWith(t, opts, http.MethodPost, "/recur/v1/preview?count=2", tokenA, body)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	// The scheme is case-insensitive; other schemes are no bearer token.
	h := New(nil, Options{Auth: opts.Auth, Logger: discardLogger()})
	for header, want := range map[string]int{
		"bearer " + tokenA: http.StatusBadRequest,
		"Basic " + tokenA:  http.StatusUnauthorized,
		"Bearer":           http.StatusUnauthorized,
		tokenA:             http.StatusUnauthorized,
	} {
		req := newRequest(http.MethodGet, pathIn("sub-a"), nil)
		req.Header.Set("Authorization", header)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, want, rec.Code, header)
	}
}

func TestOpenAPIWithoutAuthenticator(t *testing.T) {
	rec := serveWith(t, Options{}, http.MethodGet, "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c", "", "")
	require.Equal(t, http.StatusBadRequest, rec.Code, "no Authenticator: the API is open")
	require.Contains(t, rec.Body.String(), "MissingApiVersionParameter")
}

// unavailableAuth cannot check tokens.
type unavailableAuth struct{}

func (unavailableAuth) Authenticate(context.Context, string) (Principal, error) {
	return Principal{}, ErrAuthUnavailable
}

func TestAuthUnavailableIs503(t *testing.T) {
	rec := serveWith(t, Options{Auth: Authenticators{testTokens(t), unavailableAuth{}}}, http.MethodGet,
		"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c", "some-jwt", "")
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Equal(t, retryAfterSeconds, rec.Header().Get("Retry-After"))

	rec = serveWith(t, Options{Auth: Authenticators{unavailableAuth{}, testTokens(t)}}, http.MethodGet,
		"/subscriptions/sub-a/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c", tokenA, "")
	require.Equal(t, http.StatusBadRequest, rec.Code, "a later authenticator that accepts the token wins")
}

func TestOperatorOnly(t *testing.T) {
	s := &Server{auth: testTokens(t), log: discardLogger(), refusals: newSampler()}
	h := ginWith(s.operatorOnly)
	for _, tc := range []struct {
		method, token string
		want          int
	}{
		{http.MethodPost, "", http.StatusUnauthorized},
		{http.MethodPost, tokenA, http.StatusForbidden},
		{http.MethodPost, tokenOp, http.StatusOK},
		{http.MethodOptions, "", http.StatusOK}, // a CORS preflight
	} {
		req := newRequest(tc.method, "/codec/decode", nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, tc.want, rec.Code, "%s %q", tc.method, tc.token)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// ginWith mounts mw before a handler that answers 200, at /codec.
func ginWith(mw gin.HandlerFunc) http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Any("/codec/*path", mw, func(c *gin.Context) { c.Status(http.StatusOK) })
	return r
}
