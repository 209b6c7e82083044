package main

import (
	"strings"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
)

// delivery is one request the sink received, as the firing bench reads
// it.
type delivery struct {
	phase   string    // from the path, /hit/{phase}/{name}
	name    string    // the job or schedule
	key     string    // Idempotency-Key: recur's occurrence ID, the peer's workflow ID
	nominal time.Time // the nominal time the sender says it is for; zero when absent
	arrived time.Time
}

// sink is the HTTP target of every job and schedule (recurproc.Sink);
// recur's jobs and the peer's schedules send the same headers.
type sink struct{ *recurproc.Sink }

func startSink() (*sink, error) {
	s, err := recurproc.StartSink()
	return &sink{s}, err
}

// target is the URL a phase's job or schedule posts to.
func (s *sink) target(phase, name string) string { return s.Target(phase + "/" + name) }

// of returns the deliveries of phase so far.
func (s *sink) of(phase string) []delivery {
	var out []delivery
	for _, d := range s.Deliveries() {
		p, name, _ := strings.Cut(d.Name, "/")
		if p == phase {
			out = append(out, delivery{phase: p, name: name, key: d.Key, nominal: d.Nominal, arrived: d.Arrived})
		}
	}
	return out
}

// count returns how many deliveries arrived so far, of every phase.
func (s *sink) count() int { return s.Count() }

func (s *sink) close() { s.Close() }
