package main

import (
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
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
	url string
	srv *http.Server

	mu         sync.Mutex
	deliveries []delivery
}

func startSink() (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{url: "http://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("sink stopped: %v", err)
		}
	}()
	return s, nil
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

func (s *sink) close() { _ = s.srv.Close() }
