// Command scale measures one `recur dev` holding many jobs: it creates N
// hourly jobs (PUT latency and rate), loads the API while they are idle
// (GET, list and redefining PUT latency), reads recur's memory per idle
// job, and then lets all N fall due in the same minute (the burst) and
// measures how late their HTTP actions reach a local sink.
//
// It is a bench command, not a test; run it from the repository root:
//
//	go run ./e2e/scale -jobs 10000 -concurrency 16
//	task scale -- -jobs 1000 -profile /tmp/scale-prof
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
)

// config is what the flags ask for.
type config struct {
	jobs        int
	concurrency int
	burstAt     string
	load        time.Duration
	idle        time.Duration
	grace       time.Duration
	keep        bool
	profile     string
	bin         string
}

func main() {
	var c config
	flag.IntVar(&c.jobs, "jobs", 10000, "number of hourly jobs, in collections of at most 1000")
	flag.IntVar(&c.concurrency, "concurrency", 16, "concurrent requests when creating the jobs and under API load")
	flag.StringVar(&c.burstAt, "burst-at", "", "RFC 3339 `time` at which all jobs fall due; by default chosen from the rate of the first 200 PUTs")
	flag.DurationVar(&c.load, "load", 30*time.Second, "how long the API is loaded while the jobs are idle")
	flag.DurationVar(&c.idle, "idle", 20*time.Second, "pause after the load before recur's memory is read")
	flag.DurationVar(&c.grace, "grace", 10*time.Minute, "how long after the burst time a job's occurrence may arrive before it counts as missed")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (binary, data, recur.log)")
	flag.StringVar(&c.bin, "bin", "", recurproc.BinUsage)
	flag.StringVar(&c.profile, "profile", "", "`directory` to save recur's heap profiles (baseline and idle) in")
	flag.Parse()
	if c.jobs < 1 || c.concurrency < 1 || c.grace <= 0 {
		fmt.Fprintln(os.Stderr, "scale: -jobs, -concurrency and -grace must be positive")
		os.Exit(2)
	}
	recurproc.Main("scale", func(ctx context.Context) error { return run(ctx, c) })
}

// scale is one run: recur dev, the sink, and the API client.
type scale struct {
	cfg     config
	proc    *recurproc.Process
	sink    *sink
	api     *api
	burst   time.Time // when every job falls due
	created []bool    // which jobs were created with the burst time
}

func run(ctx context.Context, c config) error {
	s := &scale{cfg: c}
	if c.burstAt != "" {
		t, err := time.Parse(time.RFC3339, c.burstAt)
		if err != nil {
			return fmt.Errorf("parse -burst-at %q: %w", c.burstAt, err)
		}
		s.burst = t.Truncate(time.Second)
	}
	work, remove, err := recurproc.WorkDir("recur-scale-", c.keep)
	if err != nil {
		return err
	}
	defer remove()
	if c.profile != "" {
		if err := os.MkdirAll(c.profile, 0o755); err != nil {
			return err
		}
	}
	loadStart := recurproc.LoadAverage()
	bin, err := recurproc.Binary(c.bin, work)
	if err != nil {
		return err
	}
	if s.sink, err = startSink(c.jobs); err != nil {
		return err
	}
	defer s.sink.close()
	if s.proc, err = recurproc.Start(bin, filepath.Join(work, "data"), filepath.Join(work, "recur.log"), c.profile != ""); err != nil {
		return err
	}
	defer s.proc.Kill()
	s.api = newAPI(s.proc.API, c.concurrency)
	res, err := s.measure(ctx)
	if err != nil {
		return err
	}
	res.loadStart = loadStart
	res.print()
	return s.proc.Stop()
}

// measure runs the phases in order on the started recur dev.
func (s *scale) measure(ctx context.Context) (*results, error) {
	res := &results{cfg: s.cfg}
	res.baseline = s.sampleMemory(ctx, "baseline")
	log.Printf("baseline: RSS %s with no jobs", mib(res.baseline.rss))
	var err error
	if res.create, err = s.createJobs(ctx); err != nil {
		return nil, err
	}
	res.valid = res.create.ended.Before(s.burst)
	if !res.valid {
		log.Printf("!!! creation ended at %s, after the burst time %s: THE BURST IS INVALID",
			res.create.ended.Format(time.TimeOnly), s.burst.Format(time.TimeOnly))
	}
	res.load = s.load(ctx, s.loadTime())
	sleepUntil(ctx, time.Now().Add(min(s.cfg.idle, time.Until(s.burst)-10*time.Second)))
	res.idle = s.sampleMemory(ctx, "idle")
	log.Printf("idle: RSS %s with %d jobs", mib(res.idle.rss), res.create.created)
	if !time.Now().Before(s.burst) {
		log.Printf("!!! the load or the memory reading ran past the burst time %s", s.burst.Format(time.TimeOnly))
	}
	res.burst = s.measureBurst(ctx, res.create.created)
	res.dataSize = s.proc.DataSize()
	res.loadEnd = recurproc.LoadAverage()
	return res, nil
}

// loadTime is -load, shortened so that the load and the idle pause end at
// least 30 s before the burst time.
func (s *scale) loadTime() time.Duration {
	d := min(s.cfg.load, time.Until(s.burst)-s.cfg.idle-30*time.Second)
	if d < s.cfg.load {
		log.Printf("!!! the burst time is near: API load cut from %s to %s", s.cfg.load, max(d, 0).Round(time.Second))
	}
	return d
}
