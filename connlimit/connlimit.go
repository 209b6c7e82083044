// Package connlimit caps the connections a listener holds at once, in all
// and per client address, so that clients that open connections and keep
// them (slowly, silently or by the thousand) cannot take every file
// descriptor of the process, and other clients still get in.
package connlimit

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Limits are a Listener's caps; zero is no cap.
type Limits struct {
	// Total caps the connections open at once.
	Total int
	// PerClient caps the connections of one client address (an IPv4
	// address, or an IPv6 /64, the smallest block a site is given). Behind
	// a load balancer or a proxy every client has the proxy's address.
	PerClient int
}

// logEvery is how often, at most, a Listener logs the connections it
// refused: a flood of them must not become a flood of log lines.
const logEvery = time.Minute

// Listener is a net.Listener that holds at most its Limits' connections.
// Accept accepts a connection over a cap and closes it at once, so that
// the kernel's backlog never fills with them and a client under its cap
// is still accepted; the refused client sees its connection reset.
// A connection Accept returns counts until it is closed.
type Listener struct {
	net.Listener
	limits Limits
	log    *slog.Logger

	mu       sync.Mutex
	open     int
	clients  map[string]int // open connections by client, only those with some
	refused  refusals       // since the last log line
	lastLog  time.Time
	logEvery time.Duration
}

// refusals counts refused connections by the cap they met.
type refusals struct {
	total, perClient int
	lastClient       string
}

// New returns ln with the caps of limits. It logs the connections it
// refuses to log: at once the first time, then at most once a minute.
func New(ln net.Listener, limits Limits, log *slog.Logger) *Listener {
	return &Listener{Listener: ln, limits: limits, log: log, clients: map[string]int{}, logEvery: logEvery}
}

// Accept waits for and returns the next connection within the caps.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := Client(c.RemoteAddr())
		if l.admit(client) {
			return &conn{Conn: c, release: sync.OnceFunc(func() { l.release(client) })}, nil
		}
		if tc, ok := c.(*net.TCPConn); ok {
			// A reset rather than a FIN: the client learns at once, and
			// this side keeps no TIME_WAIT state for it.
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}
}

// admit counts a connection of client if the caps allow it, or counts
// its refusal.
func (l *Listener) admit(client string) bool {
	l.mu.Lock()
	switch {
	case l.limits.Total > 0 && l.open >= l.limits.Total:
		l.refused.total++
	case l.limits.PerClient > 0 && l.clients[client] >= l.limits.PerClient:
		l.refused.perClient++
	default:
		l.open++
		l.clients[client]++
		l.mu.Unlock()
		return true
	}
	l.refused.lastClient = client
	var report refusals
	now := time.Now()
	due := now.Sub(l.lastLog) >= l.logEvery
	if due {
		report, l.refused, l.lastLog = l.refused, refusals{}, now
	}
	open := l.open
	l.mu.Unlock()
	if due {
		l.log.Warn("connections refused: over the cap of connections open at once",
			"overTotal", report.total, "overPerClient", report.perClient, "lastClient", report.lastClient,
			"open", open, "maxConnections", l.limits.Total, "maxConnectionsPerClient", l.limits.PerClient)
	}
	return false
}

func (l *Listener) release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.clients[client]--; l.clients[client] <= 0 {
		delete(l.clients, client)
	}
}

// Client returns the client an address counts against: an IPv4 address,
// an IPv6 /64 (IPv4-mapped IPv6 addresses are IPv4), or for an address
// that is not IP, its network and string.
func Client(addr net.Addr) string {
	var ap netip.AddrPort
	switch a := addr.(type) {
	case *net.TCPAddr:
		ap = a.AddrPort()
	case *net.UDPAddr:
		ap = a.AddrPort()
	default:
		return addr.Network() + ":" + addr.String()
	}
	ip := ap.Addr().Unmap()
	if !ip.IsValid() {
		return addr.Network() + ":" + addr.String()
	}
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.WithZone("").Prefix(64)
	if err != nil {
		return addr.Network() + ":" + addr.String()
	}
	return p.String()
}

// conn releases its place in the caps when it is first closed.
type conn struct {
	net.Conn
	release func()
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// CloseWrite half-closes a TCP connection: net/http does, before it
// closes a connection whose request it did not read to the end, so that
// the client reads the answer before any reset.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}
