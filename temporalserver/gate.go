package temporalserver

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"
)

// The Temporal server makes its frontend's listener itself, from its
// config, and takes no listener or gRPC option to cap its connections. So
// the frontend listens on a loopback port of its own, and its configured
// port is a gate: a listener with connection caps (connlimit) that passes
// each connection's bytes to the frontend. recur's own clients in the
// process dial the frontend itself, behind no cap, so that clients
// holding the gate's connections cannot lock out recur's worker or API.

// DefaultSilenceTimeout is how long a connection to the frontend may stay
// silent before its first bytes: a gRPC client sends its connection
// preface at once, so one that sends nothing holds a connection for
// nothing. It matches the 10 s recur's HTTP servers give a request head.
const DefaultSilenceTimeout = 10 * time.Second

// gateBuffer is each direction's copy buffer: an HTTP/2 frame of the
// default size.
const gateBuffer = 16 << 10

// gate is the frontend's configured port.
type gate struct {
	ln       net.Listener
	backend  string
	silence  time.Duration
	log      *slog.Logger
	accepted sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // both ends of every connection passed on
	closed bool
	passes sync.WaitGroup
}

// openGate opens a gate of ln (already capped) to the frontend at
// backend.
func openGate(ln net.Listener, backend string, silence time.Duration, log *slog.Logger) *gate {
	g := &gate{ln: ln, backend: backend, silence: silence, log: log, conns: map[net.Conn]struct{}{}}
	g.accepted.Go(g.serve)
	return g
}

// serve accepts connections until close. A failed Accept other than the
// listener's closing (too many open files) is waited out as net/http
// does, not taken for the end.
func (g *gate) serve() {
	var wait time.Duration
	for {
		c, err := g.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			wait = min(max(2*wait, 5*time.Millisecond), time.Second)
			g.log.Warn("temporal frontend: accept failed; retrying", "error", err, "in", wait)
			time.Sleep(wait)
			continue
		}
		wait = 0
		if !g.track(c) {
			_ = c.Close()
			return
		}
		g.passes.Go(func() { g.pass(c) })
	}
}

// pass passes c's bytes to the frontend and back until either side ends.
func (g *gate) pass(c net.Conn) {
	defer g.drop(c)
	first := make([]byte, gateBuffer)
	_ = c.SetReadDeadline(time.Now().Add(g.silence))
	n, err := c.Read(first)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	b, err := net.DialTimeout("tcp", g.backend, 5*time.Second)
	if err != nil {
		g.log.Warn("temporal frontend: cannot reach it from its port", "error", err)
		return
	}
	if !g.track(b) {
		_ = b.Close()
		return
	}
	defer g.drop(b)
	if _, err := b.Write(first[:n]); err != nil {
		return
	}
	up := make(chan struct{})
	go func() {
		defer close(up)
		_, _ = io.CopyBuffer(writerOnly{b}, readerOnly{c}, first)
		// The client is done sending; the frontend closes once it has
		// answered, which ends the copy below.
		if cw, ok := b.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}()
	_, _ = io.CopyBuffer(writerOnly{c}, readerOnly{b}, make([]byte, gateBuffer))
	// The frontend closed (or failed): so does the client's side, which
	// ends the copy above.
	_ = c.Close()
	_ = b.Close()
	<-up
}

// track counts c among the gate's connections, unless the gate is closed.
func (g *gate) track(c net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.conns[c] = struct{}{}
	return true
}

func (g *gate) drop(c net.Conn) {
	_ = c.Close()
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.conns, c)
}

// close stops accepting, closes every connection and waits until no
// goroutine of the gate is left.
func (g *gate) close() {
	_ = g.ln.Close()
	g.mu.Lock()
	g.closed = true
	for c := range g.conns {
		_ = c.Close()
	}
	g.mu.Unlock()
	g.accepted.Wait()
	g.passes.Wait()
}

// readerOnly and writerOnly hide a connection's ReadFrom and WriteTo, so
// that io.CopyBuffer uses the buffer it is given: a TCP connection's own
// copy takes a 32 KiB buffer of its own, or a pipe (two file descriptors)
// to splice through.
type readerOnly struct{ io.Reader }

type writerOnly struct{ io.Writer }
