// Command soak is recur's long-life test: it builds the real binary, starts
// `recur dev` on free ports, creates hundreds of jobs that run every minute
// and post to a local HTTP sink, lets them run for hours and reports every
// missed, doubled or unexpected occurrence, the lateness of the runs, the
// status counters of every job and the memory of the process. It exits 1
// when anything was missed or doubled (or unexpected, or miscounted).
//
// It is not part of `go test ./...`; run it from the repository root:
//
//	go run ./e2e/soak -jobs 300 -for 2h
//	task soak -- -jobs 300 -for 2h -keep
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
)

// config is what the flags ask for.
type config struct {
	jobs     int
	duration time.Duration
	progress time.Duration
	grace    time.Duration
	dataDir  string
	keep     bool
}

func main() {
	var c config
	flag.IntVar(&c.jobs, "jobs", 300, "number of every-minute jobs (at most 1000, the P20Premium quota)")
	flag.DurationVar(&c.duration, "for", 2*time.Hour, "how long the jobs run")
	flag.DurationVar(&c.progress, "progress", 5*time.Minute, "interval of progress reports")
	flag.DurationVar(&c.grace, "grace", 2*time.Minute, "how long the final check waits for late deliveries")
	flag.StringVar(&c.dataDir, "data-dir", "", "recur's data directory, new or empty (default: one in a temporary directory, removed at the end unless -keep)")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (binary, data, recur.log)")
	flag.Parse()
	if c.jobs < 1 || c.jobs > 1000 || c.duration <= 0 || c.progress <= 0 {
		fmt.Fprintln(os.Stderr, "soak: -jobs must be 1 to 1000, -for and -progress positive")
		os.Exit(2)
	}
	log.SetFlags(log.Ltime)
	log.SetPrefix("soak: ")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// A second Ctrl-C kills the soak at once.
		<-ctx.Done()
		stop()
	}()
	ok, err := run(ctx, c)
	if err != nil {
		log.Printf("error: %v", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// run does the whole soak and tells whether it passed. Ctrl-C ends the
// running phase early; the final checks still run.
func run(ctx context.Context, c config) (bool, error) {
	work, remove, err := recurproc.WorkDir("recur-soak-", c.keep)
	if err != nil {
		return false, err
	}
	defer remove()
	if c.dataDir == "" {
		c.dataDir = work + "/data"
	}
	bin, err := recurproc.Build(work)
	if err != nil {
		return false, err
	}
	sink, err := startSink()
	if err != nil {
		return false, err
	}
	defer sink.close()
	proc, err := recurproc.Start(bin, c.dataDir, work+"/recur.log", false)
	if err != nil {
		return false, err
	}
	defer proc.Kill()
	s := &soak{cfg: c, proc: proc, sink: sink, api: newClient(proc.API)}
	s.rssStart = proc.RSS()
	passed, err := s.run(ctx)
	if stopErr := proc.Stop(); stopErr != nil && err == nil {
		err = stopErr
	}
	s.printProcess()
	return passed, err
}
