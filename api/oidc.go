package api

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// OIDC defaults.
const (
	// DefaultSubscriptionsClaim is the JWT claim listing a token's
	// subscriptions.
	DefaultSubscriptionsClaim = "subscriptions"
	// jwtLeeway absorbs clock skew between recur and the issuer.
	jwtLeeway = 30 * time.Second
	// jwksMinRefresh is the least time between two fetches of the key
	// set: tokens with made-up key IDs cannot make recur hammer the
	// issuer.
	jwksMinRefresh = time.Minute
	// jwksMaxAge is how long a fetched key set is used before it is
	// fetched again, so that keys the issuer removed stop working.
	jwksMaxAge = time.Hour
	// maxOIDCDocument bounds the discovery document and the key set.
	maxOIDCDocument = 1 << 20
	// minRSABits is the smallest RSA key accepted.
	minRSABits = 2048
)

// jwtAlgorithms are the signature algorithms accepted. Anything else,
// "none" and the HMAC ones in particular, is refused before any key is
// looked at.
var jwtAlgorithms = []string{"RS256", "ES256"}

// OIDCConfig configures the validation of JWTs from an OpenID Connect
// issuer.
type OIDCConfig struct {
	// Issuer is the issuer's URL, the "iss" of its tokens; its discovery
	// document is at Issuer/.well-known/openid-configuration. It must be
	// https, except on a loopback address.
	Issuer string
	// Audience must be among the token's "aud".
	Audience string
	// SubscriptionsClaim names the claim with the token's subscription
	// IDs: an array of strings or one string, "*" for all. Default
	// DefaultSubscriptionsClaim.
	SubscriptionsClaim string
	// HTTPClient fetches the discovery document and the keys; default a
	// client with a 10 s timeout.
	HTTPClient *http.Client
}

// OIDC authenticates JWTs signed by an OpenID Connect issuer's keys (RS256
// or ES256), checking iss, aud, exp, nbf and iat. It fetches the issuer's
// key set on first use, again when a token names a key it does not know
// (at most once a minute) and when the set is an hour old.
type OIDC struct {
	cfg        OIDCConfig
	parser     *jwt.Parser
	now        func() time.Time
	minRefresh time.Duration

	fetchMu sync.Mutex // one fetch at a time

	mu          sync.RWMutex
	jwksURI     string
	keys        map[string]jwk // by key ID
	fetched     time.Time      // of the keys
	lastAttempt time.Time
}

// jwk is a usable public key of the issuer's key set.
type jwk struct {
	key crypto.PublicKey
	alg string // the key's "alg", if it names one
}

// NewOIDC returns an authenticator for cfg's issuer. It fetches nothing;
// Refresh does, and so does the first token.
func NewOIDC(cfg OIDCConfig) (*OIDC, error) {
	if err := checkOIDCURL(cfg.Issuer); err != nil {
		return nil, fmt.Errorf("issuer: %w", err)
	}
	if cfg.Audience == "" {
		return nil, errors.New("an audience is required: without it any token of the issuer would do")
	}
	if cfg.SubscriptionsClaim == "" {
		cfg.SubscriptionsClaim = DefaultSubscriptionsClaim
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	o := &OIDC{cfg: cfg, now: time.Now, minRefresh: jwksMinRefresh}
	o.parser = jwt.NewParser(jwt.WithValidMethods(jwtAlgorithms), jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience), jwt.WithExpirationRequired(), jwt.WithIssuedAt(),
		jwt.WithLeeway(jwtLeeway), jwt.WithTimeFunc(func() time.Time { return o.now() }))
	return o, nil
}

// checkOIDCURL accepts https URLs, and http ones on loopback addresses
// (a local identity provider).
func checkOIDCURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if ip := net.ParseIP(u.Hostname()); u.Hostname() == "localhost" || ip != nil && ip.IsLoopback() {
			return nil
		}
	}
	return fmt.Errorf("%q must be an https URL (http only on loopback)", raw)
}

// Refresh fetches the issuer's discovery document and key set now.
func (o *OIDC) Refresh(ctx context.Context) error {
	o.fetchMu.Lock()
	defer o.fetchMu.Unlock()
	return o.fetch(ctx)
}

// Authenticate implements Authenticator.
func (o *OIDC) Authenticate(ctx context.Context, token string) (Principal, error) {
	claims := jwt.MapClaims{}
	if _, err := o.parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		return o.keyFor(ctx, t)
	}); err != nil {
		return Principal{}, fmt.Errorf("jwt: %w", err)
	}
	subs, err := subscriptionsOf(claims[o.cfg.SubscriptionsClaim])
	if err != nil {
		return Principal{}, fmt.Errorf("jwt claim %q: %w", o.cfg.SubscriptionsClaim, err)
	}
	subject, _ := claims.GetSubject()
	return Principal{Name: "oidc:" + subject, Subscriptions: subs}, nil
}

// subscriptionsOf reads the subscriptions claim: an array of strings or
// one string.
func subscriptionsOf(v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		if v != "" {
			return []string{v}, nil
		}
	case []any:
		subs := make([]string, 0, len(v))
		for _, s := range v {
			str, ok := s.(string)
			if !ok {
				return nil, errors.New("must hold strings only")
			}
			subs = append(subs, str)
		}
		if len(subs) > 0 {
			return subs, nil
		}
	case nil:
		return nil, errors.New("is missing")
	}
	return nil, errors.New("must be a subscription ID or a non-empty array of them")
}

