package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
)

// burstResult is what the burst measured.
type burstResult struct {
	at         time.Time
	expected   int             // jobs created with the burst time
	late       []time.Duration // first arrival minus the burst time, per delivered job
	allBy      time.Duration   // from the burst time until the last job's first arrival, when all came
	within     [3]int          // delivered within 1, 2 and 5 minutes
	missed     int             // not delivered within -grace
	duplicates int
	stray      int             // requests for another occurrence or no job
	window     time.Duration   // from the burst time until all came or -grace ran out
	cpu        recurproc.Usage // used over the window by recur and, on a cluster, the server and PostgreSQL
	selfCPU    time.Duration   // used over the window by this process (the peer's worker)
	rssPeak    int             // recur's, kB, over the window
	rssEnd     int
	load       *burstLoad // the API load sent from the burst time
}

// withinLimits are the delays the burst counts deliveries within.
var withinLimits = [3]time.Duration{time.Minute, 2 * time.Minute, 5 * time.Minute}

// measureBurst waits for the burst time, then until every created job's first
// occurrence arrived or -grace passed, sampling recur's CPU and RSS, and
// then a little longer for duplicates.
func (s *phase) measureBurst(ctx context.Context, expected int) *burstResult {
	r := &burstResult{at: s.burst, expected: expected}
	log.Printf("%s: burst: waiting until %s for %d (%s from now)", s.subject.name(), s.burst.Format(time.TimeOnly), expected,
		time.Until(s.burst).Round(time.Second))
	sleepUntil(ctx, s.burst)
	lctx, stopLoad := context.WithCancel(ctx)
	loaded := make(chan *burstLoad, 1)
	go func() { loaded <- s.loadBurst(lctx) }()
	cpu, self := s.dep.CPU(), recurproc.CPUOf(os.Getpid())
	deadline := s.burst.Add(s.cfg.grace)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		r.rssPeak = max(r.rssPeak, s.dep.RSS())
		if s.sink.delivered() >= expected {
			break
		}
		sleepUntil(ctx, time.Now().Add(time.Second))
	}
	r.window = time.Since(s.burst)
	stopLoad()
	r.load = <-loaded
	r.cpu, r.selfCPU = s.dep.CPU().Sub(cpu), recurproc.CPUOf(os.Getpid())-self
	r.rssEnd = s.dep.RSS()
	r.rssPeak = max(r.rssPeak, r.rssEnd)
	log.Printf("%s: burst: %d of %d delivered after %s; waiting 15 s for duplicates", s.subject.name(), s.sink.delivered(), expected, r.window.Round(time.Second))
	sleepUntil(ctx, time.Now().Add(15*time.Second))
	first, dups, stray := s.sink.snapshot()
	r.duplicates, r.stray = dups, stray
	for _, t := range first {
		if t.IsZero() || t.After(deadline) {
			continue
		}
		d := t.Sub(s.burst)
		r.late = append(r.late, d)
		r.allBy = max(r.allBy, d)
		for k, limit := range withinLimits {
			if d <= limit {
				r.within[k]++
			}
		}
	}
	r.missed = max(0, expected-len(r.late))
	if r.missed > 0 {
		r.allBy = -1
		log.Printf("%s: burst: missing, the first of them by item: %v", s.subject.name(), missingItems(first, s.created, deadline, 20))
	}
	return r
}

// missingItems returns the first at most n items created whose first
// arrival was none, or after deadline: what to look at in the server.
func missingItems(first []time.Time, created []bool, deadline time.Time, n int) []int {
	var out []int
	for i, t := range first {
		if len(out) == n {
			break
		}
		if created[i] && (t.IsZero() || t.After(deadline)) {
			out = append(out, i)
		}
	}
	return out
}

// allDelivered says when the last job's first occurrence arrived.
func (r *burstResult) allDelivered() string {
	if r.allBy < 0 {
		return fmt.Sprintf("never (%d missing after %s)", r.missed, r.window.Round(time.Second))
	}
	return round(r.allBy).String()
}

func sleepUntil(ctx context.Context, t time.Time) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(t)):
	}
}
