package api

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"
)

// Request ID headers: every response carries x-ms-request-id, and echoes
// the client's x-ms-client-request-id, as ARM does.
const (
	headerRequestID       = "x-ms-request-id"
	headerClientRequestID = "x-ms-client-request-id"
	headerXRequestID      = "X-Request-Id"
)

// maxRequestIDLen bounds a request ID a client chooses.
const maxRequestIDLen = 128

// requestID gives every request an ID, in the response (x-ms-request-id),
// in its context and so in every log line of it (logRequestIDs). A
// well-formed ID the client sends in x-ms-client-request-id or
// X-Request-Id is kept, so that the client's and recur's logs meet;
// anything else gets a random one, as a header can carry anything into
// a log.
func (s *Server) requestID(c *gin.Context) {
	id := ""
	for _, h := range []string{headerClientRequestID, headerXRequestID} {
		if v := c.GetHeader(h); wellFormedRequestID(v) {
			id = v
			break
		}
	}
	if id == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	c.Set(headerRequestID, id)
	c.Request = c.Request.WithContext(withRequestID(c.Request.Context(), id))
	c.Header(headerRequestID, id)
	if client := c.GetHeader(headerClientRequestID); client != "" && len(client) <= maxRequestIDLen {
		c.Header(headerClientRequestID, client)
	}
	c.Next()
}

// wellFormedRequestID accepts 1 to 128 letters, digits, '-', '_', '.' and
// ':' (GUIDs, ULIDs, trace IDs), nothing that could forge a log line.
func wellFormedRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.', r == ':':
		default:
			return false
		}
	}
	return true
}

// armWords are the fixed segments of the ARM paths. ARM matches them in any
// letter case; Gin's router does not, so foldPath respells them.
var armWords = []string{"subscriptions", "resourceGroups", "providers", "Microsoft.Scheduler",
	"jobCollections", "jobs", "enable", "disable", "operations", "run", "history"}

// Positions of the fixed segments: /subscriptions/{s}/providers/... (a
// subscription's collections) and /subscriptions/{s}/resourceGroups/{rg}/
// providers/Microsoft.Scheduler/jobCollections/{c}/jobs/{j}/run.
var (
	subscriptionLiterals  = map[int]bool{0: true, 2: true, 3: true, 4: true}
	resourceGroupLiterals = map[int]bool{0: true, 2: true, 4: true, 5: true, 6: true, 8: true, 10: true}
)

// foldPath wraps next, keeping escaped slashes in their segments (see
// keepEscapedSlashes) and spelling the ARM path's fixed segments
// canonically.
func foldPath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keepEscapedSlashes(r.URL)
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
		literals := resourceGroupLiterals
		if len(parts) > 2 && strings.EqualFold(parts[2], "providers") {
			literals = subscriptionLiterals
		}
		changed := false
		for i, part := range parts {
			if !literals[i] {
				continue
			}
			for _, word := range armWords {
				if part != word && strings.EqualFold(part, word) {
					parts[i], changed = word, true
				}
			}
		}
		if changed {
			r.URL.Path = "/" + strings.Join(parts, "/")
			r.URL.RawPath = ""
		}
		next.ServeHTTP(w, r)
	})
}

// keepEscapedSlashes leaves each escaped slash (%2F) of u's path escaped
// in u.Path. An escaped slash is data within a segment, not a separator
// (RFC 3986), but the router matches the unescaped path: ".../jobCollections/
// c%2Fjobs%2Fj" would reach job j, and "c%2F" collection c by a redirect.
// Kept escaped, the slash stays in its name, which Key.Validate refuses.
func keepEscapedSlashes(u *url.URL) {
	raw := u.EscapedPath()
	if !strings.Contains(raw, "%2F") && !strings.Contains(raw, "%2f") {
		return
	}
	kept := strings.NewReplacer("%2F", "%252F", "%2f", "%252F").Replace(raw)
	path, err := url.PathUnescape(kept)
	if err != nil {
		return // not from a parsed request; nothing to keep
	}
	u.Path, u.RawPath = path, ""
}
