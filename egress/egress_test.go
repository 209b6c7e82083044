package egress_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/dns/dnsmessage"

	"github.com/recurhq/recur/egress"
)

// target is a real HTTP server on a chosen address that counts the
// connections it accepts: a refused call must never reach it.
type target struct {
	*httptest.Server
	conns atomic.Int32
	port  string
}

// newTarget starts a target listening on addr ("127.0.0.1:0"); nil when
// the address cannot be listened on (no IPv6, say).
func newTarget(t *testing.T, addr string, h http.Handler) *target {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil
	}
	if h == nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("reached")) })
	}
	tg := &target{Server: httptest.NewUnstartedServer(h)}
	tg.Listener.Close()
	tg.Listener = ln
	tg.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			tg.conns.Add(1)
		}
	}
	tg.Start()
	t.Cleanup(tg.Close)
	_, tg.port, _ = net.SplitHostPort(ln.Addr().String())
	return tg
}

// get sends a GET with p's client, bounded so that a call the policy
// wrongly lets out to an unroutable address cannot hang the test.
func get(t *testing.T, p egress.Policy, url string) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	c := p.Client()
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return resp, err
}

// requireRefused checks that err is the policy's refusal of address, for
// a reason containing why.
func requireRefused(t *testing.T, err error, address, why string) {
	t.Helper()
	require.Error(t, err)
	refused := egress.AsRefused(err)
	require.NotNil(t, refused, "refused by the policy, not by something else: %v", err)
	if address != "" {
		require.Equal(t, address, refused.Address)
	}
	require.Contains(t, refused.Reason, why)
	require.Contains(t, err.Error(), "refused by policy: "+refused.Reason)
}

// TestVectorsNeverConnect dials every SSRF vector for real through the
// policy's transport. Where a target can listen (loopback), it must see
// no connection; elsewhere the refusal comes from the dialer's Control
// function, which runs before connect(2).
func TestVectorsNeverConnect(t *testing.T) {
	t.Parallel()
	lo := newTarget(t, "127.0.0.1:0", nil)
	port := lo.port
	var lo6 *target
	if tg := newTarget(t, "[::1]:"+port, nil); tg != nil {
		lo6 = tg
	}
	cases := []struct {
		url, address, why string
		seen              *target // the target the call must not reach
	}{
		{"http://127.0.0.1:" + port + "/", "127.0.0.1:" + port, "loopback", lo},
		{"http://127.0.0.2:" + port + "/", "127.0.0.2:" + port, "loopback", lo},
		{"http://localhost:" + port + "/", "", "loopback", lo},
		{"http://[::ffff:127.0.0.1]:" + port + "/", "127.0.0.1:" + port, "loopback", lo},
		{"http://[::ffff:7f00:1]:" + port + "/", "127.0.0.1:" + port, "loopback", lo},
		{"http://0.0.0.0:" + port + "/", "0.0.0.0:" + port, "always refused", lo},
		{"http://[::1]:" + port + "/", "[::1]:" + port, "loopback", lo6},
		{"http://[::]:" + port + "/", "[::]:" + port, "always refused", lo6},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254:80", "link-local", nil},
		{"http://[::ffff:169.254.169.254]/", "169.254.169.254:80", "link-local", nil},
		{"http://[::ffff:a9fe:a9fe]/", "169.254.169.254:80", "link-local", nil},
		{"http://[64:ff9b::a9fe:a9fe]/", "[64:ff9b::a9fe:a9fe]:80", "NAT64 address of 169.254.169.254", nil},
		{"http://100.100.100.200/latest/meta-data/", "100.100.100.200:80", "metadata", nil},
		{"http://[fd00:ec2::254]/", "[fd00:ec2::254]:80", "metadata", nil},
		{"http://[fe80::1]/", "[fe80::1]:80", "link-local", nil},
		{"http://10.0.0.5/", "10.0.0.5:80", "a private address (allow it with --egress-allow 10.0.0.0/8 or --egress-allow-private)", nil},
		{"http://172.16.0.1/", "172.16.0.1:80", "--egress-allow 172.16.0.0/12", nil},
		{"http://172.31.255.254/", "172.31.255.254:80", "--egress-allow 172.16.0.0/12", nil},
		{"http://192.168.1.1/", "192.168.1.1:80", "--egress-allow 192.168.0.0/16", nil},
		{"http://100.64.0.1/", "100.64.0.1:80", "carrier-grade NAT", nil},
		{"http://[fd12:3456::1]/", "[fd12:3456::1]:80", "unique local", nil},
		{"http://224.0.0.1/", "224.0.0.1:80", "multicast", nil},
		{"http://255.255.255.255/", "255.255.255.255:80", "broadcast", nil},
		{"http://[::127.0.0.1]/", "[::7f00:1]:80", "IPv4-compatible", nil},
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			began := time.Now()
			_, err := get(t, egress.Policy{}, c.url)
			requireRefused(t, err, c.address, c.why)
			require.Less(t, time.Since(began), time.Second, "refused before any connection is tried")
			if c.seen != nil {
				require.Zero(t, c.seen.conns.Load(), "the target saw a connection")
			}
		})
	}
	// The control: the same target is reachable when loopback is allowed,
	// so the refusals above are the policy's.
	resp, err := get(t, egress.Policy{AllowLoopback: true}, lo.URL)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.EqualValues(t, 1, lo.conns.Load())
}

