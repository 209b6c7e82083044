package recurproc

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/recurhq/recur/internal/temporalcluster"
)

// Deployment is recur and the Temporal server it runs on, as a bench tool
// measures them: `recur dev` with the server inside it, or `recur serve`
// against a cluster (a Temporal server process on PostgreSQL, started as
// the cluster tests start it).
type Deployment struct {
	*Process
	// Cluster is the Temporal server and PostgreSQL; nil on recur dev.
	Cluster   *temporalcluster.Cluster
	Namespace string
}

// Deploy starts recur dev, or with cluster options a cluster and recur
// serve against it, with work as the directory of recur's data, keys and
// log. With profile, recur serves Go's profiles; extra flags follow
// recur's own. The caller must Close the deployment.
func Deploy(ctx context.Context, bin, work string, cluster *temporalcluster.Options, profile bool, extra ...string) (*Deployment, error) {
	logPath := filepath.Join(work, "recur.log")
	if cluster == nil {
		p, err := Start(bin, filepath.Join(work, "data"), logPath, profile, extra...)
		if err != nil {
			return nil, err
		}
		return &Deployment{Process: p, Namespace: "default"}, nil
	}
	c, err := temporalcluster.Launch(ctx, *cluster)
	if err != nil {
		return nil, err
	}
	log.Printf("cluster: Temporal %s (pid %d; %d history shards, shard IO concurrency %d) on PostgreSQL %s (pid %d)",
		c.FrontendAddress(), c.Server.PID(), cluster.HistoryShards, cluster.ShardIOConcurrency, c.Postgres.Address(), c.Postgres.PID())
	keys := filepath.Join(work, "keys.json")
	if out, err := exec.Command(bin, "keygen", keys).CombinedOutput(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("recur keygen: %w\n%s", err, out)
	}
	p, err := StartServe(bin, c.FrontendAddress(), c.Namespace(), keys, logPath, profile, extra...)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return &Deployment{Process: p, Cluster: c, Namespace: c.Namespace()}, nil
}

// StoredBytes is what the deployment's database holds on disk: on a
// cluster PostgreSQL's tables and indexes (Postgres.TablesDir), on recur
// dev the data directory (DataSize).
func (d *Deployment) StoredBytes() int64 {
	if d.Cluster != nil {
		return dirBytes(d.Cluster.Postgres.TablesDir())
	}
	return d.DataSize()
}

// Kinds are the bytes a cluster's PostgreSQL holds of each kind of data,
// in the order of KindNames.
type Kinds [4]int64

// KindNames name the kinds of data the Temporal server stores: the
// histories (retained until the namespace's retention after a run
// closes), the executions' mutable state and the server's other tables,
// the task queues (rows deleted once done, their space reused), and
// visibility (a row per run).
var KindNames = [4]string{"histories", "executions and the rest", "task queues", "visibility"}

const (
	histories = iota
	executions
	queues
	visibility
)

// StoredByKind reads the size of every table of the cluster's databases
// and sums them by kind (KindNames); zero on recur dev.
func (d *Deployment) StoredByKind(ctx context.Context) Kinds {
	var k Kinds
	if d.Cluster == nil {
		return k
	}
	tables, err := d.Cluster.Postgres.TableBytes(ctx)
	if err != nil {
		log.Printf("PostgreSQL's table sizes: %v", err)
		return k
	}
	for name, size := range tables {
		k[kindOf(name)] += size
	}
	return k
}

// kindOf says which of KindNames the table "database.table" holds.
func kindOf(table string) int {
	db, name, _ := strings.Cut(table, ".")
	switch {
	case db == "temporal_visibility":
		return visibility
	case strings.HasSuffix(name, "_tasks") || strings.HasPrefix(name, "task"):
		// history_immediate_tasks and history_scheduled_tasks included
		return queues
	case strings.HasPrefix(name, "history_"):
		return histories
	}
	return executions
}

// Writes is what the cluster's PostgreSQL has written so far; zero on
// recur dev, whose SQLite keeps no such counters, and when they cannot be
// read (logged).
func (d *Deployment) Writes(ctx context.Context) temporalcluster.Writes {
	if d.Cluster == nil {
		return temporalcluster.Writes{}
	}
	w, err := d.Cluster.Postgres.Writes(ctx)
	if err != nil {
		log.Printf("PostgreSQL's write counters: %v", err)
	}
	return w
}

