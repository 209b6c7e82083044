package connlimit

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/syncbuf"
)

// server is a Listener on a loopback port whose accepted connections
// arrive on a channel, in the order Accept returned them.
type server struct {
	ln       *Listener
	accepted chan net.Conn
	logs     *syncbuf.Buffer
}

func newServer(t *testing.T, limits Limits) *server {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &server{accepted: make(chan net.Conn, 100), logs: &syncbuf.Buffer{}}
	s.ln = New(inner, limits, slog.New(slog.NewTextHandler(s.logs, nil)))
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := s.ln.Accept()
			if err != nil {
				return
			}
			select {
			case s.accepted <- c:
			case <-stop:
				_ = c.Close()
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		_ = s.ln.Close()
		<-done
		close(s.accepted)
		for c := range s.accepted {
			_ = c.Close()
		}
	})
	return s
}

// dial connects from the loopback address from (127.0.0.1, 127.0.0.2,
// ...: different clients) and closes the connection at the test's end.
func (s *server) dial(t *testing.T, from string) net.Conn {
	t.Helper()
	c, err := s.connect(from)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func (s *server) connect(from string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	return d.Dial("tcp", s.ln.Addr().String())
}

// requireRefused requires a connection from from to be closed by the
// server at once. On loopback the reset can come before the dial ends.
func (s *server) requireRefused(t *testing.T, from string) {
	t.Helper()
	require.NoError(t, s.refused(from))
}

func (s *server) refused(from string) error {
	c, err := s.connect(from)
	if errors.Is(err, syscall.ECONNRESET) {
		return nil
	}
	if err != nil {
		return err
	}
	defer c.Close()
	_, _ = c.Write([]byte("PUT / HTTP/1.1\r\nContent-Length: 1000\r\n\r\n{\"p"))
	return closedByServer(c)
}

// next returns the next connection Accept returned.
func (s *server) next(t *testing.T) net.Conn {
	t.Helper()
	select {
	case c := <-s.accepted:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("Accept returned no connection within 10s")
		return nil
	}
}

// acceptedFrom requires the next connection Accept returns to be c's:
// since Accept returns connections in order, any dialed before c and
// not returned yet were refused.
func (s *server) acceptedFrom(t *testing.T, c net.Conn) net.Conn {
	t.Helper()
	got := s.next(t)
	require.Equal(t, c.LocalAddr().String(), got.RemoteAddr().String(), "Accept returned another connection than the one expected")
	return got
}

// closedByServer reports whether a read of c ends with EOF or a reset
// before a 10 s deadline, as it does once the server closed it.
func closedByServer(c net.Conn) error {
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	n, err := c.Read(make([]byte, 1))
	var ne net.Error
	switch {
	case n > 0:
		return errors.New("the server sent data")
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("the connection is still open after 10s: %w", err)
	case err == nil:
		return errors.New("read returned nothing and no error")
	}
	return nil
}

func TestPerClientCap(t *testing.T) {
	s := newServer(t, Limits{PerClient: 2})
	a1, a2 := s.dial(t, "127.0.0.1"), s.dial(t, "127.0.0.1")
	s.acceptedFrom(t, a1)
	held := s.acceptedFrom(t, a2)
	s.requireRefused(t, "127.0.0.1")
	other := s.dial(t, "127.0.0.2")
	s.acceptedFrom(t, other)

	require.NoError(t, held.Close())
	again := s.dial(t, "127.0.0.1")
	s.acceptedFrom(t, again)
	s.requireRefused(t, "127.0.0.1")
}

func TestTotalCap(t *testing.T) {
	s := newServer(t, Limits{Total: 2, PerClient: 5})
	first := s.acceptedFrom(t, s.dial(t, "127.0.0.1"))
	s.acceptedFrom(t, s.dial(t, "127.0.0.2"))
	s.requireRefused(t, "127.0.0.3")
	s.requireRefused(t, "127.0.0.1")

	require.NoError(t, first.Close())
	s.acceptedFrom(t, s.dial(t, "127.0.0.3"))
	s.requireRefused(t, "127.0.0.4")
}

func TestNoCaps(t *testing.T) {
	s := newServer(t, Limits{})
	for range 20 {
		s.acceptedFrom(t, s.dial(t, "127.0.0.1"))
	}
	assert.Empty(t, s.logs.String())
}

// TestCloseReleasesOnce: net/http closes a connection more than once; the
// second close must not free a second place.
func TestCloseReleasesOnce(t *testing.T) {
	s := newServer(t, Limits{Total: 1})
	c := s.acceptedFrom(t, s.dial(t, "127.0.0.1"))
	require.NoError(t, c.Close())
	_ = c.Close()
	s.acceptedFrom(t, s.dial(t, "127.0.0.1"))
	s.requireRefused(t, "127.0.0.1")
}

// TestRefusalsDoNotBlockOthers: a stream of connections over the cap is
// closed as fast as it comes, and a client under its cap gets in after it.
func TestRefusalsDoNotBlockOthers(t *testing.T) {
	s := newServer(t, Limits{PerClient: 1})
	s.acceptedFrom(t, s.dial(t, "127.0.0.1"))
	errs := make(chan error, 200)
	for range cap(errs) {
		go func() { errs <- s.refused("127.0.0.1") }()
	}
	for range cap(errs) {
		require.NoError(t, <-errs)
	}
	s.acceptedFrom(t, s.dial(t, "127.0.0.2"))
}

// TestRefusalsAreLoggedSparingly: the first refusal is logged at once;
// later ones are counted into the next line, at most one per logEvery.
func TestRefusalsAreLoggedSparingly(t *testing.T) {
	s := newServer(t, Limits{Total: 1})
	s.acceptedFrom(t, s.dial(t, "127.0.0.1"))
	for range 3 {
		s.requireRefused(t, "127.0.0.2")
	}
	lines := strings.Split(strings.TrimSpace(s.logs.String()), "\n")
	require.Len(t, lines, 1, s.logs.String())
	assert.Contains(t, lines[0], "level=WARN")
	assert.Contains(t, lines[0], "overTotal=1 overPerClient=0 lastClient=127.0.0.2 open=1 maxConnections=1")

	s.ln.mu.Lock()
	s.ln.logEvery = 0
	s.ln.mu.Unlock()
	s.requireRefused(t, "127.0.0.3")
	lines = strings.Split(strings.TrimSpace(s.logs.String()), "\n")
	require.Len(t, lines, 2, s.logs.String())
	assert.Contains(t, lines[1], "overTotal=3 overPerClient=0 lastClient=127.0.0.3", "the two refusals not logged, and this one")
}

func TestClient(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 1234}, "192.0.2.7"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:192.0.2.7"), Port: 1}, "192.0.2.7"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:aaaa::1"), Port: 1}, "2001:db8:1:2::/64"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:ffff::9"), Port: 2}, "2001:db8:1:2::/64"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:3::1"), Port: 1}, "2001:db8:1:3::/64"},
		{&net.TCPAddr{IP: net.ParseIP("fe80::1"), Zone: "eth0"}, "fe80::/64"},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 1}, "::/64"},
		{&net.UnixAddr{Name: "/run/recur.sock", Net: "unix"}, "unix:/run/recur.sock"},
		{&net.TCPAddr{}, "tcp::0"},
	} {
		assert.Equal(t, tc.want, Client(tc.addr), tc.addr.String())
	}
}
