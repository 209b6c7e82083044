// Package egress decides which destinations recur's outbound calls may
// reach: the guard that keeps a job's URL (or the endpoint of its queue or
// token authority) from making recur call the cloud metadata service, the
// machine it runs on or the private network behind it (server-side request
// forgery).
//
// The decision is made when a connection is dialed, on the IP address
// actually dialed after name resolution, in the net.Dialer's Control
// function. A check made earlier, on the URL's host or on a resolution of
// it, would let DNS rebinding through: a name that resolves to a public
// address when checked and to 127.0.0.1 when dialed. Every spelling of an
// address (decimal, octal or hex IPv4, IPv4-mapped IPv6) ends up as the
// same dialed address, so none needs parsing here.
//
// The rules, in order, for the address dialed (IPv4-mapped IPv6 unmapped
// first; a NAT64 address 64:ff9b::/96 judged by the IPv4 address it
// embeds):
//
//  0. Always refused: recur's own listeners and the Temporal frontend it
//     uses (Own), by address and port, and by host name and port before
//     resolution.
//  1. Always refused, whatever else the policy says: 0.0.0.0/8 (Linux
//     connects 0.0.0.0 to the local host), 169.254.0.0/16 and fe80::/10
//     (link-local; 169.254.169.254 is the metadata service of AWS, Azure,
//     GCP and others), fd00:ec2::254 (AWS's IPv6 metadata service),
//     100.100.100.200 (Alibaba Cloud's), :: and the deprecated
//     IPv4-compatible ::/96 addresses, multicast (224.0.0.0/4, ff00::/8)
//     and 240.0.0.0/4 (reserved, with the broadcast address).
//  2. Allowed when the connection is to a host name in AllowHosts, or the
//     address is in one of the Allow prefixes.
//  3. Loopback (127.0.0.0/8, ::1) refused unless AllowLoopback.
//  4. Private refused unless AllowPrivate: RFC 1918 (10.0.0.0/8,
//     172.16.0.0/12, 192.168.0.0/16), the shared address space of carrier
//     NAT (100.64.0.0/10, RFC 6598: clouds, Kubernetes and VPNs such as
//     Tailscale use it for internal addresses, so it is no public space),
//     unique local IPv6 (fc00::/7) and deprecated site-local IPv6
//     (fec0::/10).
//  5. Anything else (public unicast) allowed.
//
// The other special-purpose ranges (documentation, benchmarking) are not
// routed on the Internet and count as public here.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Policy says which destinations outbound calls may reach. The zero
// Policy is the strict one: public addresses only, no redirects.
type Policy struct {
	// Allow are the address ranges calls may reach although they are
	// loopback or private (never the always-refused ones).
	Allow []netip.Prefix
	// AllowHosts are host names (lower case, without a trailing dot)
	// whose connections are allowed whatever address they resolve to,
	// except the always-refused ones: whoever controls the name's DNS
	// decides where those calls go.
	AllowHosts []string
	// AllowLoopback allows 127.0.0.0/8 and ::1: the machine recur runs on.
	AllowLoopback bool
	// AllowPrivate allows the private ranges (see the package comment).
	AllowPrivate bool
	// FollowRedirects makes clients follow redirects (up to 10), each hop
	// checked as the first call is. Off, a redirect is the answer.
	FollowRedirects bool
	// Own are recur's own listeners and the Temporal frontend it uses:
	// never reached, whatever the fields above allow (see AddOwn).
	Own []Own
	// Resolver looks up host names; nil is net.DefaultResolver. Tests
	// point it at a DNS server of their own.
	Resolver *net.Resolver
}

// RefusedError is a call the policy refused.
type RefusedError struct {
	// Address is what was refused: the host:port dialed, or a URL's
	// scheme and host.
	Address string
	// Reason says why, and when the policy can allow it, how: by the
	// names of recur's flags, which set the policy's fields.
	Reason string
}

func (e *RefusedError) Error() string {
	return "destination " + e.Address + " refused by policy: " + e.Reason
}

// classified is a range of addresses with what it is.
type classified struct {
	prefix netip.Prefix
	what   string
}

func ranges(whats ...string) []classified {
	out := make([]classified, 0, len(whats)/2)
	for i := 0; i < len(whats); i += 2 {
		out = append(out, classified{netip.MustParsePrefix(whats[i]), whats[i+1]})
	}
	return out
}

