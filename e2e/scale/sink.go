package main

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
)

// sink is the HTTP target of every job, /hit/{i} for job i
// (recurproc.Sink), read as the burst's deliveries: per job, the requests
// for the burst's occurrence.
type sink struct {
	*recurproc.Sink
	n int // jobs

	mu    sync.Mutex
	burst time.Time // the nominal time the requests are expected for
}

func startSink(n int) (*sink, error) {
	s, err := recurproc.StartSink()
	return &sink{Sink: s, n: n}, err
}

// expect sets the burst's nominal time; requests for any other time are
// stray.
func (s *sink) expect(t time.Time) {
	s.mu.Lock()
	s.burst = t
	s.mu.Unlock()
}

// target is the URL job i posts to.
func (s *sink) target(i int) string { return s.Target(strconv.Itoa(i)) }

// delivered returns how many jobs have had their burst occurrence
// delivered.
func (s *sink) delivered() int {
	first, _, _ := s.snapshot()
	n := 0
	for _, t := range first {
		if !t.IsZero() {
			n++
		}
	}
	return n
}

// snapshot returns the first arrival of the burst's occurrence per job
// (zero when none yet), the duplicates (requests past the first per job)
// and the stray requests (for another occurrence, or not for a job).
func (s *sink) snapshot() (first []time.Time, duplicates, stray int) {
	s.mu.Lock()
	burst := s.burst
	s.mu.Unlock()
	first = make([]time.Time, s.n)
	for _, d := range s.Deliveries() {
		if strings.HasPrefix(d.Name, "w-") || strings.HasPrefix(d.Name, "g-") {
			continue // the writes' own items (writeKey, groupKey, writeID)
		}
		i, err := strconv.Atoi(d.Name)
		if err != nil || i < 0 || i >= s.n || !d.Nominal.Equal(burst) {
			stray++
			continue
		}
		if first[i].IsZero() {
			first[i] = d.Arrived
		} else {
			duplicates++
		}
	}
	return first, duplicates, stray
}

func (s *sink) close() { s.Close() }
