// Command scale measures recur holding many jobs, and beside it native
// Temporal Schedules in the same run (the peer, internal/peer), each on a
// deployment of its own started alike. For each, in turn, it creates N
// hourly items (definition latency and rate), loads the API while they
// are idle (get, list, history and redefinition latency, see loadMix),
// reads the CPU over an idle pause and the memory per idle item, and then
// lets all N fall due in the same minute (the burst) and measures how late
// their HTTP POSTs reach a local sink, while it loads the API again with
// reads of them and writes to items of their own (burstMix); then it
// deletes them. It runs on `recur dev`, or with -cluster on `recur serve`
// against a Temporal server process on PostgreSQL.
//
// It is a bench command, not a test; run it from the repository root:
//
//	go run ./e2e/scale -jobs 10000 -concurrency 16
//	go run ./e2e/scale -jobs 3000 -cluster
//	task scale -- -jobs 1000 -profile /tmp/scale-prof
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/internal/peer"
	"github.com/recurhq/recur/internal/recurproc"
)

// config is what the flags ask for.
type config struct {
	jobs        int
	concurrency int
	burstAt     string
	load        time.Duration
	burstLoad   time.Duration
	groupEvery  time.Duration
	idle        time.Duration
	idleAfter   time.Duration
	grace       time.Duration
	keep        bool
	profile     string
	bin         string
	phases      string
	settle      time.Duration
	floor       bool
	cluster     recurproc.ClusterFlags
}

func main() {
	var c config
	flag.IntVar(&c.jobs, "jobs", 10000, "number of hourly jobs, in collections of at most 1000")
	flag.IntVar(&c.concurrency, "concurrency", 16, "concurrent requests when creating the jobs and under API load")
	flag.StringVar(&c.burstAt, "burst-at", "", "RFC 3339 `time` at which all jobs fall due; by default chosen from the rate of the first 200 PUTs")
	flag.DurationVar(&c.load, "load", 30*time.Second, "how long the API is loaded while the jobs are idle")
	flag.DurationVar(&c.burstLoad, "burst-load", 3*time.Minute, "how long the API is loaded from the burst time, cut when every item has been delivered (writes to items of their own, reads of the burst's; see burstMix; 0: not loaded)")
	flag.DurationVar(&c.groupEvery, "group-every", 0, "during the burst, start a collection's disable at most once in this `duration` (0: as soon as the last one's enable has answered)")
	flag.DurationVar(&c.idle, "idle", 20*time.Second, "pause after the load, with nothing due, over which every process's CPU is measured, before recur's memory is read")
	flag.DurationVar(&c.idleAfter, "idle-after", 2*time.Minute, "how long every process's CPU and PostgreSQL's writes are measured, a minute after the burst, with every item waiting for its next occurrence an hour after the burst time (0: not measured)")
	flag.DurationVar(&c.grace, "grace", 10*time.Minute, "how long after the burst time a job's occurrence may arrive before it counts as missed")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (binary, data, recur.log)")
	flag.StringVar(&c.bin, "bin", "", recurproc.BinUsage)
	flag.StringVar(&c.profile, "profile", "", "`directory` to save recur's heap profiles (baseline and idle) in")
	flag.StringVar(&c.phases, "phases", "recur,peer", "phases to run, in this order: recur (recur's jobs), peer (native Schedules) or both")
	flag.DurationVar(&c.settle, "settle", time.Minute, "pause after a phase's deletions, before the next phase (the last phase deletes nothing)")
	flag.BoolVar(&c.floor, "floor", false, "during the burst, also signal workflows no worker polls and update workflows of an idle worker of this process (1 request in 16 each): the least a durable write and an update cost on the server at that moment")
	c.cluster.Register(flag.CommandLine)
	flag.Parse()
	if c.jobs < 1 || c.concurrency < 1 || c.grace <= 0 {
		fmt.Fprintln(os.Stderr, "scale: -jobs, -concurrency and -grace must be positive")
		os.Exit(2)
	}
	for _, name := range strings.Split(c.phases, ",") {
		if name != "recur" && name != "peer" {
			fmt.Fprintf(os.Stderr, "scale: -phases: unknown phase %q\n", name)
			os.Exit(2)
		}
	}
	if c.burstAt != "" && strings.Contains(c.phases, ",") {
		fmt.Fprintln(os.Stderr, "scale: -burst-at needs a single phase: phases run in turn")
		os.Exit(2)
	}
	recurproc.Main("scale", func(ctx context.Context) error { return run(ctx, c) })
}

