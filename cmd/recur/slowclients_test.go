package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/syncbuf"
)

// slowDeadline is how long a test waits for the server to close a
// connection whose request never ends: generous, so that only a server
// that never closes it fails (recur's own timeouts are in http.go).
const slowDeadline = 60 * time.Second

// TestSlowClients runs `recur dev` with 1024 file descriptors (ulimit -n),
// as issue 16's hostile-tenant probe ran it with 20,000: requests whose
// body never arrives are answered and closed, with a token and without
// one (whose 401 once waited for the body); 2000 of them from one address
// leave /healthz answering another, the embedded Temporal server working,
// and every one of them closed.
func TestSlowClients(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it holds 2000 slow requests open (about 30 s)")
	}
	bin := buildRecur(t)
	const token = "slow-clients-token-0123456789"
	apiPort := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(apiPort)
	p := &devProcess{api: "http://" + addr, output: &syncbuf.Buffer{}, done: make(chan error, 1)}
	// exec keeps the shell's pid, so that signals reach recur.
	p.launchEnv(t, "/bin/sh", []string{"RECUR_API_TOKENS=" + token + "=*"}, "-c", `ulimit -n 1024 && exec "$0" "$@"`,
		bin, "dev", "--data-dir", t.TempDir(), "--http-addr", addr, "--temporal-port", strconv.Itoa(freePort(t)), "--ui-port", "0")
	other := clientFrom("127.0.0.2")
	require.Eventually(t, func() bool { return get(other, p.api+"/readyz") == nil },
		90*time.Second, 250*time.Millisecond, "recur dev never became ready:\n%s", p.output)

	t.Run("body never arrives", func(t *testing.T) {
		for _, tc := range []struct {
			name, token, status string
		}{
			{"with a token", token, "400"},
			{"without a token", "", "401"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				c, err := slowRequest(addr, "127.0.0.1", tc.token)
				require.NoError(t, err)
				defer c.Close()
				require.NoError(t, c.SetReadDeadline(time.Now().Add(slowDeadline)))
				answer, err := io.ReadAll(c)
				require.NoError(t, err, "the server must answer and close the connection; it sent %q", answer)
				require.True(t, strings.HasPrefix(string(answer), "HTTP/1.1 "+tc.status+" "), "%q", answer)
			})
		}
	})

	t.Run("2000 of them from one address", func(t *testing.T) {
		var f flood
		done := make(chan struct{})
		go func() {
			defer close(done)
			f.run(addr, 2000, 64)
		}()
		for probing := true; probing; {
			select {
			case <-done:
				probing = false
			case <-time.After(200 * time.Millisecond):
			}
			require.NoError(t, get(other, p.api+"/healthz"), "/healthz from another address, %d connections attempted", f.attempted.Load())
		}
		require.NoError(t, get(other, p.api+"/readyz"), "the embedded Temporal server still answers")
		f.wait()
		t.Logf("2000 slow requests: %d refused at once, %d held and closed later, %d dial errors", f.refused.Load(), f.closed.Load(), f.dialErrors.Load())
		require.Zero(t, f.dialErrors.Load(), "every connection attempt reaches the server")
		require.Zero(t, f.open.Load(), "every connection is closed by the server within %s", slowDeadline)
		require.Positive(t, f.refused.Load(), "connections over the cap are refused at once")
		assert.Contains(t, p.output.String(), "connections refused")
		assert.NotContains(t, p.output.String(), "too many open files")
	})
	p.stop(t, os.Interrupt)
}

// slowCollection is the path of a PUT whose body never arrives.
const slowCollection = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/slow?api-version=2016-03-01"

// slowRequest connects from the loopback address from and sends a PUT
// of slowCollection whose body never arrives.
func slowRequest(addr, from, token string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return c, writeSlowRequest(c, addr, http.MethodPut, slowCollection, token)
}

