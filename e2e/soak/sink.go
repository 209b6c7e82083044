package main

import (
	"time"

	"github.com/recurhq/recur/internal/recurproc"
)

// delivery is one request the sink received, as the soak reads it.
type delivery struct {
	job      string    // from the path, /hit/{job}
	jobID    string    // x-ms-scheduler-jobid
	key      string    // Idempotency-Key
	expected string    // x-ms-scheduler-expected-execution-time, as sent
	nominal  time.Time // expected, parsed; zero when it does not parse
	arrived  time.Time
}

// sink is the HTTP target of every job (recurproc.Sink).
type sink struct{ *recurproc.Sink }

func startSink() (*sink, error) {
	s, err := recurproc.StartSink()
	return &sink{s}, err
}

// snapshot returns the deliveries so far.
func (s *sink) snapshot() []delivery {
	ds := s.Deliveries()
	out := make([]delivery, len(ds))
	for i, d := range ds {
		out[i] = delivery{job: d.Name, jobID: d.JobID, key: d.Key, expected: d.Expected, nominal: d.Nominal, arrived: d.Arrived}
	}
	return out
}

// count returns how many deliveries arrived so far.
func (s *sink) count() int { return s.Count() }

func (s *sink) close() { s.Close() }