// TestUnusualSpellingsNeverConnect: decimal, octal and hex spellings of
// 127.0.0.1. Go's resolver reads none of them as an address and looks up
// none that is all digits (the others do not resolve); glibc's
// getaddrinfo reads them all as 127.0.0.1, and there the dial check must
// refuse them. Either way, nothing connects.
// TestUnusualSpellingsThroughGlibc runs this test again under glibc's
// resolver.
func TestUnusualSpellingsNeverConnect(t *testing.T) {
	t.Parallel()
	underGlibc := os.Getenv(glibcRun) == "1"
	lo := newTarget(t, "127.0.0.1:0", nil)
	for _, host := range []string{"2130706433", "0177.0.0.1", "0x7f000001", "0x7f.0.0.1", "127.1", "017700000001"} {
		t.Run(host, func(t *testing.T) {
			url := "http://" + host + ":" + lo.port + "/"
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			addrs, lookupErr := net.DefaultResolver.LookupNetIP(ctx, "ip4", host)
			_, err := get(t, egress.Policy{}, url)
			if lookupErr == nil {
				require.Equal(t, []netip.Addr{netip.MustParseAddr("127.0.0.1")}, addrs)
				requireRefused(t, err, "127.0.0.1:"+lo.port, "loopback")
			} else {
				require.False(t, underGlibc, "glibc reads %s as an address: %v", host, lookupErr)
				var dnsErr *net.DNSError
				require.ErrorAs(t, err, &dnsErr, "neither refused nor unresolved: %v", err)
				t.Logf("%s does not resolve here: %v", host, lookupErr)
			}
			require.Zero(t, lo.conns.Load(), "the target saw a connection")
		})
	}
}

// glibcRun is set in the environment of the run under glibc's resolver.
const glibcRun = "EGRESS_TEST_GLIBC_RESOLVER"