// keyFor returns the key that must have signed t: the one its "kid"
// names, or the only key when it names none.
func (o *OIDC) keyFor(ctx context.Context, t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	k, err := o.lookup(ctx, kid)
	if err != nil {
		return nil, err
	}
	if k.alg != "" && k.alg != t.Method.Alg() {
		return nil, fmt.Errorf("key %q is for %s, not %s", kid, k.alg, t.Method.Alg())
	}
	return k.key, nil
}

// lookup finds a key by ID, fetching the key set when it is unknown or
// the set is old, at most once per minRefresh. While the issuer cannot be
// reached, the keys fetched last stay in use.
func (o *OIDC) lookup(ctx context.Context, kid string) (jwk, error) {
	if k, ok, fresh := o.cached(kid); ok && fresh {
		return k, nil
	}
	o.fetchMu.Lock()
	defer o.fetchMu.Unlock()
	k, ok, fresh := o.cached(kid) // another request may just have fetched
	if ok && fresh {
		return k, nil
	}
	o.mu.RLock()
	throttled, never := o.now().Sub(o.lastAttempt) < o.minRefresh, o.keys == nil
	o.mu.RUnlock()
	if !throttled {
		if err := o.fetch(ctx); err != nil {
			if ok {
				return k, nil
			}
			return jwk{}, fmt.Errorf("%w: %v", ErrAuthUnavailable, err)
		}
		k, ok, _ = o.cached(kid)
	}
	switch {
	case ok:
		return k, nil
	case never:
		return jwk{}, fmt.Errorf("%w: the issuer's keys were never fetched", ErrAuthUnavailable)
	case kid == "":
		return jwk{}, errors.New("the token names no key (kid) and the issuer has several")
	}
	return jwk{}, fmt.Errorf("unknown key ID %q", kid)
}

// cached returns the key kid names (the only key when kid is empty), and
// whether the key set is younger than jwksMaxAge.
func (o *OIDC) cached(kid string) (jwk, bool, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	fresh := o.now().Sub(o.fetched) < jwksMaxAge
	if kid == "" && len(o.keys) == 1 {
		for _, k := range o.keys {
			return k, true, fresh
		}
	}
	k, ok := o.keys[kid]
	return k, ok && kid != "", fresh
}

// fetch reads the discovery document (once) and the key set. The caller
// holds fetchMu.
func (o *OIDC) fetch(ctx context.Context) error {
	o.mu.Lock()
	o.lastAttempt = o.now()
	jwksURI := o.jwksURI
	o.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if jwksURI == "" {
		var doc struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		discovery := strings.TrimSuffix(o.cfg.Issuer, "/") + "/.well-known/openid-configuration"
		if err := o.getJSON(ctx, discovery, &doc); err != nil {
			return err
		}
		if doc.Issuer != o.cfg.Issuer {
			return fmt.Errorf("discovery document names issuer %q, not %q", doc.Issuer, o.cfg.Issuer)
		}
		if err := checkOIDCURL(doc.JWKSURI); err != nil {
			return fmt.Errorf("jwks_uri: %w", err)
		}
		jwksURI = doc.JWKSURI
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := o.getJSON(ctx, jwksURI, &set); err != nil {
		return err
	}
	keys := map[string]jwk{}
	for _, raw := range set.Keys {
		if kid, k, ok := parseJWK(raw); ok {
			keys[kid] = k
		}
	}
	if len(keys) == 0 {
		return fmt.Errorf("%s holds no RSA (2048 bits or more) or P-256 signing key", jwksURI)
	}
	o.mu.Lock()
	o.jwksURI, o.keys, o.fetched = jwksURI, keys, o.now()
	o.mu.Unlock()
	return nil
}

func (o *OIDC) getJSON(ctx context.Context, url string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := o.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: status %d", url, resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxOIDCDocument+1))
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	if len(data) > maxOIDCDocument {
		return fmt.Errorf("get %s: larger than %d bytes", url, maxOIDCDocument)
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	return nil
}

// parseJWK reads one key of a key set (RFC 7517, 7518). Keys recur cannot
// use (encryption keys, other types and curves, short RSA keys) are
// skipped.
func parseJWK(raw json.RawMessage) (string, jwk, bool) {
	var k struct {
		Kty, Kid, Use, Alg, Crv, N, E, X, Y string
	}
	if json.Unmarshal(raw, &k) != nil || k.Use != "" && k.Use != "sig" {
		return "", jwk{}, false
	}
	out := jwk{alg: k.Alg}
	switch k.Kty {
	case "RSA":
		n, errN := b64Int(k.N)
		e, errE := b64Int(k.E)
		if errN != nil || errE != nil || n.BitLen() < minRSABits || !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 {
			return "", jwk{}, false
		}
		out.key = &rsa.PublicKey{N: n, E: int(e.Int64())}
	case "EC":
		x, errX := b64Bytes(k.X)
		y, errY := b64Bytes(k.Y)
		if k.Crv != "P-256" || errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
			return "", jwk{}, false
		}
		key, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return "", jwk{}, false
		}
		out.key = key
	default:
		return "", jwk{}, false
	}
	return k.Kid, out, true
}

func b64Bytes(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

func b64Int(s string) (*big.Int, error) {
	b, err := b64Bytes(s)
	if err != nil || len(b) == 0 {
		return nil, errors.New("bad base64url integer")
	}
	return new(big.Int).SetBytes(b), nil
}
