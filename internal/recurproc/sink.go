package recurproc

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/recurhq/recur/activities"
)

// Delivery is one request a Sink received.
type Delivery struct {
	Name     string    // the path after /hit/
	JobID    string    // activities.HeaderJobID
	Key      string    // activities.HeaderIdempotencyKey: recur's occurrence ID, or what a peer sends
	Expected string    // activities.HeaderExpectedExecTime, as sent
	Nominal  time.Time // Expected parsed, in UTC; zero when it does not parse
	Arrived  time.Time
}

// Sink is the HTTP target of the bench tools' jobs: /hit/{name} answers
// 200 at once and records the delivery; each tool reads the deliveries
// its own way.
type Sink struct {
	URL   string
	close func()

	mu         sync.Mutex
	deliveries []Delivery
}

// StartSink serves a Sink on a free port of 127.0.0.1.
func StartSink() (*Sink, error) {
	s := &Sink{}
	var err error
	s.URL, s.close, err = serveLocal(s.serve)
	return s, err
}

func (s *Sink) serve(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	_, _ = io.Copy(io.Discard, r.Body)
	d := Delivery{
		Name:     strings.TrimPrefix(r.URL.Path, "/hit/"),
		JobID:    r.Header.Get(activities.HeaderJobID),
		Key:      r.Header.Get(activities.HeaderIdempotencyKey),
		Expected: r.Header.Get(activities.HeaderExpectedExecTime),
		Arrived:  arrived,
	}
	if t, err := time.Parse(time.RFC3339, d.Expected); err == nil {
		d.Nominal = t.UTC()
	}
	s.mu.Lock()
	s.deliveries = append(s.deliveries, d)
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// Target is the URL a job named name posts to.
func (s *Sink) Target(name string) string { return s.URL + "/hit/" + name }

// Deliveries returns the deliveries so far.
func (s *Sink) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.deliveries...)
}

// Count returns how many deliveries arrived so far.
func (s *Sink) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.deliveries)
}

// Close stops serving.
func (s *Sink) Close() { s.close() }