// phase is one subject measured on the deployment.
type phase struct {
	cfg     config
	dep     *recurproc.Deployment
	api     *api // recur's, also for its /metrics
	sink    *sink
	subject subject
	floor   *floor    // with -floor
	burst   time.Time // when every item falls due
	created []bool    // which items were created with the burst time
	last    bool      // no phase follows
}

func run(ctx context.Context, c config) error {
	var burst time.Time
	if c.burstAt != "" {
		t, err := time.Parse(time.RFC3339, c.burstAt)
		if err != nil {
			return fmt.Errorf("parse -burst-at %q: %w", c.burstAt, err)
		}
		burst = t.Truncate(time.Second)
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
	res := &results{cfg: c, loadStart: loadStart}
	names := strings.Split(c.phases, ",")
	for i, name := range names {
		if ctx.Err() != nil {
			break
		}
		r, err := runPhase(ctx, c, name, bin, filepath.Join(work, name), burst, i == len(names)-1)
		if err != nil {
			return err
		}
		res.phases = append(res.phases, r)
	}
	res.loadEnd = recurproc.LoadAverage()
	res.print()
	return nil
}

// runPhase measures one phase on a deployment of its own, started for it
// in dir and stopped after it: a phase's memory per idle item then starts
// from a fresh process, not from what an earlier phase's heap grew into
// and the Go runtime keeps.
func runPhase(ctx context.Context, c config, name, bin, dir string, burst time.Time, last bool) (*phaseResult, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	d, err := recurproc.Deploy(ctx, bin, dir, c.cluster.Options(), c.profile != "")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	sink, err := startSink(c.jobs)
	if err != nil {
		return nil, err
	}
	defer sink.close()
	a := newAPI(d.API, c.concurrency)
	p := &phase{cfg: c, dep: d, api: a, sink: sink, burst: burst, last: last}
	var tc client.Client
	if name != "recur" || c.floor {
		if tc, err = peer.Dial(ctx, d.Temporal, d.Namespace); err != nil {
			return nil, err
		}
		defer tc.Close()
	}
	if c.floor {
		p.floor = &floor{temporal: tc}
		defer p.floor.close()
	}
	if name == "recur" {
		p.subject = &recurJobs{api: a, sink: sink}
	} else {
		w, err := peer.StartWorker(tc)
		if err != nil {
			return nil, err
		}
		defer w.Stop()
		p.subject = &schedules{temporal: tc, namespace: d.Namespace, sink: sink, workers: c.concurrency}
	}
	r, err := p.measure(ctx)
	if err != nil {
		return nil, err
	}
	return r, d.Stop()
}

// measure runs the steps of a phase in order, then removes its items and
// waits for the server to settle.
func (s *phase) measure(ctx context.Context) (*phaseResult, error) {
	res := &phaseResult{name: s.subject.name()}
	res.baseline = s.sampleMemory(ctx, s.subject.name()+"-baseline")
	res.stored[0] = s.storedNow(ctx)
	log.Printf("%s: baseline: RSS %s", res.name, mib(res.baseline.rss))
	var err error
	if res.create, err = s.create(ctx); err != nil {
		return nil, err
	}
	res.stored[1] = s.storedNow(ctx)
	if err := s.prepareWrites(ctx); err != nil {
		return nil, fmt.Errorf("%s: prepare the writes during the burst: %w", res.name, err)
	}
	res.valid = res.create.ended.Before(s.burst)
	if !res.valid {
		log.Printf("!!! %s: creation ended at %s, after the burst time %s: THE BURST IS INVALID", res.name,
			res.create.ended.Format(time.TimeOnly), s.burst.Format(time.TimeOnly))
	}
	res.load = s.load(ctx, s.loadTime())
	res.pause = s.measureUsage(ctx, time.Now().Add(min(s.cfg.idle, time.Until(s.burst)-10*time.Second)))
	res.idle = s.sampleMemory(ctx, s.subject.name()+"-idle")
	log.Printf("%s: idle: RSS %s with %d created", res.name, mib(res.idle.rss), res.create.created)
	if !time.Now().Before(s.burst) {
		log.Printf("!!! %s: the load or the memory reading ran past the burst time %s", res.name, s.burst.Format(time.TimeOnly))
	}
	res.stored[2] = s.storedNow(ctx)
	res.burst = s.measureBurst(ctx, res.create.created)
	res.stored[3] = s.storedNow(ctx)
	res.after = s.measureIdle(ctx)
	if s.last {
		// Its deployment goes with it, and no phase follows to want a
		// quiet machine.
		return res, nil
	}
	log.Printf("%s: deleting", res.name)
	if err := s.subject.remove(ctx, s.cfg.jobs); err != nil {
		log.Printf("%s: could not delete every item: %v", res.name, err)
	}
	s.settle(ctx)
	return res, nil
}

// quietAfterBurst is how long after the burst's last delivery (and the
// wait for duplicates) the idle measurement after the burst begins: the
// server's own tasks of the last occurrences are done by then.
const quietAfterBurst = time.Minute

// measureIdle measures every process's CPU and PostgreSQL's writes over
// -idle-after, from quietAfterBurst after the burst: every item has then
// run its first task and its occurrence and waits for the next, an hour
// after the burst time, at which the measurement stops a minute early.
// Unlike the pause before the burst, no first task falls into it.
func (s *phase) measureIdle(ctx context.Context) idleResult {
	if s.cfg.idleAfter <= 0 {
		return idleResult{}
	}
	sleepUntil(ctx, time.Now().Add(quietAfterBurst))
	end := time.Now().Add(min(s.cfg.idleAfter, time.Until(s.burst.Add(time.Hour-time.Minute))))
	if !end.After(time.Now()) {
		log.Printf("!!! %s: no time left for the idle after the burst before the next occurrence", s.subject.name())
		return idleResult{}
	}
	log.Printf("%s: idle after the burst until %s", s.subject.name(), end.Format(time.TimeOnly))
	return s.measureUsage(ctx, end)
}

// measureUsage measures every process's CPU and PostgreSQL's writes from
// now until end.
func (s *phase) measureUsage(ctx context.Context, end time.Time) idleResult {
	from, cpu, wrote := time.Now(), s.dep.CPU(), s.dep.Writes(ctx)
	sleepUntil(ctx, end)
	return idleResult{cpu: s.dep.CPU().Sub(cpu), writes: s.dep.Writes(ctx).Sub(wrote), took: time.Since(from)}
}

// storedNow reads what the database holds on disk and, on a cluster, what
// PostgreSQL has written so far.
func (s *phase) storedNow(ctx context.Context) stored {
	return stored{bytes: s.dep.StoredBytes(), writes: s.dep.Writes(ctx), kinds: s.dep.StoredByKind(ctx)}
}

// settle waits -settle after the deletions, so that the next phase starts
// on an idle server.
func (s *phase) settle(ctx context.Context) {
	cpu := s.dep.CPU()
	sleepUntil(ctx, time.Now().Add(s.cfg.settle))
	log.Printf("%s: settled; recur (and the cluster) used %.0f%% of a core over the last %s", s.subject.name(),
		100*float64(s.dep.CPU().Sub(cpu).Total())/float64(s.cfg.settle), s.cfg.settle)
}

// loadTime is -load, shortened so that the load and the idle pause end at
// least 30 s before the burst time.
func (s *phase) loadTime() time.Duration {
	d := min(s.cfg.load, time.Until(s.burst)-s.cfg.idle-30*time.Second)
	if d < s.cfg.load {
		log.Printf("!!! the burst time is near: API load cut from %s to %s", s.cfg.load, max(d, 0).Round(time.Second))
	}
	return d
}
