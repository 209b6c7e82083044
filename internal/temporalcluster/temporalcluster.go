// Package temporalcluster runs, for tests and measurements, a Temporal
// cluster shaped like a production one: PostgreSQL for both persistence
// and visibility, and the Temporal server as a process of its own, on
// free loopback ports, with the namespace registered through the API.
//
// The server is the version recur's go.mod requires, built once from this
// module into the user's cache (internal/temporalcluster/temporal-server).
// PostgreSQL is the system's: when its binaries are missing and the
// process runs as root, they are installed with apt-get.
//
// Unlike temporalserver (the embedded server of `recur dev`), nothing here
// bends the server's defaults for recur but what recur's Docker deployment
// sets too (history.shardIOConcurrency): the namespace cache refreshes on
// its own schedule, as it does on the clusters recur is deployed to.
package temporalcluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// shardIOConcurrencyKey is the server's dynamic config key that Options'
// ShardIOConcurrency sets.
const shardIOConcurrencyKey = "history.shardIOConcurrency"

// visibilityRPSKey is the server's dynamic config key of a namespace's
// visibility calls a second on each frontend.
const visibilityRPSKey = "frontend.namespaceRPS.visibility"

// Defaults applied to zero fields of Options.
const (
	DefaultNamespace     = "recur"
	DefaultRetention     = 60 * 24 * time.Hour
	DefaultHistoryShards = 4
	// DefaultShardIOConcurrency is the history.shardIOConcurrency recur's
	// cluster runs with (docker/dynamicconfig/recur.yaml too): each shard
	// keeps up to 8 writes in flight to PostgreSQL, where the server's
	// default of 1 queues every write of a shard behind the one before and
	// makes the slowest creations slower (BENCHMARKS.md). Cassandra takes
	// 1 only.
	DefaultShardIOConcurrency = 8
	// DefaultVisibilityRPS is the frontend.namespaceRPS.visibility recur's
	// cluster runs with (docker/dynamicconfig/recur.yaml too), as recur
	// dev does: the first page of a collection's job list is a visibility
	// query, and the server's default of 10 a second refuses a busy API's
	// lists, which the SDK retries until the request's 10 s are gone
	// (BENCHMARKS.md).
	DefaultVisibilityRPS = 100
	DefaultLogLevel      = "warn"
)

// StartTimeout bounds Start when the caller's context has no earlier
// deadline: the server build when the cache lacks it (BuildTimeout) and an
// install of PostgreSQL come on top.
const StartTimeout = 3 * time.Minute

// Options say how Launch sets the cluster up. Zero fields take defaults.
type Options struct {
	// Namespace is registered at start; default "recur".
	Namespace string
	// Retention is the namespace's workflow retention; default 60 days,
	// recur's own default. The server refuses less than an hour unless
	// DynamicConfig lowers system.namespaceMinRetentionLocal.
	Retention time.Duration
	// HistoryShards is the server's number of history shards; default 4.
	// It is written into the database at the first start and cannot change.
	HistoryShards int
	// ShardIOConcurrency is the server's history.shardIOConcurrency unless
	// DynamicConfig sets it; default DefaultShardIOConcurrency.
	ShardIOConcurrency int
	// DynamicConfig overrides the server's dynamic config, key to value,
	// e.g. "frontend.namespaceRPS": 2400. Default: the server's defaults.
	DynamicConfig map[string]any
	// LogLevel is the server's log level (debug, info, warn, error);
	// default "warn". The log goes to Server.LogPath.
	LogLevel string
	// Durable makes PostgreSQL sync its commits to the disk. Off by
	// default: a test cluster lives in a temporary directory, and the
	// crashes tests inflict are the Temporal server's, which PostgreSQL
	// survives without syncing; only a crash of the machine loses commits.
	Durable bool
	// PostgresSettings are PostgreSQL parameters, name to value, given on
	// its command line after the cluster's own, so that they win where
	// both name one (Durable's included): e.g. "max_wal_size": "8GB".
	PostgresSettings map[string]string
}