// TestDNSRebindingIsRefusedAtDialTime: a name that resolves to a public
// address when a guard would check it, and to 127.0.0.1 when dialed. The
// check is on the address dialed, so the call is refused and the target
// on 127.0.0.1 sees nothing.
func TestDNSRebindingIsRefusedAtDialTime(t *testing.T) {
	t.Parallel()
	lo := newTarget(t, "127.0.0.1:0", nil)
	port, _ := strconv.Atoi(lo.port)
	public, local := netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("127.0.0.1")
	dns := newDNSServer(t, func(name string, n int) []netip.Addr {
		switch name {
		case "rebind.test.":
			if n == 1 {
				return []netip.Addr{public}
			}
			return []netip.Addr{local}
		case "internal.test.":
			return []netip.Addr{local}
		case "metadata.test.":
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}
		}
		return nil
	})
	p := egress.Policy{Resolver: dns.resolver()}

	addrs, err := dns.resolver().LookupNetIP(context.Background(), "ip4", "rebind.test")
	require.NoError(t, err)
	require.Equal(t, []netip.Addr{public}, addrs, "first the name resolves to a public address")
	require.NoError(t, p.Check(netip.AddrPortFrom(addrs[0], uint16(port))), "which a check before dialing would pass")

	_, err = get(t, p, "http://rebind.test:"+lo.port+"/")
	requireRefused(t, err, "127.0.0.1:"+lo.port, "loopback")
	require.Zero(t, lo.conns.Load(), "the target saw a connection")

	t.Run("an allowed host reaches what it resolves to", func(t *testing.T) {
		p := egress.Policy{Resolver: dns.resolver(), AllowHosts: []string{"internal.test"}}
		resp, err := get(t, p, "http://INTERNAL.test.:"+lo.port+"/")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.EqualValues(t, 1, lo.conns.Load())
		_, err = get(t, p, "http://rebind.test:"+lo.port+"/")
		requireRefused(t, err, "127.0.0.1:"+lo.port, "loopback")
		require.EqualValues(t, 1, lo.conns.Load(), "only the allowed name's call connected")
	})
	t.Run("but never an always-refused address", func(t *testing.T) {
		p := egress.Policy{Resolver: dns.resolver(), AllowHosts: []string{"metadata.test"}}
		_, err := get(t, p, "http://metadata.test/")
		requireRefused(t, err, "169.254.169.254:80", "always refused")
	})
}

// TestAllowlistLetsCallsThrough: a CIDR entry allows its range and no
// more; AllowPrivate and AllowLoopback allow theirs.
func TestAllowlistLetsCallsThrough(t *testing.T) {
	t.Parallel()
	one := newTarget(t, "127.0.0.1:0", nil)
	two := newTarget(t, "127.0.0.2:0", nil)
	var p egress.Policy
	require.NoError(t, p.AddAllowed("127.0.0.1/32, build.internal"))
	resp, err := get(t, p, one.URL)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = get(t, p, two.URL)
	requireRefused(t, err, two.Listener.Addr().String(), "loopback")
	require.Zero(t, two.conns.Load())

	for _, c := range []struct {
		policy  egress.Policy
		address string
		allowed bool
	}{
		{egress.Policy{}, "8.8.8.8:443", true},
		{egress.Policy{}, "[2606:4700::1111]:443", true},
		{egress.Policy{}, "10.1.2.3:443", false},
		{egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}}, "10.1.2.3:443", true},
		{egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}}, "10.2.0.1:443", false},
		{egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}}, "[::ffff:10.1.2.3]:443", true},
		{egress.Policy{AllowPrivate: true}, "192.168.1.1:80", true},
		{egress.Policy{AllowPrivate: true}, "[fd12::1]:80", true},
		{egress.Policy{AllowPrivate: true}, "127.0.0.1:80", false},
		{egress.Policy{AllowPrivate: true}, "[fd00:ec2::254]:80", false},
		{egress.Policy{AllowPrivate: true}, "100.100.100.200:80", false},
		{egress.Policy{AllowLoopback: true}, "127.0.0.1:80", true},
		{egress.Policy{AllowLoopback: true}, "[::1]:80", true},
		{egress.Policy{AllowLoopback: true}, "10.0.0.1:80", false},
		{egress.Policy{AllowLoopback: true, AllowPrivate: true}, "169.254.169.254:80", false},
		{egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}}, "169.254.169.254:80", false},
		{egress.Policy{}, "[64:ff9b::808:808]:80", true},
		{egress.Policy{}, "[64:ff9b::a00:1]:80", false},
	} {
		err := c.policy.Check(netip.MustParseAddrPort(c.address))
		if c.allowed {
			require.NoError(t, err, "%s under %s", c.address, c.policy)
		} else {
			require.Error(t, err, "%s under %s", c.address, c.policy)
		}
	}
}

