package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
)

// offset is when job (schedule) i of n fires past the start of each
// period every: the n fire times are spread over the period in whole
// seconds.
func offset(i, n int, every time.Duration) time.Duration {
	return (time.Duration(i) * every / time.Duration(n)).Truncate(time.Second)
}

// phaseResult is what one phase measured.
type phaseResult struct {
	phase    string
	n        int
	every    time.Duration // the jobs' (schedules') period
	created  time.Duration
	from, to time.Time // the window: occurrences due in [from, to) are measured

	expected    int
	delivered   int             // occurrences due in the window that arrived
	duplicates  int             // further requests for an occurrence already delivered
	offSchedule int             // requests whose nominal time is not one of the name's slots
	inWindow    int             // requests of the phase that arrived within the window
	late        []time.Duration // first arrival minus nominal, per delivered occurrence

	cpu                       recurproc.Usage // used over the window by recur and, on a cluster, the server and PostgreSQL
	selfCPU                   time.Duration   // used over the window by this process (the peer's worker)
	recurRSSPeak, recurRSSEnd int             // kB
	selfRSSPeak, selfRSSEnd   int             // kB
	load                      string          // load average at the end of the window
	events                    eventCount
}

// measure waits for the first minute boundary at least 10 s away (and not
// before first, the phase's first occurrences, if set), samples
// CPU and RSS over the window of -minutes, waits at most -grace for the
// occurrences due in it, and compares the deliveries with the schedules.
// Of names (job i fires at offset(i, len(names))), created were created.
func (f *firing) measure(ctx context.Context, phase string, names []string, created int, first time.Time) *phaseResult {
	r := &phaseResult{phase: phase, n: created, every: f.cfg.every, expected: created * f.cfg.minutes * int(time.Minute/f.cfg.every)}
	r.from = time.Now().Add(10*time.Second + time.Minute - 1).Truncate(time.Minute)
	if r.from.Before(first) {
		r.from = first
	}
	r.to = r.from.Add(time.Duration(f.cfg.minutes) * time.Minute)
	log.Printf("%s: measuring the occurrences due %s-%s", phase, r.from.Format(time.TimeOnly), r.to.Format(time.TimeOnly))
	sleepUntil(ctx, r.from)
	profiled := f.profile(ctx, phase, r.to.Sub(r.from))
	self := os.Getpid()
	cpu, selfCPU := f.dep.CPU(), recurproc.CPUOf(self)
	for time.Now().Before(r.to) && ctx.Err() == nil {
		r.recurRSSPeak = max(r.recurRSSPeak, f.dep.RSS())
		r.selfRSSPeak = max(r.selfRSSPeak, recurproc.RSSOf(self))
		next := time.Now().Add(5 * time.Second)
		if next.After(r.to) {
			next = r.to
		}
		sleepUntil(ctx, next)
	}
	r.cpu, r.selfCPU = f.dep.CPU().Sub(cpu), recurproc.CPUOf(self)-selfCPU
	r.recurRSSEnd, r.selfRSSEnd = f.dep.RSS(), recurproc.RSSOf(self)
	r.recurRSSPeak, r.selfRSSPeak = max(r.recurRSSPeak, r.recurRSSEnd), max(r.selfRSSPeak, r.selfRSSEnd)
	r.load = recurproc.LoadAverage()
	<-profiled
	deadline := time.Now().Add(f.cfg.grace)
	for {
		r.analyze(names, f.sink.of(phase))
		if r.delivered >= r.expected || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(2 * time.Second)
	}
	ds := f.sink.of(phase)
	example := ""
	if len(ds) > 0 {
		example = fmt.Sprintf("; first request: %s key %q nominal %s at %s", ds[0].name, ds[0].key,
			ds[0].nominal.Format(time.RFC3339), ds[0].arrived.Format(time.StampMilli))
	}
	log.Printf("%s: %d of %d delivered; %d requests in all, %d off-schedule, %d duplicates; lateness %s%s",
		phase, r.delivered, r.expected, len(ds), r.offSchedule, r.duplicates, r.lateness(), example)
	return r
}

