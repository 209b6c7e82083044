package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"sync"
	"time"

	"github.com/recurhq/recur/jobs"
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

// jobKey is the key of job i: jobs 0-999 are in collection scale-00,
// 1000-1999 in scale-01, ...
func jobKey(i int) jobs.Key {
	return jobs.Key{Subscription: "scale", ResourceGroup: "scale",
		Collection: fmt.Sprintf("scale-%02d", i/perCollection), Job: fmt.Sprintf("job-%05d", i)}
}

// creation is what creating the jobs measured.
type creation struct {
	puts        *recorder // PUTs creating a job, retries included
	reputs      *recorder // PUTs redefining the calibration jobs with the burst time
	calibration string    // how the burst time was chosen
	took        time.Duration
	ended       time.Time
	created     int // jobs whose last PUT, with the burst time, succeeded
}

// createCollections creates the collections that hold the jobs.
func (s *scale) createCollections(ctx context.Context) error {
	n := s.cfg.jobs
	for i := 0; i < n; i += perCollection {
		body, _ := json.Marshal(map[string]any{"location": "local", "properties": map[string]any{
			"sku": map[string]any{"name": "P20Premium"},
			"quota": map[string]any{
				"maxJobCount":   min(perCollection, n-i),
				"maxRecurrence": map[string]any{"frequency": "Minute", "interval": 1},
			},
		}})
		if _, _, err := s.api.call(ctx, http.MethodPut, jobKey(i).CollectionID(), body, nil); err != nil {
			return err
		}
	}
	return nil
}

// jobBody is job i's definition: an hourly Http POST to the sink, first
// due at start.
func (s *scale) jobBody(i int, start time.Time) []byte {
	body, _ := json.Marshal(map[string]any{"properties": map[string]any{
		"startTime":  start.UTC().Format(time.RFC3339),
		"recurrence": map[string]any{"frequency": "Hour", "interval": 1},
		"action": map[string]any{"type": "Http", "request": map[string]any{
			"uri": s.sink.target(i), "method": "POST",
			"headers": map[string]string{"Content-Type": "application/json"},
			"body":    fmt.Sprintf(`{"job":%d}`, i),
		}},
	}})
	return body
}

// createJobs creates the collections and the N jobs, all first due at the
// burst time: -burst-at, or a time chosen from the rate at which the first
// jobs were created (see chooseBurst).
func (s *scale) createJobs(ctx context.Context) (*creation, error) {
	c := &creation{puts: newRecorder(), reputs: newRecorder()}
	started := time.Now()
	if err := s.createCollections(ctx); err != nil {
		return nil, fmt.Errorf("create the collections: %w", err)
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
	log.Printf("burst time %s (%s)", s.burst.Format(time.RFC3339), c.calibration)
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
	}
	c.ended = time.Now()
	c.took = c.ended.Sub(started)
	for _, v := range ok {
		if v {
			c.created++
		}
	}
	s.created = ok
	log.Printf("created %d of %d jobs in %s; PUT %s", c.created, n, c.took.Round(time.Millisecond), c.puts.latency())
	return c, nil
}

// chooseBurst chooses the burst time after first jobs were created in
// took: the rest at that rate, times 1.5, then the API load and the idle
// pause, then 2 minutes, rounded up to a whole minute.
func (s *scale) chooseBurst(first int, took time.Duration) (time.Time, string) {
	rate := float64(first) / took.Seconds()
	rest := time.Duration(float64(s.cfg.jobs-first) / rate * float64(time.Second))
	margin := rest*3/2 + s.cfg.load + s.cfg.idle + 2*time.Minute
	t := time.Now().Add(margin + time.Minute - 1).Truncate(time.Minute)
	return t, fmt.Sprintf("calibrated: %d jobs in %s = %.1f/s; the other %d need ~%s",
		first, took.Round(time.Millisecond), rate, s.cfg.jobs-first, rest.Round(time.Second))
}

// put PUTs jobs [from, to) with start, -concurrency at a time, recording
// every attempt in rec and which jobs succeeded in ok.
func (s *scale) put(ctx context.Context, from, to int, start time.Time, rec *recorder, ok []bool) {
	each(ctx, s.cfg.concurrency, from, to, func(i int) {
		body := s.jobBody(i, start)
		for try := range tries {
			if try > 0 {
				time.Sleep(time.Duration(try) * time.Second)
			}
			status, took, err := s.api.call(ctx, http.MethodPut, jobKey(i).JobID(), body, nil)
			rec.add(status, took, err)
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