// TestRedirects: off, a redirect is the answer and nothing more is
// dialed; on, every hop is checked as the first call is.
func TestRedirects(t *testing.T) {
	t.Parallel()
	two := newTarget(t, "127.0.0.2:0", nil)
	var via *target
	via = newTarget(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" {
			_, _ = w.Write([]byte("ok"))
			return
		}
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	var p egress.Policy
	require.NoError(t, p.AddAllowed("127.0.0.1"))
	to := func(dest string) string { return via.URL + "/?to=" + dest }

	for _, dest := range []string{"http://169.254.169.254/latest/meta-data/", "http://10.0.0.5/", two.URL + "/", via.URL + "/ok"} {
		resp, err := get(t, p, to(dest))
		require.NoError(t, err, "not followed: the redirect is the answer")
		require.Equal(t, http.StatusFound, resp.StatusCode)
		require.Equal(t, dest, resp.Header.Get("Location"))
	}
	require.Zero(t, two.conns.Load(), "a redirect not followed dials nothing")

	p.FollowRedirects = true
	resp, err := get(t, p, to(via.URL+"/ok"))
	require.NoError(t, err, "an allowed hop is followed")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for dest, want := range map[string][2]string{
		"http://169.254.169.254/latest/meta-data/": {"169.254.169.254:80", "always refused"},
		"http://[::ffff:169.254.169.254]/":         {"169.254.169.254:80", "always refused"},
		"http://10.0.0.5/":                         {"10.0.0.5:80", "private"},
		"http://192.168.0.1:8080/":                 {"192.168.0.1:8080", "private"},
		two.URL + "/":                              {two.Listener.Addr().String(), "loopback"},
		"ftp://127.0.0.1/":                         {"ftp://127.0.0.1", "only http and https"},
		"file:///etc/passwd":                       {"file://", "only http and https"},
	} {
		_, err := get(t, p, to(dest))
		requireRefused(t, err, want[0], want[1])
	}
	require.Zero(t, two.conns.Load(), "a refused hop dials nothing")
}

func TestTransportUsesNoProxy(t *testing.T) {
	require.Nil(t, egress.Policy{}.Transport().Proxy, "a proxy would dial the destination for us, unchecked")
}

func TestAddAllowed(t *testing.T) {
	var p egress.Policy
	require.NoError(t, p.AddAllowed(" 10.1.0.0/16,, 192.168.7.9 ,fd12::/48,[::1],::ffff:10.9.0.0/112, Build.Internal., queue_1.corp"))
	require.Equal(t, []netip.Prefix{
		netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("192.168.7.9/32"), netip.MustParsePrefix("fd12::/48"),
		netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("10.9.0.0/16"),
	}, p.Allow)
	require.Equal(t, []string{"build.internal", "queue_1.corp"}, p.AllowHosts)
	require.NoError(t, p.AddAllowed("10.1.2.3/8"))
	require.Equal(t, netip.MustParsePrefix("10.0.0.0/8"), p.Allow[len(p.Allow)-1], "masked")

	for entry, says := range map[string]string{
		"169.254.169.254":       "always refused",
		"169.254.0.0/16":        "always refused",
		"fd00:ec2::254":         "always refused",
		"100.100.100.200":       "always refused",
		"0.0.0.0/8":             "always refused",
		"::":                    "always refused",
		"10.0.0.0/33":           "CIDR",
		"http://example.com":    "host name",
		"example.com:8080":      "host name",
		"*.example.com":         "host name",
		"2130706433":            "unusual spelling",
		"127.1":                 "unusual spelling",
		"0x7f000001":            "unusual spelling",
		"fe80::1%eth0":          "zone",
		"::ffff:0:0/95":         "/96",
		"-bad.example":          "host name",
		"exa mple.com":          "host name",
		strings.Repeat("a", 64): "host name",
	} {
		var p egress.Policy
		err := p.AddAllowed(entry)
		require.Error(t, err, entry)
		require.Contains(t, err.Error(), says, entry)
		require.Contains(t, err.Error(), strconv.Quote(entry), "the error names the entry")
	}
}

