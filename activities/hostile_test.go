package activities

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/recurhq/recur/jobs"
)

// hostileLimit is the attempt timeout of these tests: short, so that a
// target that hangs costs the suite little, yet long enough for a loaded
// machine to do the rest of an attempt well within it.
const hostileLimit = 2 * time.Second

// secretQuery is a query a job's URI may carry (a SAS token, say): no
// message may repeat it.
const secretQuery = "?sig=s3cr3t-in-query"

// attempt is the outcome of one run of the HTTP activity.
type attempt struct {
	out     jobs.HTTPResponse // the result, or the details of the failure
	err     *temporal.ApplicationError
	elapsed time.Duration
}

// runAttempt runs the HTTP activity once against uri with hostileLimit as
// its timeout, as a worker would, and returns what it reported.
func runAttempt(t *testing.T, uri string) attempt {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := New(localPolicy)
	env.RegisterActivity(a)
	began := time.Now()
	val, err := env.ExecuteActivity(a.HTTP, jobs.HTTPRequestInput{
		ActionName: jobs.MainAction, Request: jobs.HTTPRequest{URI: uri, Method: http.MethodGet},
		OccurrenceID: "job:s/rg/c/j@2026-01-01T00:00:00Z",
		Key:          jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}, Timeout: hostileLimit,
	})
	got := attempt{elapsed: time.Since(began)}
	if err != nil {
		got.err = requireAppError(t, err)
		if got.err.HasDetails() {
			require.NoError(t, got.err.Details(&got.out))
		}
		return got
	}
	require.NoError(t, val.Get(&got.out))
	return got
}

// requireRetryableTransport checks that a failed attempt is a retryable
// transport failure whose message names what went wrong (want) and never
// the URI's query.
func requireRetryableTransport(t *testing.T, got attempt, want string) {
	t.Helper()
	require.NotNil(t, got.err, "the attempt fails: %+v", got.out)
	require.Equal(t, ErrTypeTransport, got.err.Type(), got.err.Message())
	require.False(t, got.err.NonRetryable(), "retried per the job's policy: %s", got.err.Message())
	require.Contains(t, got.err.Message(), want)
	require.NotContains(t, got.err.Message(), "s3cr3t", "the query may hold a secret")
	require.Less(t, got.elapsed, hostileLimit+3*time.Second, "the attempt ends by its timeout")
}

// rawTarget is a TCP server speaking just enough HTTP to read a request's
// head; then serve does whatever it does to the connection. It returns the
// target's base URL.
func rawTarget(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
					serve(c)
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// waitForClose blocks until the client hangs up: a target that never
// answers.
func waitForClose(c net.Conn) { _, _ = io.Copy(io.Discard, c) }

// reset aborts the connection with a TCP RST instead of an answer.
func reset(c net.Conn) {
	_ = c.(*net.TCPConn).SetLinger(0)
	_ = c.Close()
}

// garbage answers with bytes that are not HTTP.
func garbage(c net.Conn) {
	_, _ = c.Write([]byte("\x00\x01garbage\xff\xfe\r\n\r\n"))
}

func TestHostileTargetHangs(t *testing.T) {
	t.Parallel()
	got := runAttempt(t, rawTarget(t, waitForClose)+"/hang"+secretQuery)
	requireRetryableTransport(t, got, "timed out after 2s")
	require.GreaterOrEqual(t, got.elapsed, hostileLimit, "the attempt waited its whole timeout")
	require.Contains(t, got.err.Message(), "/hang", "the message names the target, without its query")
}

func TestHostileTargetHangsMidBody(t *testing.T) {
	t.Parallel()
	uri := rawTarget(t, func(c net.Conn) {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nthe first part")
		waitForClose(c)
	}) + "/slow" + secretQuery
	got := runAttempt(t, uri)
	requireRetryableTransport(t, got, "timed out after 2s")
	require.Contains(t, got.err.Message(), "200 OK", "the status that did arrive is told")
	require.Equal(t, 200, got.out.StatusCode)
	require.Equal(t, "the first part", got.out.Body, "history keeps what arrived")
}

func TestHostileTargetResetsConnection(t *testing.T) {
	t.Parallel()
	got := runAttempt(t, rawTarget(t, reset)+"/reset"+secretQuery)
	requireRetryableTransport(t, got, "reset")
}

func TestHostileTargetResetsMidBody(t *testing.T) {
	t.Parallel()
	uri := rawTarget(t, func(c net.Conn) {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nthe first part")
		reset(c)
	}) + "/reset" + secretQuery
	got := runAttempt(t, uri)
	requireRetryableTransport(t, got, "reset")
	require.Equal(t, 200, got.out.StatusCode)
}

func TestHostileTargetAnswersGarbage(t *testing.T) {
	t.Parallel()
	got := runAttempt(t, rawTarget(t, garbage)+"/garbage"+secretQuery)
	requireRetryableTransport(t, got, "malformed HTTP")
}

// TestHostileTargetAnswersALongLineOfGarbage: net/http quotes the line it
// could not parse in its error, escaped, so 1 MB of garbage would make a
// 4 MB message, too big for Temporal to take; 256 KB show the clipping.
func TestHostileTargetAnswersALongLineOfGarbage(t *testing.T) {
	t.Parallel()
	uri := rawTarget(t, func(c net.Conn) {
		_, _ = io.WriteString(c, strings.Repeat("\xff", 256<<10)+"\r\n\r\n")
	}) + "/garbage" + secretQuery
	got := runAttempt(t, uri)
	requireRetryableTransport(t, got, "malformed HTTP")
	require.Less(t, len(got.err.Message()), maxReported+100, "the message is clipped")
}

// TestHostileTargetSendsHugeHeaders: a huge reason phrase and Location
// header (http.Transport takes up to 10 MB of headers) are clipped in the
// status and headers an attempt reports.
func TestHostileTargetSendsHugeHeaders(t *testing.T) {
	t.Parallel()
	uri := rawTarget(t, func(c net.Conn) {
		_, _ = io.WriteString(c, "HTTP/1.1 503 "+strings.Repeat("R", 256<<10)+"\r\n"+
			"Location: /"+strings.Repeat("L", 256<<10)+"\r\nContent-Length: 0\r\n\r\n")
	}) + "/headers"
	got := runAttempt(t, uri)
	require.NotNil(t, got.err)
	require.Equal(t, ErrTypeHTTPStatus, got.err.Type())
	require.False(t, got.err.NonRetryable(), "a 503 is retried")
	require.Equal(t, http.StatusServiceUnavailable, got.out.StatusCode)
	require.True(t, strings.HasPrefix(got.out.Status, "503 RRR"), "status: %.40s", got.out.Status)
	require.Len(t, got.out.Status, maxReported+len("..."))
	require.Len(t, got.out.Headers, len("Location: ")+maxReported+len("..."))
	require.Less(t, len(got.err.Message()), maxReported+100)
}

// TestHostileTargetRedirectsInALoop: http.Client follows 9 redirects and
// refuses the 10th; the attempt is a retryable transport failure.
func TestHostileTargetRedirectsInALoop(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		next := map[string]string{"/a": "/b", "/b": "/a"}[r.URL.Path]
		http.Redirect(w, r, next+secretQuery, http.StatusFound)
	}))
	t.Cleanup(target.Close)
	got := runAttempt(t, target.URL+"/a"+secretQuery)
	requireRetryableTransport(t, got, "stopped after 10 redirects")
	require.EqualValues(t, 10, hits.Load(), "the request and 9 redirects, no more")
}

