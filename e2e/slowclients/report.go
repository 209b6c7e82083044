package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
)

// report is everything one run measured.
type report struct {
	cfg                config
	loadStart, loadEnd string
	attemptsTook       time.Duration
	flood              counts
	stillOpen          []int // every holdStep after the last attempt
	health             *healthProbes
	fdsBefore          int
	alive              bool
	logLines           map[string]int
	tooManyFiles       int
}

// row prints one line of the report.
func row(what, format string, args ...any) {
	fmt.Printf("%-44s %s\n", what, fmt.Sprintf(format, args...))
}

func (r *report) print() {
	f, h := r.flood, r.health
	fmt.Printf("==== slowclients: %d slow requests from 127.0.0.1, /healthz from 127.0.0.2 ====\n", r.cfg.conns)
	row("command", "go run ./e2e/slowclients %s", strings.Join(os.Args[1:], " "))
	row("load average start / end", "%s / %s", r.loadStart, r.loadEnd)
	row("attempts, time to make them", "%d in %s, %d at a time", f.attempted, r.attemptsTook.Round(time.Millisecond), r.cfg.parallel)
	row("reset while connecting or sending", "%d", f.resetEarly)
	row("failed to connect", "%s", countsOf(f.dialErrs))
	row("closed by recur after an answer", "%s", countsOf(f.answered))
	row("reset or closed by recur without an answer", "%d", f.silent)
	row("closed by recur: time from connecting", "%s", percentiles(f.closedIn))
	row("open at once, the most", "%d", f.maxOpen)
	var open []string
	for i, n := range r.stillOpen {
		open = append(open, fmt.Sprintf("%s: %d", time.Duration(i+1)*holdStep, n))
	}
	row("still open after the last attempt", "%s", strings.Join(open, ", "))
	row("recur's file descriptors: idle, the most", "%d, %d", r.fdsBefore, h.MaxFDs)
	row("/healthz answered 200", "%d, latency %s", len(h.Latencies), percentiles(h.Latencies))
	row("/healthz failed", "%s", countsOf(h.Failures))
	row("/readyz at the end of the hold", "%s", h.Ready)
	row("recur still running", "%t", r.alive)
	row(`log lines "too many open files"`, "%d", r.tooManyFiles)
	row("log WARN/ERROR messages", "%s", countsOf(r.logLines))
	row("recur settings from the environment", "%s", recurproc.Settings())
}

// countsOf prints a count map, largest first, or "none".
func countsOf(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return m[b] - m[a] })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d × %s", m[k], k))
	}
	return strings.Join(parts, "; ")
}