func TestRefusedErrorMessage(t *testing.T) {
	err := egress.Policy{}.Check(netip.MustParseAddrPort("10.0.0.5:80"))
	require.EqualError(t, err, "destination 10.0.0.5:80 refused by policy: a private address (allow it with --egress-allow 10.0.0.0/8 or --egress-allow-private)")
	require.Equal(t, "loopback refused, private refused, redirects not followed", egress.Policy{}.String())
	require.Equal(t, "loopback allowed, private refused, redirects followed, also allowed: 10.0.0.0/8, a.test",
		egress.Policy{AllowLoopback: true, FollowRedirects: true, Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, AllowHosts: []string{"a.test"}}.String())
}

// dnsServer is a tiny DNS server on UDP: it answers A queries with what
// answer returns for the name (in lower case) and the how-manieth A query of it this is,
// and every other query with no records.
type dnsServer struct {
	conn   net.PacketConn
	answer func(name string, n int) []netip.Addr
	mu     sync.Mutex
	asked  map[string]int
}

func newDNSServer(t *testing.T, answer func(name string, n int) []netip.Addr) *dnsServer {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	s := &dnsServer{conn: conn, answer: answer, asked: map[string]int{}}
	go s.serve()
	return s
}

func (s *dnsServer) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if reply, err := s.reply(buf[:n]); err == nil {
			_, _ = s.conn.WriteTo(reply, from)
		}
	}
}

func (s *dnsServer) reply(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if q.Type == dnsmessage.TypeA {
		s.mu.Lock()
		name := strings.ToLower(q.Name.String())
		s.asked[name]++
		n := s.asked[name]
		s.mu.Unlock()
		for _, ip := range s.answer(name, n) {
			rh := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 0}
			if err := b.AResource(rh, dnsmessage.AResource{A: ip.As4()}); err != nil {
				return nil, err
			}
		}
	}
	return b.Finish()
}

// resolver returns a resolver that asks only this server.
func (s *dnsServer) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.conn.LocalAddr().String())
	}}
}

// TestRedirectToAnotherOriginCarriesNoCredentials: a redirect to another
// port of the same host (another origin, the same domain to Go's client)
// carries no Authorization, cookies or Referer, nor does any later hop of
// the chain, even one back to the first origin; a redirect within the
// origin keeps them.
func TestRedirectToAnotherOriginCarriesNoCredentials(t *testing.T) {
	t.Parallel()
	got := make(chan http.Header, 4)
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusTemporaryRedirect)
			return
		}
		got <- r.Header.Clone()
	})
	first := newTarget(t, "127.0.0.1:0", record)
	other := newTarget(t, "127.0.0.1:0", record)
	p := egress.Policy{AllowLoopback: true, FollowRedirects: true}
	send := func(url string) http.Header {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer s3cr3t")
		req.Header.Set("Proxy-Authorization", "Basic s3cr3t")
		req.Header.Set("Cookie", "session=s3cr3t")
		req.Header.Set("Accept", "application/json")
		c := p.Client()
		defer c.CloseIdleConnections()
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return <-got
	}

	h := send(first.URL + "/?to=" + url.QueryEscape(other.URL+"/landed"))
	for _, name := range []string{"Authorization", "Proxy-Authorization", "Cookie", "Referer"} {
		require.Empty(t, h.Get(name), "%s went to another port", name)
	}
	require.Equal(t, "application/json", h.Get("Accept"), "what is no credential follows")

	back := first.URL + "/landed"
	h = send(first.URL + "/?to=" + url.QueryEscape(other.URL+"/?to="+url.QueryEscape(back)))
	require.Empty(t, h.Get("Authorization"), "once the chain left the origin, credentials stay behind")

	h = send(first.URL + "/?to=" + url.QueryEscape(back))
	require.Equal(t, "Bearer s3cr3t", h.Get("Authorization"), "within the origin")
	require.Equal(t, "session=s3cr3t", h.Get("Cookie"))
}