// Close kills recur and removes the cluster, if any.
func (d *Deployment) Close() {
	d.Kill()
	if d.Cluster != nil {
		if err := d.Cluster.Close(); err != nil {
			log.Printf("close the cluster: %v", err)
		}
	}
}

// Usage is the CPU time each process of a deployment used; Server and
// Postgres are zero on recur dev, whose server runs in the recur process.
type Usage struct{ Recur, Server, Postgres time.Duration }

// CPU returns the CPU time used so far by recur, and on a cluster by the
// Temporal server and PostgreSQL (the postmaster and its backends).
func (d *Deployment) CPU() Usage {
	u := Usage{Recur: d.Process.CPU()}
	if d.Cluster != nil {
		u.Server = CPUOf(d.Cluster.Server.PID())
		u.Postgres = TreeCPUOf(d.Cluster.Postgres.PID())
	}
	return u
}

// Sub returns the CPU used between v and u.
func (u Usage) Sub(v Usage) Usage {
	return Usage{Recur: u.Recur - v.Recur, Server: u.Server - v.Server, Postgres: u.Postgres - v.Postgres}
}

// Total is the CPU of every process.
func (u Usage) Total() time.Duration { return u.Recur + u.Server + u.Postgres }

// ClusterFlags are a bench tool's flags that choose between recur dev and
// a cluster, and shape the cluster: its history shards and each shard's
// persistence concurrency decide how many of the server's writes go to
// PostgreSQL at once, and so its latency under load.
type ClusterFlags struct {
	on                 bool
	historyShards      int
	shardIOConcurrency int
	postgresSettings   map[string]string
	dynamicConfig      map[string]any
}

// Register defines -cluster, -history-shards, -shard-io-concurrency,
// -postgres and -dynamic.
func (f *ClusterFlags) Register(fs *flag.FlagSet) {
	fs.BoolVar(&f.on, "cluster", false, "measure on a Temporal v1.32.1 server process on PostgreSQL (started here, as the cluster tests do) with recur serve, instead of recur dev")
	fs.IntVar(&f.historyShards, "history-shards", temporalcluster.DefaultHistoryShards, "with -cluster, the server's number of history shards")
	fs.IntVar(&f.shardIOConcurrency, "shard-io-concurrency", temporalcluster.DefaultShardIOConcurrency, "with -cluster, the server's history.shardIOConcurrency: how many persistence writes a shard has in flight at once (the server's own default is 1)")
	fs.Func("postgres", "with -cluster, a PostgreSQL `parameter=value` for its command line, e.g. max_wal_size=8GB (repeatable)",
		settings(&f.postgresSettings, "parameter=value", func(v string) string { return v }))
	fs.Func("dynamic", "with -cluster, a key=value of the Temporal server's dynamic config, unconstrained, e.g. matching.numTaskqueueReadPartitions=1; a value that reads as a number or a boolean is one (repeatable)",
		settings(&f.dynamicConfig, "key=value", func(v string) any {
			var parsed any
			if json.Unmarshal([]byte(v), &parsed) != nil {
				return v
			}
			return parsed
		}))
}

// settings parses a repeatable name=value flag into *m, made at its first
// use, each value through parse; form names the shape in errors.
func settings[V any](m *map[string]V, form string, parse func(string) V) func(string) error {
	return func(s string) error {
		name, value, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return fmt.Errorf("%q is not %s", s, form)
		}
		if *m == nil {
			*m = map[string]V{}
		}
		(*m)[name] = parse(value)
		return nil
	}
}

// On says whether the tool measures on a cluster.
func (f *ClusterFlags) On() bool { return f.on }

// Options returns the cluster's options, or nil for recur dev.
func (f *ClusterFlags) Options() *temporalcluster.Options {
	if !f.on {
		return nil
	}
	// Durable: PostgreSQL syncs its commits, as a production database does
	// and as recur dev's SQLite does.
	return &temporalcluster.Options{Durable: true, HistoryShards: f.historyShards, ShardIOConcurrency: f.shardIOConcurrency,
		PostgresSettings: f.postgresSettings, DynamicConfig: f.dynamicConfig}
}
