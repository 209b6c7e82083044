package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recurhq/recur/activities"
)

// sink is the HTTP target of the fault tests. It outlives every recur
// process it serves and counts deliveries per idempotency key: a raw
// delivery is any request that arrived; a completed one is a request whose
// 200 answer was written to a client still waiting for it. An occurrence
// ran once as an effect when its key has exactly one completed delivery.
type sink struct {
	*httptest.Server

	mu        sync.Mutex
	raw       map[string]int
	completed map[string]int
	arrivals  []string          // keys in order of arrival
	heldFrom  map[string]string // key → the client address of its held delivery
	hold      map[string]int    // path → deliveries still to hold until the client goes away
	held      chan string       // the key of each held delivery, as it arrives
}

func newSink(t *testing.T) *sink {
	s := &sink{raw: map[string]int{}, completed: map[string]int{}, heldFrom: map[string]string{}, hold: map[string]int{}, held: make(chan string, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// holdNext makes the next n deliveries to path hang until the client
// goes away (its process dies or its attempt times out).
func (s *sink) holdNext(path string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold[path] = n
}

func (s *sink) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	key := r.Header.Get(activities.HeaderIdempotencyKey)
	s.mu.Lock()
	s.raw[key]++
	s.arrivals = append(s.arrivals, key)
	holding := s.hold[r.URL.Path] > 0
	if holding {
		s.hold[r.URL.Path]--
		s.heldFrom[key] = r.RemoteAddr
	}
	s.mu.Unlock()
	if holding {
		s.held <- key
		<-r.Context().Done()
		return
	}
	w.WriteHeader(http.StatusOK)
	if _, err := io.WriteString(w, "ok"); err != nil || r.Context().Err() != nil {
		return
	}
	s.mu.Lock()
	s.completed[key]++
	s.mu.Unlock()
}

// counts returns the raw and completed deliveries of key.
func (s *sink) counts(key string) (raw, completed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw[key], s.completed[key]
}

// heldRemote returns the client address of key's held delivery: the one
// whose connection stays open, where a redelivery's may be gone.
func (s *sink) heldRemote(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heldFrom[key]
}

// keysOf returns the distinct keys delivered for jobName, in order of
// first arrival.
func (s *sink) keysOf(jobName string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	var keys []string
	for _, k := range s.arrivals {
		if strings.Contains(k, "/"+jobName+"@") && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// report lists every key delivered more than once, raw: the redeliveries
// at-least-once delivery allows, for the test log.
func (s *sink) report(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, n := range s.raw {
		if n > 1 {
			t.Logf("redelivered: %s arrived %d times, completed %d", k, n, s.completed[k])
		}
	}
}

// waitHeld returns the key of the next held delivery.
func (s *sink) waitHeld(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case k := <-s.held:
		return k
	case <-time.After(within):
		t.Fatalf("no delivery was held within %s", within)
		return ""
	}
}
