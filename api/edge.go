package api

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
)

// The API's edge: which names a request's Host may give, which web pages
// may call the API from a browser, what a request's body must say it is,
// whose forwarded headers are believed, and which scheme and host the
// links of answers name. Every request passes here first (checkEdge),
// whatever its route.

// Hosts are the names a request's Host header may give beyond those
// always allowed: localhost and its subdomains, IP addresses and the
// host of the address the API listens on. A page under a name its owner
// points at this machine (DNS rebinding) reaches the API with that name
// in Host; localhost is this machine's alone, and an IP address is no
// name anyone can point.
type Hosts struct {
	names    []string // exact, in lower case
	suffixes []string // ".example.com": the name and its subdomains
	any      bool     // "*": any name
}

// Add adds a comma-separated list of host names: a name, ".name" (or
// "*.name") for the name and its subdomains, "*" for any name.
func (h *Hosts) Add(list string) error {
	for entry := range strings.SplitSeq(list, ",") {
		entry = strings.ToLower(strings.TrimSpace(entry))
		switch {
		case entry == "":
			continue
		case entry == "*":
			h.any = true
			continue
		}
		name, sub := strings.CutPrefix(entry, "*.")
		if !sub {
			name, sub = strings.CutPrefix(entry, ".")
		}
		if !hostName(name) {
			return fmt.Errorf("%q is not a host name: want a name such as recur.example.com, .example.com for its subdomains too, or *; no scheme, port or path", entry)
		}
		if sub {
			h.suffixes = append(h.suffixes, "."+name)
		} else {
			h.names = append(h.names, name)
		}
	}
	return nil
}

