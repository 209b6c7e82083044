// Command firing measures firing precision and throughput on the embedded
// server, or with -cluster on a Temporal cluster on PostgreSQL: N
// every-minute recur jobs against a local HTTP sink, then, on the same
// server in the same run, N native Temporal Schedules starting a
// trivial workflow that makes the same HTTP call (the peer). With -every
// 10s the jobs are every-10-second ones (recur's Second frequency) and the
// Schedules have a 10-second interval. For each phase
// it prints the occurrences expected and delivered, lateness (arrival at
// the sink minus nominal time) p50/p99/max, occurrences per second
// sustained, CPU and RSS, and history events per occurrence. On the
// cluster, CPU is split into recur (`recur serve`), the Temporal server
// process and PostgreSQL.
//
// With -otlp, recur runs with tracing on, exporting every span to a
// Jaeger the tool starts (internal/jaeger): a run with and one without
// measure what tracing costs an occurrence.
//
// It is a bench command, not a test; run it from the repository root:
//
//	go run ./e2e/firing -jobs 1000 -minutes 3
//	go run ./e2e/firing -jobs 1000 -minutes 3 -cluster
//	go run ./e2e/firing -jobs 1000 -minutes 3 -otlp
//	go run ./e2e/firing -jobs 100 -minutes 10 -every 10s
//	task firing -- -jobs 10000 -minutes 5
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/internal/jaeger"
	"github.com/recurhq/recur/internal/peer"
	"github.com/recurhq/recur/internal/recurproc"
	"github.com/recurhq/recur/jobs"
)

// config is what the flags ask for.
type config struct {
	jobs    int
	minutes int
	grace   time.Duration
	settle  time.Duration
	keep    bool
	phases  string
	profile string
	// startAfter, when set, holds every occurrence back until the first
	// minute boundary at least this long after a phase starts creating:
	// at 10,000 every-minute jobs, creation takes minutes, and jobs that
	// fire while the rest are created slow the creation down.
	startAfter time.Duration
	// catchUp, when set, is the recur jobs' catchUpWindow (ISO 8601).
	catchUp string
	// cluster runs recur serve against a Temporal server process on
	// PostgreSQL (internal/temporalcluster) instead of recur dev.
	cluster recurproc.ClusterFlags
	// bin is the recur binary to measure; empty builds this tree's.
	bin string
	// otlp runs recur with tracing on, exporting to a Jaeger the tool
	// starts (internal/jaeger).
	otlp bool
	// every is the period of every job and schedule: a minute, or whole
	// seconds that divide one.
	every time.Duration
}

func main() {
	var c config
	flag.IntVar(&c.jobs, "jobs", 1000, "number of every-minute jobs, and of schedules")
	flag.IntVar(&c.minutes, "minutes", 3, "minutes measured in each phase")
	flag.DurationVar(&c.grace, "grace", 2*time.Minute, "how long a phase waits after its window for late deliveries")
	flag.DurationVar(&c.settle, "settle", time.Minute, "pause after a phase's deletions, before the next phase")
	flag.StringVar(&c.phases, "phases", "recur,peer", "phases to run: recur, peer or both")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (binary, data, recur.log)")
	flag.DurationVar(&c.startAfter, "start-after", 0, "hold every job's (schedule's) first occurrence back until the first minute boundary this long after its phase starts creating; by default each begins at its next slot once created")
	flag.StringVar(&c.catchUp, "catch-up", "", "the recur jobs' catchUpWindow (ISO 8601, P365D is Schedules' default); by default recur's, one period: an occurrence a loaded server starts later than that is recorded as Postponed, not run")
	c.cluster.Register(flag.CommandLine)
	flag.StringVar(&c.bin, "bin", "", recurproc.BinUsage)
	flag.BoolVar(&c.otlp, "otlp", false, "run recur with tracing on (--otlp-endpoint), exporting to a Jaeger the tool starts, so that firing is measured with tracing off and on; the Schedules are not traced")
	flag.DurationVar(&c.every, "every", time.Minute, "period of every job and schedule: 1m (Minute jobs) or whole seconds that divide a minute, e.g. 10s (Second jobs; recur runs with --min-interval lowered to it when below its default)")
	flag.StringVar(&c.profile, "profile", "", "`directory` to save recur's CPU profile over each phase's window, and its heap at the window's end, in")
	flag.Parse()
	if c.jobs < 1 || c.minutes < 1 || c.startAfter < 0 {
		fmt.Fprintln(os.Stderr, "firing: -jobs and -minutes must be positive, -start-after not negative")
		os.Exit(2)
	}
	if c.every < time.Second || c.every%time.Second != 0 || time.Minute%c.every != 0 {
		fmt.Fprintln(os.Stderr, "firing: -every must be 1m or whole seconds that divide a minute (1s, 2s, 5s, 10s, 15s, 30s, ...)")
		os.Exit(2)
	}
	recurproc.Main("firing", func(ctx context.Context) error { return run(ctx, c) })
}

// firing is one run: recur, the sink, and clients of both.
type firing struct {
	cfg      config
	dep      *recurproc.Deployment
	sink     *sink
	api      *restClient
	temporal client.Client
}

