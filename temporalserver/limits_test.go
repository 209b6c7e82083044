package temporalserver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"

	"github.com/recurhq/recur/connlimit"
	"github.com/recurhq/recur/temporalserver"
)

// attackTimeout is how long the attacker tests wait for the server to
// close a connection: far past the 1 s timeouts they set, far short of
// the 120 s the frontend and the UI once held one.
const attackTimeout = 5 * time.Second

// TestFrontendAndUIHoldTheirCaps attacks the frontend's port and the Web
// UI as issue 34 did: one client address holds all the connections its
// cap allows, and the next ones are closed at once while a client from
// another address still gets its answer; a silent connection, and on the
// UI a request head trickled a byte at a time, is closed after the
// timeout.
func TestFrontendAndUIHoldTheirCaps(t *testing.T) {
	t.Parallel()
	const perClient = 4
	s := start(t, temporalserver.Config{
		DataDir: t.TempDir(), FrontendPort: freePort(t), UIPort: freePort(t),
		Limits:         connlimit.Limits{Total: 64, PerClient: perClient},
		SilenceTimeout: time.Second,
		UIServer: func(h http.Handler) *http.Server {
			srv := temporalserver.DefaultUIServer(h)
			srv.ReadHeaderTimeout = time.Second
			return srv
		},
		Logger: testLogger(t),
	})
	ui := strings.TrimPrefix(s.UIAddress(), "http://")

	t.Run("frontend", func(t *testing.T) {
		for range perClient {
			c := connect(t, "127.0.0.1", s.FrontendAddress())
			beginCall(t, c)
			require.Error(t, closedWithin(c, 300*time.Millisecond), "a connection within the cap is held")
		}
		for range 3 {
			require.NoError(t, refused(t, "127.0.0.1", s.FrontendAddress()), "a connection over the cap is closed at once")
		}
		c := sdkClientFrom(t, "127.0.0.2", s.FrontendAddress(), s.Namespace())
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		_, err := c.CheckHealth(ctx, nil)
		require.NoError(t, err, "another client still reaches the frontend through its port")

		silent := connect(t, "127.0.0.3", s.FrontendAddress())
		require.NoError(t, closedWithin(silent, attackTimeout), "a silent connection is closed")

		prefaceOnly := connect(t, "127.0.0.5", s.FrontendAddress())
		_, err = prefaceOnly.Write([]byte(http2.ClientPreface))
		require.NoError(t, err)
		require.NoError(t, closedWithin(prefaceOnly, attackTimeout), "a connection that sends only the preface is closed")

		settled := connect(t, "127.0.0.6", s.FrontendAddress())
		_, err = settled.Write([]byte(http2.ClientPreface))
		require.NoError(t, err)
		fr := http2.NewFramer(settled, settled)
		require.NoError(t, fr.WriteSettings())
		require.NoError(t, fr.WritePing(false, [8]byte{}))
		require.NoError(t, closedWithin(settled, attackTimeout), "a connection that makes no call is closed")
	})

	t.Run("web ui", func(t *testing.T) {
		for range perClient {
			c := connect(t, "127.0.0.1", ui)
			_, err := fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", ui)
			require.NoError(t, err)
			require.Error(t, closedWithin(c, 300*time.Millisecond), "a connection within the cap is held")
		}
		for range 3 {
			require.NoError(t, refused(t, "127.0.0.1", ui), "a connection over the cap is closed at once")
		}
		other := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: dialerFrom("127.0.0.2").DialContext}}
		resp, err := other.Get(s.UIAddress() + "/healthz")
		require.NoError(t, err, "another client still gets its answer")
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)

		silent := connect(t, "127.0.0.3", ui)
		require.NoError(t, closedWithin(silent, attackTimeout), "a silent connection is closed")

		trickled := connect(t, "127.0.0.4", ui)
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			for _, b := range []byte("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 100)) {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if _, err := trickled.Write([]byte{b}); err != nil {
					return
				}
			}
		}()
		require.NoError(t, closedWithin(trickled, attackTimeout), "a trickled request head is cut off")
	})
}

// beginCall begins a gRPC call on c and leaves it open, its request's
// message never sent: a connection the frontend holds as it would any
// client's in the middle of a call.
func beginCall(t *testing.T, c net.Conn) {
	t.Helper()
	_, err := c.Write([]byte(http2.ClientPreface))
	require.NoError(t, err)
	fr := http2.NewFramer(c, c)
	require.NoError(t, fr.WriteSettings())
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":authority", "frontend"},
		{":path", "/temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo"},
		{"content-type", "application/grpc"}, {"te", "trailers"}} {
		require.NoError(t, enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}))
	}
	require.NoError(t, fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndHeaders: true}))
}

func dialerFrom(from string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
}

// connect connects from the loopback address from to addr and closes
// the connection when the test ends.
func connect(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	c, err := dialerFrom(from).Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// refused returns nil if a connection from from to addr is reset as it
// opens (on loopback the reset can come before the dial ends) or closed
// within attackTimeout.
func refused(t *testing.T, from, addr string) error {
	c, err := dialerFrom(from).Dial("tcp", addr)
	if errors.Is(err, syscall.ECONNRESET) {
		return nil
	}
	if err != nil {
		return err
	}
	t.Cleanup(func() { _ = c.Close() })
	return closedWithin(c, attackTimeout)
}

// closedWithin returns nil once the server closed c (EOF or a reset,
// after whatever it answered), an error if c is still open after d.
func closedWithin(c net.Conn, d time.Duration) error {
	if err := c.SetReadDeadline(time.Now().Add(d)); err != nil {
		return err
	}
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("the connection is still open after %s", d)
	}
	return nil
}

// sdkClientFrom is an SDK client whose connection comes from the loopback
// address from.
func sdkClientFrom(t *testing.T, from, addr, namespace string) client.Client {
	t.Helper()
	d := dialerFrom(from)
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: namespace,
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{
			grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return d.DialContext(ctx, "tcp", a) }),
		}}})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}
