package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
	"github.com/recurhq/recur/internal/temporalcluster"
)

// results is everything one run measured.
type results struct {
	cfg                config
	loadStart, loadEnd string
	phases             []*phaseResult
}

// phaseResult is what one phase measured.
type phaseResult struct {
	name           string
	create         *creation
	valid          bool // creation ended before the burst time
	load           *loadResult
	baseline, idle memory
	// pause is what every process used and PostgreSQL wrote over the
	// pause after the load, before the burst.
	pause idleResult
	burst *burstResult
	// after is the idle measured after the burst (-idle-after).
	after idleResult
	// stored is what the database holds and has written at the baseline,
	// after the creation, before the burst (after the load) and after it.
	stored [4]stored
}

// idleResult is what every process used and PostgreSQL wrote over took.
type idleResult struct {
	cpu    recurproc.Usage
	writes temporalcluster.Writes
	took   time.Duration
}

// stored is what the database holds on disk (Deployment.StoredBytes) and,
// on a cluster, what PostgreSQL has written since it started.
type stored struct {
	bytes  int64
	writes temporalcluster.Writes
	kinds  recurproc.Kinds
}

// print prints the results as a Markdown table, a column per phase.
func (r *results) print() {
	where := "recur dev"
	if r.cfg.cluster.On() {
		where = "recur serve on a Temporal server process on PostgreSQL"
	}
	fmt.Printf("==== scale: %d hourly items, concurrency %d, %s ====\n", r.cfg.jobs, r.cfg.concurrency, where)
	fmt.Printf("command: go run ./e2e/scale %s\n", strings.Join(os.Args[1:], " "))
	fmt.Printf("recur settings from the environment: %s\n", recurproc.Settings())
	fmt.Printf("load average start / end: %s / %s\n", r.loadStart, r.loadEnd)
	for _, p := range r.phases {
		if !p.valid {
			fmt.Printf("!!! %s INVALID: creation ended after the burst time; items were still being created when they fell due\n", p.name)
		}
	}
	header := "| |"
	rule := "|---|"
	for _, p := range r.phases {
		header += " " + p.name + " |"
		rule += "---:|"
	}
	fmt.Println(header)
	fmt.Println(rule)
	row := func(what string, value func(*phaseResult) string) {
		line := "| " + what + " |"
		for _, p := range r.phases {
			line += " " + value(p) + " |"
		}
		fmt.Println(line)
	}
	r.printCreate(row)
	r.printLoad(row)
	r.printMemory(row)
	r.printBurst(row)
	r.printStorage(row)
	fmt.Println(note)
}

type rowFunc func(what string, value func(*phaseResult) string)

func (r *results) printCreate(row rowFunc) {
	row("**create**", blank)
	row("created / asked", func(p *phaseResult) string { return fmt.Sprintf("%d / %d", p.create.created, r.cfg.jobs) })
	row("time to create all", func(p *phaseResult) string { return round(p.create.took).String() })
	row("burst time", func(p *phaseResult) string {
		return p.burst.at.Format(time.TimeOnly) + " (" + p.create.calibration + ")"
	})
	row("define (create) latency", func(p *phaseResult) string { return p.create.puts.latency() })
	row("define (create) rate", func(p *phaseResult) string { return p.create.puts.rate() })
	row("define (create) errors", func(p *phaseResult) string { return p.create.puts.errors() })
	row("redefine with the burst time", func(p *phaseResult) string {
		return p.create.reputs.latency() + "; " + p.create.reputs.rate() + "; errors " + p.create.reputs.errors()
	})
}

func (r *results) printLoad(row rowFunc) {
	row(fmt.Sprintf("**load: %d workers, %s**", r.cfg.concurrency, mix()), blank)
	row(fmt.Sprintf("list of the first %d by pages of %d", perCollection, pageSize), func(p *phaseResult) string {
		l := p.load
		return fmt.Sprintf("%d of %d in %d pages, %s; pages %s; errors %s",
			l.listed, l.inList, l.pages, round(l.fullList.window), l.fullList.latency(), l.fullList.errors())
	})
	row("load ran", func(p *phaseResult) string { return round(p.load.ran).String() })
	for i, m := range loadMix {
		row(m.name, func(p *phaseResult) string {
			op := p.load.ops[i]
			return fmt.Sprintf("%s, %s; errors %s", op.latency(), op.rate(), op.errors())
		})
	}
}