func sleepUntil(ctx context.Context, t time.Time) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(t)):
	}
}

// analyze compares the deliveries of the phase with the slots of names.
func (r *phaseResult) analyze(names []string, ds []delivery) {
	slot := make(map[string]time.Duration, len(names))
	for i, name := range names {
		slot[name] = offset(i, len(names), r.every)
	}
	type occ struct {
		name    string
		nominal time.Time
	}
	first := map[occ]time.Time{}
	r.duplicates, r.offSchedule, r.inWindow = 0, 0, 0
	for _, d := range ds {
		off, ok := slot[d.name]
		if !ok || d.nominal.Sub(d.nominal.Truncate(r.every)) != off {
			r.offSchedule++
			continue
		}
		if !d.arrived.Before(r.from) && d.arrived.Before(r.to) {
			r.inWindow++
		}
		if d.nominal.Before(r.from) || !d.nominal.Before(r.to) {
			continue
		}
		o := occ{d.name, d.nominal}
		if t, ok := first[o]; ok {
			r.duplicates++
			if d.arrived.Before(t) {
				first[o] = d.arrived
			}
			continue
		}
		first[o] = d.arrived
	}
	r.delivered = len(first)
	r.late = r.late[:0]
	for o, t := range first {
		r.late = append(r.late, t.Sub(o.nominal))
	}
	slices.Sort(r.late)
}

// quantile returns the q-quantile of the sorted lateness.
func (r *phaseResult) quantile(q float64) time.Duration {
	return r.late[min(len(r.late)-1, int(q*float64(len(r.late))))].Round(time.Millisecond)
}

func (r *phaseResult) lateness() string {
	if len(r.late) == 0 {
		return "n/a"
	}
	return fmt.Sprintf("p50 %s p99 %s max %s", r.quantile(0.5), r.quantile(0.99), r.late[len(r.late)-1].Round(time.Millisecond))
}

