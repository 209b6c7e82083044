package egress

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// AddAllowed adds the entries of a comma-separated list to the allowlist:
// address ranges in CIDR notation (10.1.0.0/16, fd12::/48), single
// addresses (10.1.2.3, ::1) and host names (build.internal). Host names
// match exactly, in any case: a name allows its own connections, not its
// subdomains'. Empty entries are skipped. An always-refused range cannot be
// allowed and is an error, as is anything else that is neither an address
// nor a host name (a URL, a port, a wildcard).
func (p *Policy) AddAllowed(list string) error {
	for entry := range strings.SplitSeq(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if err := p.addAllowed(entry); err != nil {
			return fmt.Errorf("allow %q: %w", entry, err)
		}
	}
	return nil
}

func (p *Policy) addAllowed(entry string) error {
	if prefix, ok, err := parseRange(entry); ok || err != nil {
		if err != nil {
			return err
		}
		for _, c := range alwaysRefused {
			if c.prefix.Bits() <= prefix.Bits() && c.prefix.Contains(prefix.Addr()) && prefix.Addr() != netip.IPv6Loopback() {
				return fmt.Errorf("%s is always refused and cannot be allowed", c.what)
			}
		}
		p.Allow = append(p.Allow, prefix)
		return nil
	}
	host, err := hostName(entry)
	if err != nil {
		return err
	}
	if !slices.Contains(p.AllowHosts, host) {
		p.AllowHosts = append(p.AllowHosts, host)
	}
	return nil
}

// parseRange parses entry as a CIDR range or an address; ok is false when
// it is neither (then it may be a host name).
func parseRange(entry string) (netip.Prefix, bool, error) {
	entry = strings.TrimSuffix(strings.TrimPrefix(entry, "["), "]")
	var prefix netip.Prefix
	if addr, _, ok := strings.Cut(entry, "/"); ok {
		if _, err := netip.ParseAddr(addr); err != nil {
			return netip.Prefix{}, false, nil // a URL, say: not a host name either
		}
		p, err := netip.ParsePrefix(entry)
		if err != nil {
			return netip.Prefix{}, false, fmt.Errorf("not a CIDR range such as 10.0.0.0/8: %w", err)
		}
		prefix = p
	} else {
		ip, err := netip.ParseAddr(entry)
		if err != nil {
			return netip.Prefix{}, false, nil
		}
		if ip.Zone() != "" {
			return netip.Prefix{}, false, fmt.Errorf("an address with a zone cannot be allowed")
		}
		prefix = netip.PrefixFrom(ip, ip.BitLen())
	}
	// Dialed addresses are unmapped before they are checked: so are these.
	if prefix.Addr().Is4In6() {
		if prefix.Bits() < 96 {
			return netip.Prefix{}, false, fmt.Errorf("an IPv4-mapped range must be /96 or longer")
		}
		prefix = netip.PrefixFrom(prefix.Addr().Unmap(), prefix.Bits()-96)
	}
	return prefix.Masked(), true, nil
}

// hostName validates a host name of the allowlist and returns it in lower
// case without a trailing dot.
func hostName(s string) (string, error) {
	name := strings.TrimSuffix(strings.ToLower(s), ".")
	if name == "" || len(name) > 253 {
		return "", fmt.Errorf("not a host name")
	}
	labels := strings.Split(name, ".")
	for _, label := range labels {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") ||
			strings.IndexFunc(label, func(r rune) bool { return !isHostChar(r) }) >= 0 {
			return "", fmt.Errorf("neither an address, a CIDR range nor a host name (no scheme, port or wildcard)")
		}
	}
	// Resolvers read 2130706433, 0x7f000001 or 127.1 as addresses: as
	// names, they would allow whatever address they spell.
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return "", fmt.Errorf("looks like an address in an unusual spelling; write it as a dotted address or a CIDR range")
	}
	return name, nil
}

func isHostChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_'
}

// String describes the policy for logs.
func (p Policy) String() string {
	allowed := func(yes bool) string {
		if yes {
			return "allowed"
		}
		return "refused"
	}
	s := fmt.Sprintf("loopback %s, private %s, redirects ", allowed(p.AllowLoopback), allowed(p.AllowPrivate))
	if p.FollowRedirects {
		s += "followed"
	} else {
		s += "not followed"
	}
	var also []string
	for _, a := range p.Allow {
		also = append(also, a.String())
	}
	also = append(also, p.AllowHosts...)
	if len(also) > 0 {
		s += ", also allowed: " + strings.Join(also, ", ")
	}
	var own []string
	for _, o := range p.Own {
		own = append(own, o.What+" "+net.JoinHostPort(o.Host, strconv.Itoa(int(o.Port))))
	}
	if len(own) > 0 {
		s += ", never reached: " + strings.Join(own, ", ")
	}
	return s
}