var (
	// alwaysRefused are never reachable, whatever the policy allows.
	alwaysRefused = ranges(
		"0.0.0.0/8", `an address of "this network" (0.0.0.0/8), which reaches the local host`,
		"169.254.0.0/16", "a link-local address (169.254.0.0/16), where cloud metadata services answer",
		"100.100.100.200/32", "a cloud metadata address (Alibaba Cloud)",
		"224.0.0.0/4", "a multicast address",
		"240.0.0.0/4", "a reserved or broadcast address (240.0.0.0/4)",
		"::/128", "the unspecified address",
		"::/96", "a deprecated IPv4-compatible IPv6 address",
		"fe80::/10", "a link-local address (fe80::/10)",
		"fd00:ec2::254/128", "a cloud metadata address (AWS, IPv6)",
		"ff00::/8", "a multicast address",
	)
	loopback = ranges(
		"127.0.0.0/8", "a loopback address",
		"::1/128", "a loopback address",
	)
	private = ranges(
		"10.0.0.0/8", "a private address",
		"172.16.0.0/12", "a private address",
		"192.168.0.0/16", "a private address",
		"100.64.0.0/10", "a carrier-grade NAT address, used for internal networks",
		"fc00::/7", "a unique local (private) IPv6 address",
		"fec0::/10", "a site-local (private) IPv6 address",
	)
	// nat64 is the well-known prefix of NAT64 (RFC 6052): its addresses
	// reach the IPv4 address in their last 32 bits.
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
)

func find(set []classified, ip netip.Addr) (classified, bool) {
	for _, c := range set {
		if c.prefix.Contains(ip) {
			return c, true
		}
	}
	return classified{}, false
}

// Check says whether a connection to ap may be made, as it would be to an
// address literal (no host name): nil, or a *RefusedError.
func (p Policy) Check(ap netip.AddrPort) error {
	if o, ok := p.ownAt(ap); ok {
		return &RefusedError{Address: ap.String(), Reason: ownRefusal(o)}
	}
	if reason := p.refusal(ap.Addr(), false); reason != "" {
		return &RefusedError{Address: ap.String(), Reason: reason}
	}
	return nil
}

// refusal is why the policy refuses ip, empty when it does not. The
// connections of an allowed host are refused the always-refused ranges
// only.
func (p Policy) refusal(ip netip.Addr, allowedHost bool) string {
	ip = ip.Unmap().WithZone("")
	if nat64.Contains(ip) {
		b := ip.As16()
		v4 := netip.AddrFrom4([4]byte(b[12:]))
		if reason := p.refusal(v4, allowedHost); reason != "" {
			return fmt.Sprintf("a NAT64 address of %s, %s", v4, reason)
		}
		return ""
	}
	if ip == netip.IPv6Loopback() {
		// ::1 is in ::/96 too, and is only a loopback address.
		return p.reachable(ip, allowedHost)
	}
	if c, ok := find(alwaysRefused, ip); ok {
		return c.what + "; always refused"
	}
	return p.reachable(ip, allowedHost)
}

// reachable applies the rules after the always-refused ranges.
func (p Policy) reachable(ip netip.Addr, allowedHost bool) string {
	if allowedHost || slices.ContainsFunc(p.Allow, func(a netip.Prefix) bool { return a.Contains(ip) }) {
		return ""
	}
	if c, ok := find(loopback, ip); ok && !p.AllowLoopback {
		return c.what + " (allow it with --egress-allow-loopback)"
	}
	if c, ok := find(private, ip); ok && !p.AllowPrivate {
		return fmt.Sprintf("%s (allow it with --egress-allow %s or --egress-allow-private)", c.what, c.prefix)
	}
	return ""
}

// allowedHost says whether host is in AllowHosts.
func (p Policy) allowedHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return host != "" && slices.Contains(p.AllowHosts, host)
}

// dialer returns a dialer whose Control refuses what the policy refuses;
// allowedHost says whether its connections are to an allowed host name.
func (p Policy) dialer(allowedHost bool) *net.Dialer {
	return &net.Dialer{
		Timeout:   30 * time.Second, // as http.DefaultTransport's
		KeepAlive: 30 * time.Second,
		Resolver:  p.Resolver,
		// Control runs for each address the dialer tries, after
		// resolution and before connecting.
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &RefusedError{Address: address, Reason: "not an IP address and port"}
			}
			if o, ok := p.ownAt(ap); ok {
				return &RefusedError{Address: address, Reason: ownRefusal(o)}
			}
			if reason := p.refusal(ap.Addr(), allowedHost); reason != "" {
				return &RefusedError{Address: address, Reason: reason}
			}
			return nil
		},
	}
}

