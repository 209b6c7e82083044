package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
)

// AllSubscriptions in a principal's subscriptions grants every
// subscription, and the operator routes (/codec).
const AllSubscriptions = "*"

// Principal is who a request comes from, as its bearer token says.
type Principal struct {
	// Name identifies the principal in logs: a token's name, or the
	// issuer's subject of a JWT. It is never the token itself.
	Name string
	// Subscriptions are the subscription IDs the principal may reach;
	// AllSubscriptions among them grants all.
	Subscriptions []string
}

// Allows reports whether p may reach the subscription. Subscription IDs
// compare exactly, as recur stores them.
func (p Principal) Allows(subscription string) bool {
	return p.Operator() || slices.Contains(p.Subscriptions, subscription)
}

// Operator reports whether p may reach every subscription.
func (p Principal) Operator() bool { return slices.Contains(p.Subscriptions, AllSubscriptions) }

// Authenticator checks a bearer token and says whose it is.
type Authenticator interface {
	// Authenticate returns the token's principal, or an error when the
	// token is not valid. An error that wraps ErrAuthUnavailable says the
	// token could not be checked (the issuer is unreachable), not that it
	// is bad.
	Authenticate(ctx context.Context, token string) (Principal, error)
}

// ErrAuthUnavailable wraps errors of an Authenticator that could not check
// a token: the API answers 503, not 401.
var ErrAuthUnavailable = errors.New("token validation is unavailable")

// Authenticators tries each authenticator in turn; the first that accepts
// the token wins.
type Authenticators []Authenticator

// Authenticate implements Authenticator.
func (as Authenticators) Authenticate(ctx context.Context, token string) (Principal, error) {
	var errs []error
	for _, a := range as {
		p, err := a.Authenticate(ctx, token)
		if err == nil {
			return p, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return Principal{}, errors.New("no authenticator is configured")
	}
	return Principal{}, errors.Join(errs...)
}

// keyPrincipal is where the authenticated principal is kept in a request's
// context.
const keyPrincipal = "recur.principal"

// principalOf returns the request's principal, if it was authenticated.
func principalOf(c *gin.Context) (Principal, bool) {
	p, ok := c.Get(keyPrincipal)
	if !ok {
		return Principal{}, false
	}
	principal, ok := p.(Principal)
	return principal, ok
}

// authenticate lets a request through when its bearer token is valid and
// its path's subscription, if it has one, is the principal's. Without an
// Authenticator every request passes: the API is open.
//
// A valid token for another subscription gets ARM's own answer to a
// subscription the caller cannot see: 404 SubscriptionNotFound, the same
// whether or not the resource exists, so that nothing of another tenant,
// not even the existence of a name, can be learnt.
func (s *Server) authenticate(c *gin.Context) {
	if s.auth == nil {
		c.Next()
		return
	}
	p, ok := s.principal(c)
	if !ok {
		return
	}
	if sub := c.Param("subscriptionId"); sub != "" && !p.Allows(sub) {
		s.logRefusal(c.Request.Context(), "request for another subscription refused", "principal", p.Name,
			"subscription", sub, "method", c.Request.Method, "path", c.Request.URL.Path)
		abort(c, http.StatusNotFound, "SubscriptionNotFound",
			fmt.Sprintf("The subscription '%s' could not be found.", sub))
		return
	}
	c.Next()
}

// operatorOnly lets through requests whose principal may reach every
// subscription (the codec endpoints decode any tenant's payloads). CORS
// preflights carry no credentials and no data, so they pass. Without an
// Authenticator every request passes.
func (s *Server) operatorOnly(c *gin.Context) {
	if s.auth == nil || c.Request.Method == http.MethodOptions {
		c.Next()
		return
	}
	p, ok := s.principal(c)
	if !ok {
		return
	}
	if !p.Operator() {
		s.logRefusal(c.Request.Context(), "operator route refused", "principal", p.Name, "path", c.Request.URL.Path)
		abort(c, http.StatusForbidden, "AuthorizationFailed",
			"this route needs a token that grants all subscriptions (\"*\")")
		return
	}
	c.Next()
}

// principal authenticates the request's bearer token and keeps its
// principal in the context; otherwise it answers 401 (or 503 when the
// token could not be checked) and reports false.
func (s *Server) principal(c *gin.Context) (Principal, bool) {
	token, ok := bearerToken(c.GetHeader("Authorization"))
	if !ok {
		unauthorized(c, `Bearer realm="recur"`,
			"the request needs an Authorization header with a bearer token")
		return Principal{}, false
	}
	p, err := s.auth.Authenticate(c.Request.Context(), token)
	if errors.Is(err, ErrAuthUnavailable) {
		s.log.WarnContext(c.Request.Context(), "bearer token could not be checked", "error", err)
		c.Header("Retry-After", retryAfterSeconds)
		abort(c, http.StatusServiceUnavailable, "ServiceUnavailable",
			"the bearer token could not be checked; try again later")
		return Principal{}, false
	}
	if err != nil {
		// The error describes the token (expired, wrong audience), never
		// holds it.
		s.logRefusal(c.Request.Context(), "bearer token refused", "error", err, "remote", c.ClientIP(),
			"method", c.Request.Method, "path", c.Request.URL.Path)
		unauthorized(c, `Bearer realm="recur", error="invalid_token"`,
			"the bearer token is not valid (unknown, expired or not meant for this API)")
		return Principal{}, false
	}
	c.Set(keyPrincipal, p)
	return p, true
}

func unauthorized(c *gin.Context, challenge, message string) {
	c.Header("WWW-Authenticate", challenge)
	abort(c, http.StatusUnauthorized, "AuthenticationFailed", message)
}

// bearerToken returns the token of an "Authorization: Bearer <token>"
// header; the scheme is case-insensitive (RFC 7235).
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