// printResults prints the phases side by side.
func printResults(c config, rs []*phaseResult) {
	fmt.Printf("==== firing precision: %d jobs / schedules every %s, %d minutes measured per phase ====\n", c.jobs, c.every, c.minutes)
	fmt.Printf("%-36s %s\n", "recur settings from the environment", recurproc.Settings())
	if c.catchUp != "" {
		fmt.Printf("%-36s %s\n", "recur jobs' catchUpWindow", c.catchUp)
	}
	if c.otlp {
		// Jaeger's own CPU is not recur's: it runs in a process of its own.
		fmt.Printf("%-36s %s\n", "recur tracing", "on: every span exported over OTLP to Jaeger")
	}
	row := func(what string, cell func(r *phaseResult) string) {
		cells := make([]string, len(rs))
		for i, r := range rs {
			cells[i] = cell(r)
		}
		fmt.Printf("%-36s %s\n", what, strings.Join(cells, " | "))
	}
	secs := func(r *phaseResult) float64 { return r.to.Sub(r.from).Seconds() }
	row("phase", func(r *phaseResult) string { return r.phase })
	row("created (count, time)", func(r *phaseResult) string {
		return fmt.Sprintf("%d in %s", r.n, r.created.Round(time.Millisecond))
	})
	row("window", func(r *phaseResult) string {
		return r.from.Format(time.TimeOnly) + "-" + r.to.Format(time.TimeOnly)
	})
	row("occurrences expected/delivered", func(r *phaseResult) string { return fmt.Sprintf("%d/%d", r.expected, r.delivered) })
	row("duplicates, off-schedule", func(r *phaseResult) string { return fmt.Sprintf("%d, %d", r.duplicates, r.offSchedule) })
	row("lateness (arrival - nominal)", func(r *phaseResult) string { return r.lateness() })
	row("offered occurrences/s", func(r *phaseResult) string { return fmt.Sprintf("%.1f", float64(r.n)/r.every.Seconds()) })
	row("sustained occurrences/s", func(r *phaseResult) string {
		return fmt.Sprintf("%.1f (arrived in window)", float64(r.inWindow)/secs(r))
	})
	row("recur process CPU (window)", func(r *phaseResult) string {
		return fmt.Sprintf("%.1f s = %.0f%% of a core", r.cpu.Recur.Seconds(), 100*r.cpu.Recur.Seconds()/secs(r))
	})
	row("firing process CPU (window)", func(r *phaseResult) string {
		return fmt.Sprintf("%.1f s = %.0f%% of a core", r.selfCPU.Seconds(), 100*r.selfCPU.Seconds()/secs(r))
	})
	onCluster := c.cluster.On()
	if onCluster {
		row("Temporal server process CPU (window)", func(r *phaseResult) string {
			return fmt.Sprintf("%.1f s = %.0f%% of a core", r.cpu.Server.Seconds(), 100*r.cpu.Server.Seconds()/secs(r))
		})
		row("PostgreSQL CPU (window)", func(r *phaseResult) string {
			return fmt.Sprintf("%.1f s = %.0f%% of a core", r.cpu.Postgres.Seconds(), 100*r.cpu.Postgres.Seconds()/secs(r))
		})
	}
	row("CPU per occurrence (every process)", func(r *phaseResult) string {
		if r.delivered == 0 {
			return "n/a"
		}
		all := r.cpu.Total() + r.selfCPU
		return fmt.Sprintf("%.1f ms", float64(all.Milliseconds())/float64(r.delivered))
	})
	row("recur RSS end / peak", func(r *phaseResult) string { return kb(r.recurRSSEnd) + " / " + kb(r.recurRSSPeak) })
	row("firing RSS end / peak", func(r *phaseResult) string { return kb(r.selfRSSEnd) + " / " + kb(r.selfRSSPeak) })
	row("load average at window end", func(r *phaseResult) string { return r.load })
	for _, r := range rs {
		fmt.Printf("history events per occurrence, %s: %s\n", r.phase, r.events.perOccurrence())
	}
	for _, r := range rs {
		fmt.Printf("history size, %s: %s\n", r.phase, r.events.size(r.every))
	}
	for _, r := range rs {
		fmt.Printf("continue-as-new, %s: %s\n", r.phase, r.events.cadence(r.to.Sub(r.from)))
	}
	fmt.Println(`counted: for a sample of jobs (schedules) spread over the N, the events of their job workflow
(recur) or scheduler workflow temporal-sys-scheduler:<id> (peer), all runs, timestamped in the
window, plus every event of the started workflow of each sampled occurrence due in the window
(the peer's; recur runs an occurrence in its job's workflow); divided by those occurrences. The peer's worker runs inside the
firing process, recur's inside the recur process: compare recur CPU + firing CPU of each phase.`)
}

func kb(v int) string {
	if v < 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f MiB", float64(v)/1024)
}

// profile saves recur's CPU profile over the next d and then its heap in
// the -profile directory, if one was given; the channel closes when both
// are saved (or failed, which is logged: the figures do not need them).
func (f *firing) profile(ctx context.Context, phase string, d time.Duration) <-chan struct{} {
	done := make(chan struct{})
	if f.cfg.profile == "" {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		cpu := filepath.Join(f.cfg.profile, phase+".cpu.pprof")
		err := f.dep.Profile(ctx, "profile", fmt.Sprintf("seconds=%d", int(d.Seconds())), cpu)
		if err == nil {
			err = f.dep.Profile(ctx, "heap", "", filepath.Join(f.cfg.profile, phase+".heap.pprof"))
		}
		if err != nil {
			log.Printf("%s: %v", phase, err)
			return
		}
		log.Printf("%s: profiles saved in %s (go tool pprof -top %s)", phase, f.cfg.profile, cpu)
	}()
	return done
}