// dialContext returns a dial function that refuses the connections the
// policy refuses with a *RefusedError (wrapped in a *net.OpError); its
// dialers are made once, with a copy of the lists.
func (p Policy) dialContext() func(ctx context.Context, network, address string) (net.Conn, error) {
	p.Allow, p.AllowHosts, p.Own = slices.Clone(p.Allow), slices.Clone(p.AllowHosts), slices.Clone(p.Own)
	guarded, forHosts := p.dialer(false), p.dialer(true)
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, portText, err := net.SplitHostPort(address)
		if port, pErr := strconv.ParseUint(portText, 10, 16); err == nil && pErr == nil {
			if o, ok := p.ownByName(host, uint16(port)); ok {
				return nil, &net.OpError{Op: "dial", Net: network, Err: &RefusedError{Address: address, Reason: ownRefusal(o)}}
			}
		}
		if err == nil && p.allowedHost(host) {
			return forHosts.DialContext(ctx, network, address)
		}
		return guarded.DialContext(ctx, network, address)
	}
}

// Transport returns a clone of http.DefaultTransport that dials through
// the policy. It uses no proxy, whatever HTTP_PROXY says: a proxy dials
// the destination itself, so the guard would check the proxy's address
// and not the destination's.
func (p Policy) Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxResponseHeaderBytes = MaxResponseHeaderBytes
	t.Proxy = nil
	t.DialContext = p.dialContext()
	t.DialTLSContext = nil
	return t
}

// MaxResponseHeaderBytes bounds the headers of an answer: a target may
// send 10 MB of them to net/http's default transport, in every attempt
// at once.
const MaxResponseHeaderBytes = 1 << 20

// Client returns an HTTP client that sends through p.Transport() and
// follows redirects only when FollowRedirects is set (see CheckRedirect).
func (p Policy) Client() *http.Client {
	return &http.Client{Transport: p.Transport(), CheckRedirect: p.CheckRedirect}
}

// maxRedirects is how many redirects a client follows, as http.Client's
// default does.
const maxRedirects = 10

// CheckRedirect is an http.Client's CheckRedirect for the policy. Unless
// FollowRedirects is set it follows none: the redirect is the answer (a
// 3xx, which is no success). Otherwise it follows up to 10, each to an
// http or https URL; each hop's connection is checked as the first's.
// Once the chain leaves the first request's origin, its hops carry no
// credentials.
func (p Policy) CheckRedirect(req *http.Request, via []*http.Request) error {
	if !p.FollowRedirects {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	if err := CheckScheme(req.URL); err != nil {
		return err
	}
	if LeftOrigin(req, via) {
		for _, name := range credentials {
			req.Header.Del(name)
		}
	}
	return nil
}

// credentials are the headers a redirect to another origin never carries.
// http.Client drops them only when the host's domain changes: it sends
// Authorization to another port or scheme of the same host. Referer is
// among them because it holds the first URL's query, where SAS tokens go.
var credentials = []string{"Authorization", "Proxy-Authorization", "Cookie", "Cookie2", "Www-Authenticate", "Proxy-Authenticate", "Referer"}

// LeftOrigin says whether a redirect chain (via, then req) has been to
// another origin (scheme, host and port) than its first request's. Like
// http.Client's, the answer stays yes for the rest of the chain, back at
// the first origin too: a hop elsewhere chose where the chain goes next.
func LeftOrigin(req *http.Request, via []*http.Request) bool {
	if len(via) == 0 {
		return false
	}
	first := origin(via[0].URL)
	for _, r := range append(via[1:len(via):len(via)], req) {
		if origin(r.URL) != first {
			return true
		}
	}
	return false
}

// origin is u's scheme, host and port, the port spelt out when it is the
// scheme's default.
func origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// CheckScheme refuses URLs whose scheme is not http or https.
func CheckScheme(u *url.URL) error {
	if u.Scheme == "http" || u.Scheme == "https" {
		return nil
	}
	return &RefusedError{Address: u.Scheme + "://" + u.Host, Reason: fmt.Sprintf("scheme %q: only http and https are allowed", u.Scheme)}
}

// AsRefused returns the *RefusedError in err's chain, or nil.
func AsRefused(err error) *RefusedError {
	var refused *RefusedError
	if errors.As(err, &refused) {
		return refused
	}
	return nil
}