// bigBody is a target answering status with a body of up to 100 MB. It
// counts the bytes it managed to write and closes done when it stops.
type bigBody struct {
	*httptest.Server
	written atomic.Int64
	done    chan struct{}
}

// hundredMB is the size of the body a bigBody target tries to send.
const hundredMB = 100 << 20

func newBigBody(t *testing.T, status int) *bigBody {
	b := &bigBody{done: make(chan struct{})}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(b.done)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for b.written.Load() < hundredMB {
			n, err := w.Write(chunk)
			b.written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(b.Close)
	return b
}

// requireCutShort checks that the target wrote far less than 100 MB: the
// client stopped reading at its limit instead of draining the body.
func (b *bigBody) requireCutShort(t *testing.T) {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the target is still writing after %d bytes", b.written.Load())
	}
	require.Less(t, b.written.Load(), int64(16<<20), "only the limit, the drain and the socket buffers")
}

func TestHostileTargetSends100MBWithSuccess(t *testing.T) {
	t.Parallel()
	target := newBigBody(t, http.StatusOK)
	got := runAttempt(t, target.URL+"/big")
	require.Nil(t, got.err, "a 2xx succeeds whatever its size")
	require.Equal(t, http.StatusOK, got.out.StatusCode)
	require.Len(t, got.out.Body, jobs.MaxResponseBody, "history keeps the limit's worth")
	require.Less(t, got.elapsed, hostileLimit, "the activity returns promptly, not when its timeout cuts the read")
	target.requireCutShort(t)
}

func TestHostileTargetSends100MBWithFailure(t *testing.T) {
	t.Parallel()
	target := newBigBody(t, http.StatusInternalServerError)
	got := runAttempt(t, target.URL+"/big")
	require.NotNil(t, got.err)
	require.Equal(t, ErrTypeHTTPStatus, got.err.Type())
	require.False(t, got.err.NonRetryable(), "a 500 is retried")
	require.Equal(t, http.StatusInternalServerError, got.out.StatusCode)
	require.Len(t, got.out.Body, jobs.MaxResponseBody, "the failure's details keep the limit's worth")
	require.Less(t, got.elapsed, hostileLimit, "the activity returns promptly, not when its timeout cuts the read")
	target.requireCutShort(t)
}

// TestHostileTargetSendsAGzipBomb: 100 MB of zeros gzipped to about
// 100 KB (100 gzip members of 1 MiB each, cheaper to make than one);
// http.Transport inflates it, and the limit applies to what it inflates.
func TestHostileTargetSendsAGzipBomb(t *testing.T) {
	t.Parallel()
	var member bytes.Buffer
	zw := gzip.NewWriter(&member)
	_, err := zw.Write(make([]byte, 1<<20))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	bomb := bytes.Repeat(member.Bytes(), hundredMB>>20)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(bomb)
	}))
	t.Cleanup(target.Close)
	got := runAttempt(t, target.URL+"/bomb")
	require.Nil(t, got.err)
	require.Equal(t, strings.Repeat("\x00", jobs.MaxResponseBody), got.out.Body)
	require.Less(t, got.elapsed, hostileLimit, "the activity returns promptly, not when its timeout cuts the read")
}

// TestAnAnswerThatCameInTimeIsNotATimeout: a worker busy enough to tell a
// malformed answer only after the attempt's deadline still tells what the
// target said; an error that is the deadline's says how long it waited.
func TestAnAnswerThatCameInTimeIsNotATimeout(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	malformed := &url.Error{Op: "Get", URL: "http://target/x", Err: errors.New(`malformed HTTP response "\xff"`)}
	require.Contains(t, describeTransport(ctx, malformed, hostileLimit, nil), "malformed HTTP")
	timedOut := &url.Error{Op: "Get", URL: "http://target/x", Err: context.DeadlineExceeded}
	require.Equal(t, "timed out after 2s", describeTransport(ctx, timedOut, hostileLimit, nil))
}
