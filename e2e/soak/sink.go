package main

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
)

// delivery is one request the sink received.
type delivery struct {
	job      string    // from the path, /hit/{job}
	jobID    string    // x-ms-scheduler-jobid
	key      string    // Idempotency-Key
	expected string    // x-ms-scheduler-expected-execution-time, as sent
	nominal  time.Time // expected, parsed; zero when it does not parse
	arrived  time.Time
}

// sink is the HTTP target of every job: it answers 200 and records each
// delivery.
type sink struct {
	url   string
	close func()

	mu         sync.Mutex
	deliveries []delivery
}

func startSink() (*sink, error) {
	s := &sink{}
	var err error
	s.url, s.close, err = recurproc.Serve(s.serve)
	return s, err
}

func (s *sink) serve(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	_, _ = io.Copy(io.Discard, r.Body)
	d := delivery{
		job:      strings.TrimPrefix(r.URL.Path, "/hit/"),
		jobID:    r.Header.Get("x-ms-scheduler-jobid"),
		key:      r.Header.Get("Idempotency-Key"),
		expected: r.Header.Get("x-ms-scheduler-expected-execution-time"),
		arrived:  arrived,
	}
	if t, err := time.Parse(time.RFC3339, d.expected); err == nil {
		d.nominal = t.UTC()
	}
	s.mu.Lock()
	s.deliveries = append(s.deliveries, d)
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// snapshot returns the deliveries so far.
func (s *sink) snapshot() []delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]delivery(nil), s.deliveries...)
}

// count returns how many deliveries arrived so far.
func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.deliveries)
}