func (r *results) printMemory(row rowFunc) {
	row("**memory**", blank)
	row("recur RSS baseline / idle", func(p *phaseResult) string { return mib(p.baseline.rss) + " / " + mib(p.idle.rss) })
	row("recur RSS per idle item", func(p *phaseResult) string {
		return perJob(int64(p.idle.rss)*1024, int64(p.baseline.rss)*1024, p.create.created)
	})
	if r.cfg.cluster.On() {
		row("server RSS baseline / idle", func(p *phaseResult) string { return mib(p.baseline.serverRSS) + " / " + mib(p.idle.serverRSS) })
		row("server RSS per idle item", func(p *phaseResult) string {
			return perJob(int64(p.idle.serverRSS)*1024, int64(p.baseline.serverRSS)*1024, p.create.created)
		})
	}
	row("recur heap in use baseline / idle (metrics)", func(p *phaseResult) string {
		return bytesMiB(p.baseline.heapInuse) + " / " + bytesMiB(p.idle.heapInuse)
	})
	if r.cfg.profile != "" {
		row("recur heap in use after GC baseline / idle", func(p *phaseResult) string {
			return bytesMiB(p.baseline.heapGC) + " / " + bytesMiB(p.idle.heapGC)
		})
	}
}

func (r *results) printBurst(row rowFunc) {
	row("idle: CPU of every process over the pause after the load (first tasks still coming due)", func(p *phaseResult) string {
		return fmt.Sprintf("%.2f s in %s = %.1f%% of a core", p.pause.cpu.Total().Seconds(), round(p.pause.took),
			100*p.pause.cpu.Total().Seconds()/p.pause.took.Seconds())
	})
	row("**burst: every item due in one minute**", blank)
	row("due / delivered", func(p *phaseResult) string { return fmt.Sprintf("%d / %d", p.burst.expected, len(p.burst.late)) })
	row("all delivered after", func(p *phaseResult) string { return p.burst.allDelivered() })
	row("lateness (first arrival - burst time)", func(p *phaseResult) string { return percentiles(p.burst.late) })
	row("delivered within 1 / 2 / 5 min", func(p *phaseResult) string {
		return fmt.Sprintf("%d / %d / %d", p.burst.within[0], p.burst.within[1], p.burst.within[2])
	})
	row("missed (none within -grace)", func(p *phaseResult) string { return fmt.Sprintf("%d (grace %s)", p.burst.missed, r.cfg.grace) })
	row("duplicates, stray requests", func(p *phaseResult) string { return fmt.Sprintf("%d, %d", p.burst.duplicates, p.burst.stray) })
	cpu := func(what string, of func(b *burstResult) time.Duration) {
		row(what, func(p *phaseResult) string {
			b := p.burst
			return fmt.Sprintf("%.1f s = %.0f%% of a core", of(b).Seconds(), 100*of(b).Seconds()/b.window.Seconds())
		})
	}
	cpu("recur process CPU over the burst", func(b *burstResult) time.Duration { return b.cpu.Recur })
	if r.cfg.cluster.On() {
		cpu("Temporal server CPU over the burst", func(b *burstResult) time.Duration { return b.cpu.Server })
		cpu("PostgreSQL CPU over the burst", func(b *burstResult) time.Duration { return b.cpu.Postgres })
	}
	cpu("scale process CPU (the peer's worker)", func(b *burstResult) time.Duration { return b.selfCPU })
	row("CPU per delivered item, every process", func(p *phaseResult) string {
		b := p.burst
		if len(b.late) == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.1f ms", float64((b.cpu.Total()+b.selfCPU).Milliseconds())/float64(len(b.late)))
	})
	row(fmt.Sprintf("**load during the burst: %d workers, from the burst time**", r.cfg.concurrency), func(p *phaseResult) string {
		return "ran " + round(p.burst.load.ran).String()
	})
	for i, m := range burstMix {
		if (i == opFloor || i == opUpdate) && !r.cfg.floor {
			continue
		}
		row(m.name, func(p *phaseResult) string {
			op := p.burst.load.ops[i]
			if op.count() == 0 {
				return "none"
			}
			return fmt.Sprintf("%s, %s; errors %s", op.latency(), op.rate(), op.errors())
		})
	}
	row("burst window (until all came or -grace)", func(p *phaseResult) string { return round(p.burst.window).String() })
	row("recur RSS peak / end of burst", func(p *phaseResult) string { return mib(p.burst.rssPeak) + " / " + mib(p.burst.rssEnd) })
	row("idle after the burst: CPU of every process (recur / server / PostgreSQL)", func(p *phaseResult) string {
		a := p.after
		if a.took <= 0 {
			return "not measured"
		}
		share := func(d time.Duration) float64 { return 100 * d.Seconds() / a.took.Seconds() }
		return fmt.Sprintf("%.2f s in %s = %.1f%% of a core (%.1f / %.1f / %.1f%%)", a.cpu.Total().Seconds(), round(a.took),
			share(a.cpu.Total()), share(a.cpu.Recur), share(a.cpu.Server), share(a.cpu.Postgres))
	})
}

