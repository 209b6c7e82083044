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

// DefaultSilenceTimeout is how long a connection to the frontend may go
// from its opening to its first call (the HTTP/2 HEADERS frame of a gRPC
// request): a gRPC client connects when it has a call to make and sends
// it once the server's settings are in, so one that sends nothing, or
// only the connection preface, holds a connection for nothing (the
// frontend's own handshake timeout is gRPC's 120 s). It matches the 10 s
// recur's HTTP servers give a request head.
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
// c's first call must begin within the silence timeout (firstCall).
func (g *gate) pass(c net.Conn) {
	defer g.drop(c)
	first := make([]byte, gateBuffer)
	_ = c.SetReadDeadline(time.Now().Add(g.silence))
	n, err := c.Read(first)
	if err != nil {
		return
	}
	var call firstCall
	if call.seen(first[:n]) {
		_ = c.SetReadDeadline(time.Time{})
	}
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
		if !call.seen(nil) && !g.passUntilFirstCall(c, b, first, &call) {
			// No call began in time, or a side failed first: both close,
			// which ends the copy below.
			_ = c.Close()
			_ = b.Close()
			return
		}
		_ = c.SetReadDeadline(time.Time{})
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

// passUntilFirstCall passes c's bytes to b, through buf, until call has
// seen the first call begin (true) or c fails, its read deadline passed
// included, or b does (false).
func (g *gate) passUntilFirstCall(c, b net.Conn, buf []byte, call *firstCall) bool {
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := b.Write(buf[:n]); werr != nil {
				return false
			}
			if call.seen(buf[:n]) {
				return true
			}
		}
		if err != nil {
			return false
		}
	}
}

// firstCall reads a client's side of an HTTP/2 connection as it passes
// until the frame that begins its first call (HEADERS): the connection
// preface, then frames of a 9-byte head (a 24-bit length, the type, the
// flags, the stream) and their payload. Bytes that are not HTTP/2 never
// reach a HEADERS frame; the frontend closes them.
type firstCall struct {
	read   int64 // bytes of the connection seen
	next   int64 // where the next frame's head starts
	head   [9]byte
	inHead int // bytes of that head seen
	found  bool
}

// http2Preface is what an HTTP/2 client sends first (RFC 9113, 3.4).
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// http2Headers is the type of a HEADERS frame.
const http2Headers = 0x1

// seen takes the next bytes of the connection and reports whether the
// first call has begun.
func (f *firstCall) seen(p []byte) bool {
	if f.next == 0 {
		f.next = int64(len(http2Preface))
	}
	for len(p) > 0 && !f.found {
		if skip := f.next - f.read; skip > 0 { // the preface, or a payload
			n := min(skip, int64(len(p)))
			f.read += n
			p = p[n:]
			continue
		}
		n := copy(f.head[f.inHead:], p)
		f.inHead += n
		f.read += int64(n)
		p = p[n:]
		if f.inHead < len(f.head) {
			break
		}
		length := int64(f.head[0])<<16 | int64(f.head[1])<<8 | int64(f.head[2])
		f.found = f.head[3] == http2Headers
		f.next, f.inHead = f.read+length, 0
	}
	return f.found
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
