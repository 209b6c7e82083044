package jobs

import (
	"net/url"
	"strconv"
	"strings"
)

// A URI's user info (https://user:password@host/) is a credential, or a
// token in the user name: Go's HTTP client sends it as a Basic
// Authorization header, which a target may echo into history. The
// authentication member holds credentials instead: answers redact it
// and its secrets are encrypted at rest, where a URI is shown and stored
// as it is.

// checkURIs refuses an action or error action URI with user info, or
// with a port that no TCP connection can have (0, or past 65535: Go's URL
// parser takes any digits). It runs before Accept, whose messages quote
// the URI.
func (p *Properties) checkURIs() error {
	if p.Action == nil {
		return nil
	}
	for _, a := range []struct {
		path string
		spec *ActionSpec
	}{{"properties.action", &p.Action.ActionSpec}, {"properties.action.errorAction", p.Action.ErrorAction}} {
		if a.spec == nil || a.spec.Request == nil {
			continue
		}
		uri := a.spec.Request.URI
		if hasUserinfo(uri) {
			return invalidf(a.path+".request.uri", "uri must not hold user info (user:password@ before the host): "+
				"give credentials in %s.request.authentication, e.g. Basic authentication, where they are kept secret", a.path)
		}
		if port, ok := badPort(uri); ok {
			return invalidf(a.path+".request.uri", "uri %q has port %s: a port is a number from 1 to 65535", uri, port)
		}
	}
	return nil
}

// badPort returns the port of raw when it names one outside 1-65535. A
// URI Go's parser refuses is left to Accept, which says so.
func badPort(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Port() == "" {
		return "", false
	}
	n, err := strconv.ParseUint(u.Port(), 10, 32)
	return u.Port(), err != nil || n < 1 || n > 65535
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