// printStorage says what the database stored per item created and per
// occurrence delivered: the inputs of a sizing (docs/operations.md).
func (r *results) printStorage(row rowFunc) {
	what := "SQLite files of recur dev"
	if r.cfg.cluster.On() {
		what = "PostgreSQL tables and indexes"
	}
	row("**stored: "+what+"**", blank)
	row("baseline / created / after the load / after the burst", func(p *phaseResult) string {
		return fmt.Sprintf("%s / %s / %s / %s", mibOf(p.stored[0].bytes), mibOf(p.stored[1].bytes),
			mibOf(p.stored[2].bytes), mibOf(p.stored[3].bytes))
	})
	row("per item created", func(p *phaseResult) string {
		return perJob(p.stored[1].bytes, p.stored[0].bytes, p.create.created)
	})
	row("per occurrence delivered in the burst", func(p *phaseResult) string {
		return perJob(p.stored[3].bytes, p.stored[2].bytes, len(p.burst.late))
	})
	if !r.cfg.cluster.On() {
		return
	}
	for k, kind := range recurproc.KindNames {
		row("of which "+kind+", per item created / per occurrence", func(p *phaseResult) string {
			return perJob(p.stored[1].kinds[k], p.stored[0].kinds[k], p.create.created) + " / " +
				perJob(p.stored[3].kinds[k], p.stored[2].kinds[k], len(p.burst.late))
		})
	}
	row("**PostgreSQL's work: transactions (reads too), rows written, WAL bytes, WAL syncs**", blank)
	row("per item created", func(p *phaseResult) string {
		return writesPer(p.stored[1].writes.Sub(p.stored[0].writes), float64(p.create.created))
	})
	row("per occurrence delivered in the burst", func(p *phaseResult) string {
		return writesPer(p.stored[3].writes.Sub(p.stored[2].writes), float64(len(p.burst.late)))
	})
	row("per minute of the idle pause (first tasks still coming due)", func(p *phaseResult) string {
		return writesPer(p.pause.writes, p.pause.took.Minutes())
	})
	row("per minute idle after the burst", func(p *phaseResult) string {
		return writesPer(p.after.writes, p.after.took.Minutes())
	})
}

// writesPer renders w divided by n (items, or minutes).
func writesPer(w temporalcluster.Writes, n float64) string {
	if n <= 0 {
		return "n/a"
	}
	per := func(v int64) float64 { return float64(v) / n }
	return fmt.Sprintf("%.1f transactions, %.1f rows, %.1f KiB WAL, %.2f syncs",
		per(w.Commits), per(w.Rows), per(w.WALBytes)/1024, per(w.WALSyncs))
}

// mibOf renders bytes in MiB.
func mibOf(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func blank(*phaseResult) string { return "" }

// note says how the figures were read.
const note = `Phases run in turn, each on a deployment of its own started alike (a new recur dev, or a new
Temporal server process on a new PostgreSQL with recur serve): each creates its items, loads them,
bursts and deletes them (the last stops its deployment instead). PostgreSQL's statistics lag its
writes by up to 10 s; the log's bytes do not. For Schedules, define is create (update when it exists, read-modify-write as the SDK does
it), get is describe, a list page is ListSchedules of the namespace, history a page of
ListWorkflowExecutions of the schedule's workflows (TemporalScheduledById); recur's are its REST
API. Memory per idle item is (idle - baseline) / items created, each phase's from a fresh process. "metrics" is
go_memstats_heap_inuse_bytes of recur's /metrics, no GC forced; "after GC" is HeapInuse in the heap
profile taken with gc=1 (-profile). recur's worker keeps up to --workflow-cache workflows in memory
(RECUR_WORKFLOW_CACHE, 10000 by default). On recur dev the server runs in the recur process, so its
CPU and memory are recur's row for both phases.`

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