// hostName reports whether s is a DNS name (letters, digits, '-', '_'
// and dots) or an IP address.
func hostName(s string) bool {
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	if s == "" || len(s) > 253 || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") || strings.Contains(s, "..") {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}

// Empty reports whether the operator named no host.
func (h Hosts) Empty() bool { return !h.any && len(h.names) == 0 && len(h.suffixes) == 0 }

// String lists the hosts as Add takes them.
func (h Hosts) String() string {
	list := slices.Clone(h.names)
	for _, s := range h.suffixes {
		list = append(list, "*"+s)
	}
	if h.any {
		list = append(list, "*")
	}
	return strings.Join(list, ",")
}

// named reports whether the operator named host (lower case, no port),
// "*" aside: a page served under a name the operator named is one of
// the API's own.
func (h Hosts) named(host string) bool {
	if slices.Contains(h.names, host) {
		return true
	}
	for _, s := range h.suffixes {
		if host == s[1:] || strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// TrustedProxies are the addresses of the proxies in front of the API,
// whose X-Forwarded-For, X-Real-IP and X-Forwarded-Proto headers the API
// believes. Anyone else may write anything in them.
type TrustedProxies []netip.Prefix

// Add adds a comma-separated list of IP addresses and CIDR ranges.
func (p *TrustedProxies) Add(list string) error {
	for entry := range strings.SplitSeq(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(entry)
		if err != nil {
			addr, aerr := netip.ParseAddr(entry)
			if aerr != nil || addr.Zone() != "" {
				return fmt.Errorf("%q is neither an IP address nor a CIDR range such as 10.0.0.0/8", entry)
			}
			prefix = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
		}
		*p = append(*p, prefix.Masked())
	}
	return nil
}

// String lists the proxies as Add takes them.
func (p TrustedProxies) String() string {
	list := make([]string, len(p))
	for i, prefix := range p {
		list[i] = prefix.String()
	}
	return strings.Join(list, ",")
}

// contains reports whether the remote address (an IP) is a trusted
// proxy's.
func (p TrustedProxies) contains(remote string) bool {
	addr, err := netip.ParseAddr(remote)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	return slices.ContainsFunc(p, func(prefix netip.Prefix) bool { return prefix.Contains(addr) })
}

// edgePolicy is what checkEdge decides with.
type edgePolicy struct {
	hosts Hosts
	// checkHosts refuses a request whose Host is not allowed: always
	// without tokens, with them once the operator named hosts.
	checkHosts bool
	// listenHost is the host and port of the listen address, the host of
	// links when the request's Host is not allowed; listenName is its host
	// when it is a name, which Host may give.
	listenHost, listenName string
	proxies                TrustedProxies
	// codecOrigins are the Web UIs that may call /codec/ from a browser.
	codecOrigins []string
	// unvetted logs once that links name listenHost instead of a Host.
	unvetted sync.Once
}

// newEdgePolicy returns the edge policy of opts.
func newEdgePolicy(opts Options) *edgePolicy {
	e := &edgePolicy{hosts: opts.AllowedHosts, checkHosts: opts.Auth == nil || !opts.AllowedHosts.Empty(),
		proxies: opts.TrustedProxies, codecOrigins: opts.CodecOrigins, listenHost: "localhost"}
	if host, port, err := net.SplitHostPort(opts.ListenAddr); err == nil {
		switch ip, err := netip.ParseAddr(host); {
		case host == "" || err == nil && ip.IsUnspecified():
			// Every interface: a client on this machine reaches it so.
			e.listenHost = net.JoinHostPort("localhost", port)
		default:
			e.listenHost = net.JoinHostPort(host, port)
			if err != nil {
				e.listenName = strings.ToLower(host)
			}
		}
	}
	return e
}

// allowed reports whether a Host header's name (lower case, no port) is
// allowed.
func (e *edgePolicy) allowed(host string) bool {
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	return host == "localhost" || strings.HasSuffix(host, ".localhost") || host != "" && host == e.listenName ||
		e.hosts.any || e.hosts.named(host)
}

// hostOf is the name of a Host header, in lower case, without its port
// or an IPv6 address's brackets.
func hostOf(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	return strings.ToLower(host)
}

// keyBaseURL is where checkEdge keeps the scheme and host of the
// request's links (baseURL).
const keyBaseURL = "recur.baseURL"

// checkEdge refuses, before any route's work: a Host that is not allowed (403
// HostNotAllowed), on the API without tokens a request a browser sends
// from another origin or site (403 CrossOriginRequest), and a body that
// is not said to be JSON (415 UnsupportedMediaType). It keeps the base of
// the answer's links.
func (s *Server) checkEdge(c *gin.Context) {
	r := c.Request
	host := hostOf(r.Host)
	allowed := r.Host != "" && s.edge.allowed(host)
	if !allowed && r.Host != "" && s.edge.checkHosts {
		s.logRefusal(c.Request.Context(), "request for a host that is not allowed refused", "host", clipValue(r.Host),
			"remote", c.ClientIP(), "method", r.Method, "path", r.URL.Path)
		abort(c, http.StatusForbidden, "HostNotAllowed", fmt.Sprintf("the Host %q is not one of this API's names "+
			"(localhost, an IP address, the listen address and those of --allowed-hosts): a web page under a name "+
			"pointed at this machine (DNS rebinding) must not reach it", clipValue(r.Host)))
		return
	}
	if s.auth == nil {
		if why := s.edge.crossOrigin(r); why != "" {
			s.logRefusal(c.Request.Context(), "request from another origin refused", "origin", clipValue(r.Header.Get("Origin")),
				"secFetchSite", clipValue(r.Header.Get("Sec-Fetch-Site")), "remote", c.ClientIP(), "method", r.Method, "path", r.URL.Path)
			abort(c, http.StatusForbidden, "CrossOriginRequest", why+": without tokens the API answers its own pages only, "+
				"so that a web page open in a browser on this machine cannot drive it")
			return
		}
	}
	if why := notJSON(c); why != "" {
		abort(c, http.StatusUnsupportedMediaType, "UnsupportedMediaType", why)
		return
	}
	c.Set(keyBaseURL, s.linkBase(c, allowed))
	c.Next()
}

// crossOrigin says why r comes from a page of another origin or site,
// or "" when it does not. A browser sends Origin with every request but
// GET and HEAD, and with a GET a script makes across origins; it sends
// Sec-Fetch-Site with every request. Either is enough: an Origin of the
// API's own (or of a host the operator named, or of a Web UI allowed to
// call /codec/) passes, whatever Sec-Fetch-Site says; without Origin, a
// request from another site is refused unless it is a GET or HEAD that
// opens a page (a link followed), which changes nothing and whose answer
// the other site cannot read.
func (e *edgePolicy) crossOrigin(r *http.Request) string {
	if origins := r.Header.Values("Origin"); len(origins) > 0 {
		if e.ownOrigin(r, origins[0]) {
			return ""
		}
		return fmt.Sprintf("the request comes from a page of another origin (Origin: %s)", clipValue(origins[0]))
	}
	if r.Header.Get("Sec-Fetch-Site") != "cross-site" {
		return ""
	}
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.Header.Get("Sec-Fetch-Mode") == "navigate" {
		return ""
	}
	return "the browser says the request comes from another site (Sec-Fetch-Site: cross-site)"
}

// ownOrigin reports whether origin is the API's own: the host and port
// the request is addressed to, a host the operator named, or on /codec/
// a Web UI allowed to call it. "null" (a sandboxed page, a redirect
// across origins) is no one's.
func (e *edgePolicy) ownOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) || e.hosts.named(strings.ToLower(u.Hostname())) {
		return true
	}
	return strings.HasPrefix(r.URL.Path, "/codec/") && slices.Contains(e.codecOrigins, origin)
}

// notJSON says why a request's body is refused, or "" when it is not:
// every body must be said to be JSON, and so must a request of a method
// with side effects that a browser sends, even without a body. A page of
// another site can send a body of another type, or none, without asking
// first (a form, fetch with mode no-cors); it must ask first (a CORS
// preflight, which the API never grants) to send Content-Type:
// application/json. Programs (Azure's SDKs, recur's CLI) send no Origin
// and no Sec-Fetch-Site, and may send a POST without a body (run,
// enable, disable) without a Content-Type.
func notJSON(c *gin.Context) string {
	r := c.Request
	hasBody := r.ContentLength != 0
	safe := r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions
	browser := len(r.Header.Values("Origin")) > 0 || len(r.Header.Values("Sec-Fetch-Site")) > 0
	if !hasBody && (safe || !browser && r.Header.Get("Content-Type") == "") {
		return ""
	}
	ct := c.ContentType()
	switch {
	case ct == "application/json" || strings.HasSuffix(ct, "+json") || ct == "text/json":
		return ""
	case ct != "":
		return "the body must be JSON (Content-Type: application/json), not " + clipValue(ct)
	case hasBody:
		return "the body must be JSON, sent with Content-Type: application/json"
	}
	return "a browser's " + r.Method + " needs Content-Type: application/json, even without a body"
}

// linkBase is the scheme and host of the links in c's answer: the
// request's Host when it is allowed, else the listen address, so that no
// link sends a client, with its token, to a name nobody vetted. The
// scheme is https over TLS, or what a trusted proxy says in
// X-Forwarded-Proto.
func (s *Server) linkBase(c *gin.Context, allowed bool) string {
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	if p := c.GetHeader("X-Forwarded-Proto"); (p == "http" || p == "https") && s.edge.proxies.contains(c.RemoteIP()) {
		scheme = p
	}
	if allowed {
		return scheme + "://" + c.Request.Host
	}
	if c.Request.Host != "" {
		s.edge.unvetted.Do(func() {
			s.log.WarnContext(c.Request.Context(), "links in answers (nextLink, Location) name the listen address, "+
				"not the request's Host, which is not allowed; to have them name it, start recur with --allowed-hosts",
				"host", clipValue(c.Request.Host), "links", s.edge.listenHost)
		})
	}
	return scheme + "://" + s.edge.listenHost
}

// baseURL is the scheme and host of the links of c's answer, as
// checkEdge chose them.
func baseURL(c *gin.Context) string { return c.GetString(keyBaseURL) }
