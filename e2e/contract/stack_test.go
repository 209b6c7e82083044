package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/internal/recurtest"
)

// The contract and the recorder every API call of this test binary goes
// through; TestMain loads the one and checks the other's coverage.
var (
	contractSpec *spec
	rec          *recorder
)

// stack is a running recur: Temporal in process, the real worker and the
// real router behind httptest. One is shared by the tests, which keep
// apart by using their own collections; TestMain stops it.
type stack struct {
	*recurtest.Stack
	client *http.Client
}

var (
	sharedOnce  sync.Once
	sharedStack *stack
)

// newStack returns the shared stack, starting it on first use.
func newStack(t *testing.T) *stack {
	t.Helper()
	sharedOnce.Do(func() { sharedStack = startStack(t) })
	require.NotNil(t, sharedStack, "the stack did not start")
	return sharedStack
}

func startStack(t *testing.T) *stack {
	// Not tied to t: the stack outlives the test that starts it.
	st, err := recurtest.Start()
	if err != nil {
		t.Fatalf("start the stack: %v", err)
	}
	return &stack{Stack: st, client: &http.Client{Transport: rec, Timeout: time.Minute}}
}

func (s *stack) stop() { s.Stop() }

// call sends a request with api-version through the recorder and returns
// the status, the decoded JSON body (nil when empty) and the exchange.
// The caller asserts on status; the exchange's violations are asserted
// here, without stopping the test, so one run lists them all.
func (s *stack) call(t *testing.T, method, path string, body any) (int, map[string]any, *exchange) {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return s.send(t, method, s.API.URL+path+sep+"api-version="+api.APIVersion, body)
}

// send is call with the whole URL.
func (s *stack) send(t *testing.T, method, url string, body any) (int, map[string]any, *exchange) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(data)
	}
	var e *exchange
	req, err := http.NewRequestWithContext(withExchange(context.Background(), &e), method, url, rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NotNil(t, e, "the recorder saw the response")
	assert.Empty(t, e.Violations, "%s breaks the contract:\n%s\nbody: %s", e, lines(e.Violations), data)
	var out map[string]any
	if len(data) > 0 {
		require.NoError(t, json.Unmarshal(data, &out), string(data))
	}
	return resp.StatusCode, out, e
}

// do is call without the exchange. An operation's 202 (a collection's
// DELETE, enable, disable) is followed to its end, as Azure's SDKs do:
// do answers what the operation's Location answers once it is not 202.
// The Location is recur's, not the contract's, and is read around the
// recorder.
func (s *stack) do(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	status, out, e := s.call(t, method, path, body)
	if status != http.StatusAccepted || !strings.Contains(e.Location, "/operations/") {
		return status, out
	}
	return followOperation(t, e.Location)
}

// followOperation polls an operation's Location until it answers
// otherwise than 202, for up to 30 s, and returns that answer.
func followOperation(t *testing.T, location string) (int, map[string]any) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(location)
		require.NoError(t, err)
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		if resp.StatusCode != http.StatusAccepted {
			var out map[string]any
			if len(data) > 0 {
				require.NoError(t, json.Unmarshal(data, &out), string(data))
			}
			return resp.StatusCode, out
		}
		require.True(t, time.Now().Before(deadline), "the operation at %s still runs after 30 s", location)
		// The Location's GET waits up to two seconds itself for the end.
	}
}

func lines(vs []violation) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString("  " + v.String() + "\n")
	}
	return b.String()
}

const armPrefix = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler"

// newCollection creates a collection named after name (201) and returns
// its path.
func (s *stack) newCollection(t *testing.T, name string) string {
	t.Helper()
	p := armPrefix + "/jobCollections/" + unique(name)
	status, body := s.do(t, http.MethodPut, p, map[string]any{"location": "westus", "properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	return p
}

var seq atomic.Int64

// unique returns name with a suffix no other call of this process gets,
// so that the tests share a stack, and pass with -count above 1, without
// meeting each other's resources.
func unique(name string) string { return fmt.Sprintf("%s-%d", name, seq.Add(1)) }

// target is a real HTTP endpoint that counts what it receives.
type target struct {
	*httptest.Server
	got chan string // the path of each request
}

func newTarget(t *testing.T) *target {
	tg := &target{got: make(chan string, 64)}
	tg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case tg.got <- r.URL.Path:
		default:
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(tg.Close)
	return tg
}

// field returns the member at keys of a decoded JSON document, or nil.
func field(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[k]
	}
	return v
}
