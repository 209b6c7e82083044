package main

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
)

// Headers both phases send: recur's own, and the same ones from the peer's
// activity.
const (
	headerKey     = "Idempotency-Key"
	headerNominal = "x-ms-scheduler-expected-execution-time"
)

// delivery is one request the sink received.
type delivery struct {
	phase   string    // from the path, /hit/{phase}/{name}
	name    string    // the job or schedule
	key     string    // Idempotency-Key: recur's occurrence ID, the peer's workflow ID
	nominal time.Time // the nominal time the sender says it is for; zero when absent
	arrived time.Time
}

// sink is the HTTP target of every job and schedule: it answers 200 and
// records each request.
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
	phase, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/hit/"), "/")
	d := delivery{phase: phase, name: name, key: r.Header.Get(headerKey), arrived: arrived}
	if t, err := time.Parse(time.RFC3339, r.Header.Get(headerNominal)); err == nil {
		d.nominal = t.UTC()
	}
	s.mu.Lock()
	s.deliveries = append(s.deliveries, d)
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// target is the URL a phase's job or schedule posts to.
func (s *sink) target(phase, name string) string { return s.url + "/hit/" + phase + "/" + name }

// of returns the deliveries of phase so far.
func (s *sink) of(phase string) []delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []delivery
	for _, d := range s.deliveries {
		if d.phase == phase {
			out = append(out, d)
		}
	}
	return out
}

// count returns how many deliveries arrived so far, of every phase.
func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.deliveries)
}
