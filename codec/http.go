package codec

import (
	"net/http"
	"slices"

	"go.temporal.io/sdk/converter"
)

// MaxRequestBody bounds a codec request's body: the Web UI sends the
// payloads of one event at a time, each at most the 2 MB of Temporal's
// default blob size limit, in base64 within JSON. recur's API reads the
// body first, within this bound, and answers a body too large or too
// slow in the words of its other routes.
const MaxRequestBody = 4 << 20

// Handler serves Temporal's remote codec protocol for the Web UI and the
// temporal CLI (--codec-endpoint): POST .../encode and .../decode with
// {"payloads": [...]} in protobuf JSON, answered in kind. Whoever may call
// it may read every secret in recur's histories: it must sit behind the
// API's authentication.
//
// allowOrigins are the origins (scheme://host:port) of Web UIs allowed to
// call it from a browser, with Authorization and X-Namespace headers. A
// CORS preflight (OPTIONS) is answered here, without calling further: it
// carries no credentials, so authentication must let it through.
func Handler(keys *Keys, allowOrigins ...string) http.Handler {
	codec := converter.NewPayloadCodecHTTPHandler(New(keys))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		allowed := allowOrigin(w, r, allowOrigins)
		if r.Method == http.MethodOptions {
			if !allowed {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBody)
		}
		codec.ServeHTTP(w, r)
	})
}

// allowOrigin writes the CORS headers for r's origin if it is allowed, and
// reports whether it is.
func allowOrigin(w http.ResponseWriter, r *http.Request, allowOrigins []string) bool {
	w.Header().Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	if origin == "" || !slices.Contains(allowOrigins, origin) {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Namespace")
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Set("Access-Control-Max-Age", "600")
	return true
}
