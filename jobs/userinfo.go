package jobs

import (
	"net/url"
	"strings"
)

// A URI's user info (https://user:password@host/) is a credential, or a
// token in the user name: Go's HTTP client sends it as a Basic
// Authorization header, which a target may echo into history. The
// authentication member holds credentials instead: answers redact it
// and its secrets are encrypted at rest, where a URI is shown and stored
// as it is.

// checkUserinfo refuses an action or error action URI with user info. It
// runs before Accept, whose messages quote the URI.
func (p *Properties) checkUserinfo() error {
	if p.Action == nil {
		return nil
	}
	for _, a := range []struct {
		path string
		spec *ActionSpec
	}{{"properties.action", &p.Action.ActionSpec}, {"properties.action.errorAction", p.Action.ErrorAction}} {
		if a.spec == nil || a.spec.Request == nil || !hasUserinfo(a.spec.Request.URI) {
			continue
		}
		return invalidf(a.path+".request.uri", "uri must not hold user info (user:password@ before the host): "+
			"give credentials in %s.request.authentication, e.g. Basic authentication, where they are kept secret", a.path)
	}
	return nil
}

// hasUserinfo reports whether raw has user info, as Go's URL parser finds
// it or, for what it refuses, as the text looks.
func hasUserinfo(raw string) bool {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return true
	}
	return withoutUserinfo(raw) != raw
}

// withoutUserinfo returns raw without the user info of its authority: the
// part between "//" and the first '/', '?' or '#' after it, up to its last
// '@', as Go's URL parser splits it.
func withoutUserinfo(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "//")
	if !ok {
		return raw
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return raw
	}
	return scheme + "//" + rest[at+1:]
}
