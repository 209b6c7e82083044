package main

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
)

// headerNominal is the header in which recur says which occurrence a
// request is for.
const headerNominal = "x-ms-scheduler-expected-execution-time"

// sink is the HTTP target of every job, /hit/{i} for job i: it answers
// 200 and records, per job, the requests for the burst's occurrence.
type sink struct {
	url   string
	close func()
	burst time.Time // the nominal time the requests are expected for

	mu       sync.Mutex
	first    []time.Time // the first arrival per job, zero when none yet
	requests []int       // requests per job for the burst's occurrence
	stray    int         // requests for another occurrence, or not for a job
}

func startSink(n int) (*sink, error) {
	s := &sink{first: make([]time.Time, n), requests: make([]int, n)}
	var err error
	s.url, s.close, err = recurproc.Serve(s.serve)
	return s, err
}

// expect sets the burst's nominal time; requests for any other time are
// stray.
func (s *sink) expect(t time.Time) {
	s.mu.Lock()
	s.burst = t
	s.mu.Unlock()
}

func (s *sink) serve(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	_, _ = io.Copy(io.Discard, r.Body)
	w.WriteHeader(http.StatusOK)
	i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hit/"))
	nominal, _ := time.Parse(time.RFC3339, r.Header.Get(headerNominal))
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || i < 0 || i >= len(s.first) || !nominal.Equal(s.burst) {
		s.stray++
		return
	}
	if s.requests[i] == 0 {
		s.first[i] = arrived
	}
	s.requests[i]++
}

// target is the URL job i posts to.
func (s *sink) target(i int) string { return s.url + "/hit/" + strconv.Itoa(i) }

// delivered returns how many jobs have had their burst occurrence
// delivered.
func (s *sink) delivered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.requests {
		if c > 0 {
			n++
		}
	}
	return n
}

// snapshot returns a copy of the first arrivals, the duplicates (requests
// past the first per job) and the stray requests.
func (s *sink) snapshot() (first []time.Time, duplicates, stray int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.requests {
		duplicates += max(0, c-1)
	}
	return append([]time.Time(nil), s.first...), duplicates, s.stray
}
