package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
)

// results is everything one run measured.
type results struct {
	cfg                config
	loadStart, loadEnd string
	create             *creation
	valid              bool // creation ended before the burst time
	load               *loadResult
	baseline, idle     memory
	burst              *burstResult
	dataSize           int64
}

// row prints one line of the results table.
func row(what, format string, args ...any) {
	fmt.Printf("%-38s %s\n", what, fmt.Sprintf(format, args...))
}

// print prints the results table.
func (r *results) print() {
	fmt.Printf("==== scale: %d hourly jobs, concurrency %d ====\n", r.cfg.jobs, r.cfg.concurrency)
	row("command", "go run ./e2e/scale %s", strings.Join(os.Args[1:], " "))
	row("recur settings from the environment", "%s", recurproc.Settings())
	row("load average start / end", "%s / %s", r.loadStart, r.loadEnd)
	r.printCreate()
	r.printLoad()
	r.printMemory()
	r.printBurst()
	fmt.Println(memoryNote)
}

func (r *results) printCreate() {
	c, b := r.create, r.burst
	fmt.Println("-- create")
	row("jobs created / asked", "%d / %d in %d collection(s)", c.created, r.cfg.jobs, (r.cfg.jobs+perCollection-1)/perCollection)
	row("time to create all", "%s (ended %s)", round(c.took), c.ended.Format(time.TimeOnly))
	row("burst time", "%s (%s)", b.at.Format(time.RFC3339), c.calibration)
	row("PUT (create) latency", "%s", c.puts.latency())
	row("PUT (create) rate", "%s (all PUTs, retries included, over %s)", c.puts.rate(), round(c.puts.window))
	row("PUT (create) errors", "%s", c.puts.errors())
	if c.reputs.count() > 0 {
		row("re-PUT with burst time latency", "%s", c.reputs.latency())
		row("re-PUT rate, errors", "%s; %s", c.reputs.rate(), c.reputs.errors())
	}
}

func (r *results) printLoad() {
	fmt.Println("-- API with the jobs idle")
	l := r.load
	row("full list of "+jobKey(0).Collection+" (nextLink)", "%d of %d jobs in %d pages, %s; pages %s; errors %s",
		l.listed, l.inList, l.pages, round(l.fullList.window), l.fullList.latency(), l.fullList.errors())
	row("load", "%d workers for %s, mix %s", r.cfg.concurrency, round(l.ran), mix())
	for i, op := range l.ops {
		row(loadMix[i].name, "%s, %s; errors %s", op.latency(), op.rate(), op.errors())
	}
}

func (r *results) printMemory() {
	fmt.Println("-- memory")
	n := r.create.created
	row("RSS baseline (0 jobs) / idle", "%s / %s", mib(r.baseline.rss), mib(r.idle.rss))
	row("RSS per idle job", "%s", perJob(int64(r.idle.rss)*1024, int64(r.baseline.rss)*1024, n))
	row("heap in use baseline / idle (metrics)", "%s / %s", bytesMiB(r.baseline.heapInuse), bytesMiB(r.idle.heapInuse))
	row("heap in use per idle job (metrics)", "%s", perJob(r.idle.heapInuse, r.baseline.heapInuse, n))
	if r.cfg.profile != "" {
		row("heap in use after GC baseline / idle", "%s / %s (heap profiles in %s)", bytesMiB(r.baseline.heapGC), bytesMiB(r.idle.heapGC), r.cfg.profile)
		row("heap in use after GC per idle job", "%s", perJob(r.idle.heapGC, r.baseline.heapGC, n))
	}
}

func (r *results) printBurst() {
	b := r.burst
	fmt.Println("-- burst")
	if !r.valid {
		fmt.Println("!!! INVALID: creation ended after the burst time; jobs were still being created when they fell due")
	}
	row("jobs due / delivered", "%d / %d", b.expected, len(b.late))
	row("all delivered after", "%s", b.allDelivered())
	row("lateness (first arrival - burst time)", "%s", percentiles(b.late))
	row("delivered within 1 / 2 / 5 min", "%d / %d / %d", b.within[0], b.within[1], b.within[2])
	row("missed (none within -grace)", "%d (grace %s)", b.missed, r.cfg.grace)
	row("duplicates, stray requests", "%d, %d", b.duplicates, b.stray)
	row("recur CPU over the burst", "%.1f s = %.0f%% of a core over %s", b.cpu.Seconds(), 100*b.cpu.Seconds()/b.window.Seconds(), round(b.window))
	row("recur RSS peak / end of burst", "%s / %s", mib(b.rssPeak), mib(b.rssEnd))
	row("recur data dir", "%.1f MiB", float64(r.dataSize)/(1<<20))
}

// memoryNote says how the memory figures were read.
const memoryNote = `Memory per idle job is (idle - baseline) / jobs created; the baseline is read right after
recur dev is ready, so the figure also holds what the server and worker grow into once busy,
which dominates for small N. "metrics" is go_memstats_heap_inuse_bytes of /metrics, no GC
forced; "after GC" is HeapInuse in the heap profile taken with gc=1 (-profile). The worker keeps
up to --workflow-cache workflows in memory (RECUR_WORKFLOW_CACHE, which recur dev inherits from
this command; 10000 by default): past that many jobs the cache stops growing and the others are
replayed from history when they next run.`

// mix says the load's mix of operations.
func mix() string {
	var parts []string
	for _, m := range loadMix {
		parts = append(parts, fmt.Sprintf("%d0%% %s", m.weight, m.name))
	}
	return strings.Join(parts, ", ")
}

func bytesMiB(v int64) string {
	if v < 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f MiB", float64(v)/(1<<20))
}