// writeSlowRequest writes a request whose head announces 1000 bytes of
// body, and 3 of them.
func writeSlowRequest(w io.Writer, host, method, path, token string) error {
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	_, err := fmt.Fprintf(w, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n%s\r\n{\"p",
		method, path, host, auth)
	return err
}

// flood opens slow requests and counts how the server ends them.
type flood struct {
	attempted, dialErrors atomic.Int64
	// refused: reset before the request was sent, or with no answer;
	// closed: answered or closed later; open: not closed by slowDeadline.
	refused, closed, open atomic.Int64
	readers               sync.WaitGroup
}

// run attempts n slow requests from 127.0.0.1, parallel at a time, and
// returns once all are attempted; each connection is kept until the server
// closes it.
func (f *flood) run(addr string, n, parallel int) {
	sem := make(chan struct{}, parallel)
	var dialers sync.WaitGroup
	for range n {
		sem <- struct{}{}
		f.attempted.Add(1)
		dialers.Go(func() {
			defer func() { <-sem }()
			c, err := slowRequest(addr, "127.0.0.1", "")
			switch {
			case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
				f.refused.Add(1)
				if c != nil {
					c.Close()
				}
				return
			case err != nil:
				f.dialErrors.Add(1)
				return
			}
			f.readers.Go(func() { f.await(c) })
		})
	}
	dialers.Wait()
}

// await reads c until the server closes it or slowDeadline passes.
func (f *flood) await(c net.Conn) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(slowDeadline))
	answer, err := io.ReadAll(c)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		f.open.Add(1)
	case len(answer) == 0:
		f.refused.Add(1)
	default:
		f.closed.Add(1)
	}
}

// wait waits for every connection to be closed or to pass slowDeadline.
func (f *flood) wait() { f.readers.Wait() }

// clientFrom is an HTTP client whose connections come from the loopback
// address from: another client, for recur, than 127.0.0.1.
func clientFrom(from string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// get requires url to answer 200.
func get(c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return nil
}

// TestDevCapsTheFrontendAndTheUI: --max-connections-per-client caps the
// embedded frontend's port and the Web UI of `recur dev` as it caps the
// API: a client address past it is reset at once, another gets in, and
// recur's own worker and API, which dial the frontend behind its port,
// stay ready.
func TestDevCapsTheFrontendAndTheUI(t *testing.T) {
	bin := buildRecur(t)
	apiPort, temporalPort, uiPort := freePort(t), freePort(t), freePort(t)
	p := &devProcess{api: "http://127.0.0.1:" + strconv.Itoa(apiPort), output: &syncbuf.Buffer{}, done: make(chan error, 1)}
	p.start(t, bin, "dev", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:"+strconv.Itoa(apiPort),
		"--temporal-port", strconv.Itoa(temporalPort), "--ui-port", strconv.Itoa(uiPort), "--max-connections-per-client", "2")
	for _, l := range []struct {
		name, addr string
		// hello is what a client first sends: the HTTP/2 preface of a
		// gRPC client, or a request whose body never arrives.
		hello func(net.Conn) error
	}{
		{"frontend", "127.0.0.1:" + strconv.Itoa(temporalPort), func(c net.Conn) error {
			_, err := c.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
			return err
		}},
		{"web ui", "127.0.0.1:" + strconv.Itoa(uiPort), func(c net.Conn) error {
			return writeSlowRequest(c, "ui", http.MethodPut, "/api/v1/namespaces", "")
		}},
	} {
		name, addr := l.name, l.addr
		connect := func() (net.Conn, error) {
			c, err := dialerFrom("127.0.0.3").Dial("tcp", addr)
			if err != nil {
				return nil, err
			}
			return c, l.hello(c)
		}
		var held []net.Conn
		for range 2 {
			c, err := connect()
			require.NoError(t, err, name)
			held = append(held, c)
		}
		c, err := connect()
		if err == nil {
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			var answer []byte
			answer, err = io.ReadAll(c)
			require.Empty(t, answer, "%s: the third connection is refused, not answered", name)
			var ne net.Error
			require.False(t, errors.As(err, &ne) && ne.Timeout(), "%s: the third connection is closed at once", name)
			c.Close()
		}
		other, err := dialerFrom("127.0.0.4").Dial("tcp", addr)
		require.NoError(t, err, name)
		require.NoError(t, other.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
		_, err = other.Read(make([]byte, 1))
		var ne net.Error
		require.True(t, errors.As(err, &ne) && ne.Timeout(), "%s: another address is let in: %v", name, err)
		other.Close()
		for _, c := range held {
			c.Close()
		}
	}
	require.NoError(t, get(clientFrom("127.0.0.2"), p.api+"/readyz"), "recur's own clients are past the caps")
	require.Contains(t, p.output.String(), `"listener":"temporal frontend"`)
	require.Contains(t, p.output.String(), `"listener":"temporal web ui"`)
	p.stop(t, os.Interrupt)
}

// dialerFrom dials from the loopback address from.
func dialerFrom(from string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
}
