package main

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"
)

const (
	// perCollection is the job quota of the P20Premium sku.
	perCollection = 1000
	// calibrationJobs is how many jobs are created to measure the rate
	// before the burst time is chosen.
	calibrationJobs = 200
	// tries is how many times a failed PUT is sent before the job counts
	// as not created; every attempt is recorded.
	tries = 3
)

// creation is what creating the jobs measured.
type creation struct {
	puts        *recorder // definitions creating an item, retries included
	reputs      *recorder // definitions redefining the calibration items with the burst time
	calibration string    // how the burst time was chosen
	took        time.Duration
	ended       time.Time
	created     int // items whose last definition, with the burst time, succeeded
}

// create creates the N items, all first due at the burst time: -burst-at,
// or a time chosen from the rate at which the first items were created
// (see chooseBurst).
func (s *phase) create(ctx context.Context) (*creation, error) {
	c := &creation{puts: newRecorder(), reputs: newRecorder()}
	started := time.Now()
	if err := s.subject.prepare(ctx, s.cfg.jobs); err != nil {
		return nil, fmt.Errorf("%s: prepare: %w", s.subject.name(), err)
	}
	n := s.cfg.jobs
	ok := make([]bool, n)
	first := 0
	if s.burst.IsZero() {
		first = min(calibrationJobs, n)
		// Far enough ahead that no calibration job fires before it is
		// redefined with the burst time.
		s.put(ctx, 0, first, started.Add(24*time.Hour).Truncate(time.Minute), c.puts, ok)
		s.burst, c.calibration = s.chooseBurst(first, time.Since(started))
	} else {
		c.calibration = "-burst-at"
	}
	log.Printf("%s: burst time %s (%s)", s.subject.name(), s.burst.Format(time.RFC3339), c.calibration)
	s.sink.expect(s.burst)
	s.put(ctx, first, n, s.burst, c.puts, ok)
	c.puts.window = time.Since(started)
	if first > 0 {
		reput := time.Now()
		for i := range first {
			ok[i] = false
		}
		s.put(ctx, 0, first, s.burst, c.reputs, ok)
		c.reputs.window = time.Since(reput)
		log.Printf("%s: redefined the first %d with the burst time: %s; errors %s", s.subject.name(), first, c.reputs.latency(), c.reputs.errors())
	}
	c.ended = time.Now()
	c.took = c.ended.Sub(started)
	for _, v := range ok {
		if v {
			c.created++
		}
	}
	s.created = ok
	log.Printf("%s: created %d of %d in %s; %s", s.subject.name(), c.created, n, c.took.Round(time.Millisecond), c.puts.latency())
	return c, nil
}

// chooseBurst chooses the burst time after first jobs were created in
// took: the rest at that rate, times 1.5, then the API load and the idle
// pause, then 2 minutes, rounded up to a whole minute.
func (s *phase) chooseBurst(first int, took time.Duration) (time.Time, string) {
	rate := float64(first) / took.Seconds()
	rest := time.Duration(float64(s.cfg.jobs-first) / rate * float64(time.Second))
	margin := rest*3/2 + s.cfg.load + s.cfg.idle + 2*time.Minute
	t := time.Now().Add(margin + time.Minute - 1).Truncate(time.Minute)
	return t, fmt.Sprintf("calibrated: %d jobs in %s = %.1f/s; the other %d need ~%s",
		first, took.Round(time.Millisecond), rate, s.cfg.jobs-first, rest.Round(time.Second))
}

// put defines items [from, to) with start, -concurrency at a time,
// recording every attempt in rec and which items succeeded in ok.
func (s *phase) put(ctx context.Context, from, to int, start time.Time, rec *recorder, ok []bool) {
	each(ctx, s.cfg.concurrency, from, to, func(i int) {
		for try := range tries {
			if try > 0 {
				time.Sleep(time.Duration(try) * time.Second)
			}
			err := rec.timed(func() error { return s.subject.define(ctx, i, start) })
			if err == nil {
				ok[i] = true
				return
			}
			if ctx.Err() != nil {
				return
			}
		}
	})
}

// each calls do for every i in [from, to), workers at a time.
func each(ctx context.Context, workers, from, to int, do func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				do(i)
			}
		})
	}
	for i := from; i < to && ctx.Err() == nil; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