func run(ctx context.Context, c config) error {
	work, remove, err := recurproc.WorkDir("recur-firing-", c.keep)
	if err != nil {
		return err
	}
	defer remove()
	if c.profile != "" {
		if err := os.MkdirAll(c.profile, 0o755); err != nil {
			return err
		}
	}
	bin, err := recurproc.Binary(c.bin, work)
	if err != nil {
		return err
	}
	sink, err := startSink()
	if err != nil {
		return err
	}
	defer sink.close()
	var extra []string
	if c.otlp {
		j, err := jaeger.Start(ctx, work)
		if err != nil {
			return err
		}
		defer j.Stop()
		log.Printf("tracing on: recur exports to Jaeger at %s (UI and query API %s)", j.OTLPHTTP, j.Query)
		extra = []string{"--otlp-endpoint", j.OTLPHTTP}
	}
	if c.every < jobs.DefaultMinInterval {
		extra = append(extra, "--min-interval", c.every.String())
	}
	d, err := recurproc.Deploy(ctx, bin, work, c.cluster.Options(), c.profile != "", extra...)
	if err != nil {
		return err
	}
	defer d.Close()
	tc, err := peer.Dial(ctx, d.Temporal, d.Namespace)
	if err != nil {
		return err
	}
	defer tc.Close()
	f := &firing{cfg: c, dep: d, sink: sink, temporal: tc, api: &restClient{recurproc.NewClient(d.API)}}
	var results []*phaseResult
	for _, p := range []struct {
		name string
		run  func(context.Context) (*phaseResult, error)
	}{{"recur", f.recurPhase}, {"peer", f.peerPhase}} {
		if !slices.Contains(strings.Split(c.phases, ","), p.name) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		r, err := p.run(ctx)
		if err != nil {
			return fmt.Errorf("phase %s: %w", p.name, err)
		}
		results = append(results, r)
	}
	printResults(c, results)
	return d.Stop()
}

// recurPhase creates the jobs, measures them and deletes their collections.
func (f *firing) recurPhase(ctx context.Context) (*phaseResult, error) {
	n := f.cfg.jobs
	started := time.Now()
	first := f.firstMinute(started)
	log.Printf("recur: creating %d collection(s) and %d jobs every %s%s", len(collections(n)), n, f.cfg.every, startsAt(first))
	ok, err := f.createJobs(ctx, n, first)
	created := time.Since(started)
	log.Printf("recur: created %d of %d jobs in %s%s", len(ok), n, created.Round(time.Millisecond), firstError(err))
	names := make([]string, n)
	for i := range names {
		names[i] = jobName(i)
	}
	r := f.measure(ctx, "recur", names, len(ok), first)
	r.created = created
	r.events = countSample(ctx, f.temporal, ok, func(name string) string {
		var i int
		_, _ = fmt.Sscanf(name, "job-%d", &i)
		return jobKey(i).JobWorkflowID()
	}, false, f.sink.of("recur"), r.from, r.to)
	log.Printf("recur: deleting the collections")
	if err := f.deleteCollections(ctx, n); err != nil {
		log.Printf("recur: could not delete the collections: %v", err)
	}
	f.settle("recur")
	return r, nil
}

// peerPhase starts the in-process worker, creates the schedules, measures
// them and deletes them.
func (f *firing) peerPhase(ctx context.Context) (*phaseResult, error) {
	w, err := peer.StartWorker(f.temporal)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	n := f.cfg.jobs
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("sched-%05d", i)
	}
	started := time.Now()
	first := f.firstMinute(started)
	log.Printf("peer: creating %d schedules every %s%s", n, f.cfg.every, startsAt(first))
	ok, err := f.createSchedules(ctx, names, first)
	created := time.Since(started)
	log.Printf("peer: created %d of %d schedules in %s%s", len(ok), n, created.Round(time.Millisecond), firstError(err))
	r := f.measure(ctx, "peer", names, len(ok), first)
	r.created = created
	r.events = countSample(ctx, f.temporal, ok, func(name string) string {
		return peer.SchedulerWorkflowPrefix + name
	}, true, f.sink.of("peer"), r.from, r.to)
	log.Printf("peer: deleting the schedules")
	if err := f.deleteSchedules(ctx, ok); err != nil {
		log.Printf("peer: could not delete every schedule: %v", err)
	}
	f.settle("peer")
	return r, nil
}

// settle waits for the sink to fall quiet and then the settle pause, so
// that the next phase starts on an idle server.
func (f *firing) settle(phase string) {
	deadline := time.Now().Add(2 * time.Minute)
	last, since := f.sink.count(), time.Now()
	for time.Now().Before(deadline) && time.Since(since) < 10*time.Second {
		time.Sleep(time.Second)
		if n := f.sink.count(); n != last {
			last, since = n, time.Now()
		}
	}
	cpu := f.dep.CPU()
	time.Sleep(f.cfg.settle)
	log.Printf("%s: settled; recur (and the cluster) used %.0f%% of a core over the last %s", phase,
		100*float64(f.dep.CPU().Sub(cpu).Total())/float64(f.cfg.settle), f.cfg.settle)
}

// firstMinute is the minute before which no occurrence of a phase that
// starts creating at started is due; zero without -start-after.
func (f *firing) firstMinute(started time.Time) time.Time {
	if f.cfg.startAfter == 0 {
		return time.Time{}
	}
	return started.Add(f.cfg.startAfter + time.Minute - 1).Truncate(time.Minute).UTC()
}

func startsAt(first time.Time) string {
	if first.IsZero() {
		return ""
	}
	return ", first occurrences at " + first.Format(time.TimeOnly)
}

// firstError says what the first failure of a batch was, if any.
func firstError(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf(" (first error: %v)", err)
}