func (o Options) withDefaults() (Options, error) {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Retention == 0 {
		o.Retention = DefaultRetention
	}
	if o.HistoryShards == 0 {
		o.HistoryShards = DefaultHistoryShards
	}
	if o.HistoryShards < 1 {
		return o, fmt.Errorf("history shards %d is below 1", o.HistoryShards)
	}
	if o.ShardIOConcurrency == 0 {
		o.ShardIOConcurrency = DefaultShardIOConcurrency
	}
	if o.ShardIOConcurrency < 1 {
		return o, fmt.Errorf("shard IO concurrency %d is below 1", o.ShardIOConcurrency)
	}
	dc := maps.Clone(o.DynamicConfig)
	if dc == nil {
		dc = map[string]any{}
	}
	for key, value := range map[string]any{shardIOConcurrencyKey: o.ShardIOConcurrency, visibilityRPSKey: DefaultVisibilityRPS} {
		if _, ok := dc[key]; !ok {
			dc[key] = value
		}
	}
	o.DynamicConfig = dc
	if o.LogLevel == "" {
		o.LogLevel = DefaultLogLevel
	}
	for name := range o.PostgresSettings {
		if !postgresParameter.MatchString(name) {
			return o, fmt.Errorf("PostgreSQL setting %q: not a parameter's name", name)
		}
	}
	return o, nil
}

// postgresParameter is the form of a PostgreSQL parameter's name, a
// customized option's dot included.
var postgresParameter = regexp.MustCompile(`^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$`)

// Cluster is a running PostgreSQL and Temporal server with the namespace
// registered and usable.
type Cluster struct {
	// Postgres is the database server; it runs until Close.
	Postgres *Postgres
	// Server is the Temporal server process, which tests may stop, kill
	// and start again: the database keeps its state meanwhile.
	Server *Server

	namespace string
	dir       string
}

// Start launches a cluster with the default Options and closes it when t
// ends. It skips only under go test -short, the quick path that installs
// nothing: otherwise a test that needs a cluster fails without one.
func Start(t testing.TB) *Cluster {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith launches a cluster with opts and closes it when t ends; when
// t has failed, the tails of the server's and PostgreSQL's logs are logged
// first.
func StartWith(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: it needs PostgreSQL and a Temporal server built from this module")
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout+BuildTimeout)
	defer cancel()
	c, err := Launch(ctx, opts)
	if err != nil {
		t.Fatalf("temporal cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("temporal server log (%s), last lines:\n%s", c.Server.LogPath(), tail(c.Server.LogPath(), 60))
			t.Logf("postgresql log (%s), last lines:\n%s", c.Postgres.LogPath(), tail(c.Postgres.LogPath(), 20))
		}
		if err := c.Close(); err != nil {
			t.Errorf("close temporal cluster: %v", err)
		}
	})
	return c
}

// Launch builds the server if the cache lacks it, installs PostgreSQL if
// the system lacks it, starts both in a new temporary directory, sets up
// the schemas, registers the namespace and returns once it is usable. ctx
// bounds all of it. On any error nothing is left running or on disk; on
// success the caller must Close the cluster.
func Launch(ctx context.Context, opts Options) (c *Cluster, err error) {
	opts, err = opts.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, StartTimeout+BuildTimeout)
	defer cancel()
	bin, err := serverBinary(ctx)
	if err != nil {
		return nil, err
	}
	pgBin, err := postgresBinaries(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := makeClusterDir()
	if err != nil {
		return nil, err
	}
	c = &Cluster{namespace: opts.Namespace, dir: dir}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Close())
			c = nil
		}
	}()
	if c.Postgres, err = startPostgres(ctx, pgBin, filepath.Join(dir, "postgres"), postgresSettings(opts)); err != nil {
		return c, err
	}
	if c.Server, err = newServer(bin, filepath.Join(dir, "temporal"), c.Postgres, opts); err != nil {
		return c, err
	}
	if err := c.Server.setupSchema(ctx); err != nil {
		return c, err
	}
	if err := c.Server.start(ctx, false); err != nil {
		return c, err
	}
	return c, nil
}

// FrontendAddress is the host:port of the Temporal frontend's gRPC API.
func (c *Cluster) FrontendAddress() string { return c.Server.FrontendAddress() }

// Namespace is the namespace Launch registered.
func (c *Cluster) Namespace() string { return c.namespace }

// Close kills the Temporal server, stops PostgreSQL and removes the
// cluster's directory. The server is killed rather than stopped: its state
// is about to be deleted, and a graceful stop takes seconds.
func (c *Cluster) Close() error {
	var errs []error
	if c.Server != nil {
		if err := c.Server.Kill(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Postgres != nil {
		if err := c.Postgres.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.dir != "" {
		if err := os.RemoveAll(c.dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// tail returns the last n lines of the file at path, each cut to a few
// hundred bytes (the server's errors carry their stack traces), or why it
// cannot.
func tail(path string, n int) string {
	const maxLine = 400
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		if len(l) > maxLine {
			lines[i] = l[:maxLine] + "…"
		}
	}
	return strings.Join(lines, "\n")
}
