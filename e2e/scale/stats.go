package main

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// recorder collects the latencies and failures of one kind of request.
type recorder struct {
	mu     sync.Mutex
	took   []time.Duration
	errs   map[string]int // by errorClass
	first  error
	window time.Duration // the time the requests were sent over, for the rate
}

func newRecorder() *recorder { return &recorder{errs: map[string]int{}} }

// add records one request: its time and error.
func (r *recorder) add(took time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.took = append(r.took, took)
	if err == nil {
		return
	}
	if r.first == nil {
		r.first = err
	}
	r.errs[errorClass(err)]++
}

// timed calls do, records its time and error, and returns the error.
func (r *recorder) timed(do func() error) error {
	started := time.Now()
	err := do()
	r.add(time.Since(started), err)
	return err
}

// missingItem is the not-found answer about an item the load deleted and
// failed to create again: the right answer, counted apart.
type missingItem struct{ error }

// notFound reports whether err is a not-found answer, recur's or a
// Schedule's.
func notFound(err error) bool {
	var he *httpError
	if errors.As(err, &he) {
		return he.status == http.StatusNotFound
	}
	return status.Code(err) == codes.NotFound
}

// errorClass is how a failed request is counted: by HTTP status, by gRPC
// code, or "transport" when no answer came.
func errorClass(err error) string {
	if _, ok := err.(*missingItem); ok {
		return "not found after its re-creation failed"
	}
	var he *httpError
	if errors.As(err, &he) {
		return strconv.Itoa(he.status)
	}
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unknown {
		return s.Code().String()
	}
	return "transport"
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.took)
}

// latency says p50/p99/max of the requests.
func (r *recorder) latency() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return percentiles(r.took)
}

// rate says the requests per second over the window.
func (r *recorder) rate() string {
	if r.window <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f/s", float64(r.count())/r.window.Seconds())
}

// errors says the failed requests by status, and the first failure.
func (r *recorder) errors() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.errs)) {
		parts = append(parts, fmt.Sprintf("%s x%d", k, r.errs[k]))
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (first: %.600v)", r.first)
}

// percentiles says p50/p99/max of ds, nearest rank.
func percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "n/a"
	}
	s := slices.Sorted(slices.Values(ds))
	at := func(p float64) time.Duration { return s[max(0, int(math.Ceil(p*float64(len(s))))-1)] }
	return fmt.Sprintf("p50 %s, p99 %s, max %s (n=%d)", round(at(0.50)), round(at(0.99)), round(s[len(s)-1]), len(s))
}

// round shows a duration with about three significant digits.
func round(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}

func mib(kb int) string {
	if kb < 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
}
