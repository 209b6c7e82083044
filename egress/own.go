package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Own is a listener of recur's own process (its REST API, the embedded
// Temporal server's ports, the Web UI, metrics, pprof) or the Temporal
// frontend recur is connected to. Outbound calls never reach one, whatever
// else the policy allows: a tenant's HTTP job aimed at the frontend could
// read and end other tenants' workflows, and one aimed at the API would
// act with recur's own standing.
type Own struct {
	// Host is an IP address, or a host name as it was given (lower case):
	// connections to that name and port are refused whatever it resolves
	// to. The unspecified addresses (0.0.0.0, ::) stand for every address
	// of this machine, as a listener bound to them answers on all.
	Host string
	Port uint16
	// What names the listener in refusals, e.g. "recur's REST API".
	What string
}

// AddOwn adds the listener at address (host:port) named what to p.Own. A
// host name is also resolved now, and each of its addresses added: an
// address of the frontend dialed under another name is refused as well.
// An empty host is the unspecified address.
func (p *Policy) AddOwn(ctx context.Context, address, what string) error {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("own listener %s %q: %w", what, address, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return fmt.Errorf("own listener %s %q: port: %w", what, address, err)
	}
	if host == "" {
		host = "::"
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	add := func(host string) {
		o := Own{Host: host, Port: uint16(port), What: what}
		if !slices.Contains(p.Own, o) {
			p.Own = append(p.Own, o)
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		add(ip.Unmap().WithZone("").String())
		return nil
	}
	add(host)
	resolver := p.Resolver
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	ips, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("own listener %s: resolve %s: %w", what, host, err)
	}
	for _, ip := range ips {
		add(ip.Unmap().WithZone("").String())
	}
	return nil
}

// ownByName returns the Own listener that host (a name, as dialed) and
// port name, if any.
func (p Policy) ownByName(host string, port uint16) (Own, bool) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	i := slices.IndexFunc(p.Own, func(o Own) bool { return o.Port == port && o.Host == host })
	if i < 0 {
		return Own{}, false
	}
	return p.Own[i], true
}

// ownAt returns the Own listener a connection to ap reaches, if any.
func (p Policy) ownAt(ap netip.AddrPort) (Own, bool) {
	ip := ap.Addr().Unmap().WithZone("")
	for _, o := range p.Own {
		if o.Port != ap.Port() {
			continue
		}
		addr, err := netip.ParseAddr(o.Host)
		if err != nil {
			continue // a name: its addresses are entries of their own
		}
		if addr == ip || addr.IsUnspecified() && isLocal(ip) {
			return o, true
		}
	}
	return Own{}, false
}

// isLocal reports whether ip is an address of this machine: loopback, or
// one of its interfaces'.
func isLocal(ip netip.Addr) bool {
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true // unknown: refusing is the safe answer
	}
	for _, a := range addrs {
		if prefix, err := netip.ParsePrefix(a.String()); err == nil && prefix.Addr().Unmap() == ip {
			return true
		}
	}
	return false
}

// ownRefusal is the reason a connection to o is refused.
func ownRefusal(o Own) string {
	return o.What + ", a listener of recur itself; always refused"
}
