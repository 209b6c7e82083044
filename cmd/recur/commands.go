package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	sdkworker "go.temporal.io/sdk/worker"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/connlimit"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/metrics"
	"github.com/recurhq/recur/temporalserver"
)

// Defaults of the flags; each can also come from the environment variable
// named in its usage.
const (
	defaultDataDir   = "./recur-data"
	defaultHTTPAddr  = "127.0.0.1:8080"
	defaultTemporal  = "127.0.0.1:7233"
	defaultNamespace = "default"
	defaultRetention = 60 * 24 * time.Hour
)

// retentionFlag is a duration that also accepts whole days ("60d").
type retentionFlag struct{ d *time.Duration }

func (f retentionFlag) String() string {
	if f.d == nil {
		return ""
	}
	if *f.d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", *f.d/(24*time.Hour))
	}
	return f.d.String()
}

func (f retentionFlag) Set(s string) error {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 {
			return fmt.Errorf("want a number of days such as 60d, or a duration such as 72h")
		}
		*f.d = time.Duration(n) * 24 * time.Hour
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a number of days such as 60d, or a duration such as 72h")
	}
	*f.d = d
	return nil
}

// common are the flags every long-running command shares.
type common struct {
	httpAddr  string
	namespace string
	logLevel  string
	logFormat string
	authority string
	// metricsAddr serves /metrics for a worker without the API; the API
	// serves it on its own address.
	metricsAddr string
	// metricsByCollection labels the workflows' series and the gauge of
	// failing jobs by collection.
	metricsByCollection bool
	// endpoints of storage queue and Service Bus actions
	storageQueue, serviceBus string
	// egress is the policy of outbound calls (egress_flags.go)
	egress egressFlags
	// security is the REST API's authentication, TLS and rate limits
	// (auth_flags.go); apiConfig what prepare made of it.
	security  apiSecurity
	apiConfig apiConfig
	// enc is payload encryption (codec_flags.go)
	enc encryption
	// pprofAddr serves Go's profiles when set (pprof.go)
	pprofAddr string
	// work sizes the worker (worker_flags.go); workerOptions is what
	// its flags made.
	work          workerFlags
	workerOptions sdkworker.Options
	// conns caps the connections of the HTTP listeners (http.go);
	// limits is what its flags made.
	conns  connFlags
	limits connlimit.Limits
	// otlp exports traces when it has an endpoint (otlp.go).
	otlp otlpFlags
}

func (c *common) register(fs *flag.FlagSet, withAPI bool, e *envDefaults) {
	if withAPI {
		fs.StringVar(&c.httpAddr, "http-addr", env("RECUR_HTTP_ADDR", defaultHTTPAddr), "REST API `address` (RECUR_HTTP_ADDR)")
	}
	fs.StringVar(&c.namespace, "namespace", env("RECUR_NAMESPACE", defaultNamespace), "Temporal `namespace` (RECUR_NAMESPACE)")
	fs.StringVar(&c.logLevel, "log-level", env("RECUR_LOG_LEVEL", "info"), "debug, info, warn or error (RECUR_LOG_LEVEL)")
	fs.StringVar(&c.logFormat, "log-format", env("RECUR_LOG_FORMAT", "json"), "json (one object a line) or text (RECUR_LOG_FORMAT)")
	if !withAPI {
		fs.StringVar(&c.metricsAddr, "metrics-addr", env("RECUR_METRICS_ADDR", ""),
			"`address` to serve Prometheus metrics on at /metrics, unauthenticated; empty for none (RECUR_METRICS_ADDR)")
	}
	fs.BoolVar(&c.metricsByCollection, "metrics-collection-label", e.bool("RECUR_METRICS_COLLECTION_LABEL", false),
		"label the series of job runs and the gauge of failing jobs by collection (subscription, resource group and name): one series per collection instead of one in all; never by job (RECUR_METRICS_COLLECTION_LABEL)")
	fs.StringVar(&c.authority, "aad-authority", env("RECUR_AAD_AUTHORITY", activities.DefaultAuthority),
		"`URL` of the Azure AD authority for ActiveDirectoryOAuth actions (RECUR_AAD_AUTHORITY)")
	fs.StringVar(&c.storageQueue, "storage-queue-endpoint", env("RECUR_STORAGE_QUEUE_ENDPOINT", ""),
		"storage queue service `URL` with {account} for the account, e.g. http://127.0.0.1:10001/{account} for Azurite; empty for Azure (RECUR_STORAGE_QUEUE_ENDPOINT)")
	fs.StringVar(&c.serviceBus, "service-bus-endpoint", env("RECUR_SERVICE_BUS_ENDPOINT", ""),
		"Service Bus `URL` with {namespace} for the namespace; empty for Azure (RECUR_SERVICE_BUS_ENDPOINT)")
	c.egress.register(fs, e)
	c.enc.register(fs, withAPI, e)
	fs.StringVar(&c.pprofAddr, "pprof-addr", env("RECUR_PPROF_ADDR", ""), "loopback `address` to serve Go's profiles on (net/http/pprof), empty for none (RECUR_PPROF_ADDR)")
	c.conns.register(fs, e)
	c.otlp.register(fs)
}

// roles returns r with the endpoints of c.
func (c *common) roles(r roles) roles {
	r.authority, r.storageQueue, r.serviceBus = c.authority, c.storageQueue, c.serviceBus
	r.egress, r.workflowTargets = c.egress.policy, c.egress.workflowTargets
	r.apiConfig = c.apiConfig
	r.workerOptions, r.finishedRetention, r.actionBudget = c.workerOptions, c.work.finishedRetention, c.work.actionBudget
	r.limits = c.limits
	r.metricsByCollection = c.metricsByCollection
	r.otlp = c.otlp
	return r
}

// logger returns the process's logger: JSON lines by default, slog's
// text format with --log-format text.
func (c *common) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(c.logFormat) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: want json or text, not %q", c.logFormat)
}

// runDev is `recur` and `recur dev`: an embedded Temporal server with its
// Web UI, a worker and the REST API in one process, until ctx ends.
func runDev(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	var envs envDefaults
	c.egress.dev = true // loopback allowed by default
	c.work.dev = true   // the server's only worker
	c.register(fs, true, &envs)
	c.work.register(fs, &envs)
	c.security.register(fs, 0, &envs)
	dataDir := fs.String("data-dir", env("RECUR_DATA_DIR", defaultDataDir), "`directory` of the embedded server's SQLite database (RECUR_DATA_DIR)")
	frontendPort := fs.Int("temporal-port", envs.int("RECUR_TEMPORAL_PORT", 7233), "Temporal frontend `port` on 127.0.0.1 (RECUR_TEMPORAL_PORT)")
	uiPort := fs.Int("ui-port", envs.int("RECUR_UI_PORT", 8233), "Temporal Web UI `port` on 127.0.0.1, 0 for none (RECUR_UI_PORT)")
	retention := defaultRetention
	envs.value("RECUR_RETENTION", retentionFlag{&retention})
	fs.Var(retentionFlag{&retention}, "retention", "namespace retention of closed workflows and history, e.g. 60d or 72h (RECUR_RETENTION)")
	sync := fs.String("sqlite-sync", env("RECUR_SQLITE_SYNC", string(temporalserver.SyncFull)),
		"full: every commit is synced to disk and survives a power loss; normal: synced at checkpoints, a third more throughput, survives a crash of recur but may lose the last commits to a power loss (RECUR_SQLITE_SYNC)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := envs.err(); err != nil {
		fmt.Fprintf(stderr, "recur dev: %v\n", err)
		return 2
	}
	log, err := c.logger(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "recur dev: %v\n", err)
		return 2
	}
	if c.workerOptions, err = c.work.options(); err != nil {
		fmt.Fprintf(stderr, "recur dev: %v\n", err)
		return 2
	}
	if c.limits, err = c.conns.limits(); err != nil {
		fmt.Fprintf(stderr, "recur dev: %v\n", err)
		return 2
	}
	if err := c.otlp.check(log); err != nil {
		fmt.Fprintf(stderr, "recur dev: %v\n", err)
		return 2
	}
	if s := temporalserver.Sync(*sync); s != temporalserver.SyncFull && s != temporalserver.SyncNormal {
		fmt.Fprintf(stderr, "recur dev: --sqlite-sync must be %s or %s, not %q\n", temporalserver.SyncFull, temporalserver.SyncNormal, s)
		return 2
	}
	if c.apiConfig, err = c.security.prepare(ctx, c.httpAddr, log); err != nil {
		fmt.Fprintf(stderr, "recur dev: %v\n", err)
		return 2
	}
	if c.apiConfig.backfill, err = c.security.backfill.limits(); err != nil {
		fmt.Fprintf(stderr, "recur dev: %v\n", err)
		return 2
	}
	if err := c.egress.load(log, c.apiConfig.auth != nil); err != nil {
		fmt.Fprintf(stderr, "recur dev: %v\n", err)
		return 2
	}
	server := temporalserver.Config{DataDir: *dataDir, FrontendPort: *frontendPort, UIPort: *uiPort,
		Retention: retention, Sync: temporalserver.Sync(*sync), CachedWorkflows: c.work.historyCache()}
	if err := dev(ctx, c, server, log); err != nil {
		log.Error("recur dev stopped", "error", err)
		return 1
	}
	return 0
}

// dev runs everything on server, the embedded Temporal server's data
// dir, ports, retention and sync setting; dev fills in the rest.
func dev(ctx context.Context, c common, server temporalserver.Config, log *slog.Logger) error {
	ln, err := listen(c.httpAddr)
	if err != nil {
		return err
	}
	defer ln.Close()
	stopPprof, err := servePprof(c.pprofAddr, c.limits, log)
	if err != nil {
		return err
	}
	defer stopPprof()
	abs, err := filepath.Abs(server.DataDir)
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if err := c.enc.load(abs, log); err != nil {
		return err
	}
	server.DataDir = abs
	server.CodecEndpoint = c.enc.uiCodecURL(ln, c.apiConfig.tls != nil)
	server.Namespace = c.namespace
	server.SearchAttributes = jobs.SearchAttributeTypes()
	server.Logger = log.With("component", "temporal-server")
	// The frontend's port and the Web UI take the caps and timeouts of
	// recur's own HTTP listeners.
	server.Limits, server.SilenceTimeout = c.limits, readHeaderTimeout
	// The UI's answers (pages, and calls of the frontend behind its API)
	// take no longer than the API's.
	server.UIServer = func(h http.Handler) *http.Server { return httpServer(h, writeTimeout) }
	srv, err := temporalserver.Start(ctx, server)
	if err != nil {
		return fmt.Errorf("start embedded Temporal server: %w", err)
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			log.Warn("stop embedded Temporal server", "error", err)
		}
		log.Info("embedded Temporal server stopped", "dataDir", abs)
	}()
	log.Info("Temporal frontend listening", "address", srv.FrontendAddress(), "namespace", srv.Namespace(), "dataDir", abs)
	if ui := srv.UIAddress(); ui != "" {
		log.Info("Temporal Web UI listening", "url", ui)
	}
	set := metrics.New(log)
	defer set.Close()
	// Past the frontend's cap: clients holding its port's connections
	// cannot lock out recur's own worker and API.
	cl, err := dial(ctx, srv.LocalFrontendAddress(), c.namespace, embeddedConn, c.enc.dataConverter(), set.Temporal, log)
	if err != nil {
		return err
	}
	defer cl.Close()
	r := c.enc.roles(c.roles(roles{worker: true, api: true}), srv.UIAddress())
	r.metrics = set
	own := []temporalserver.Listener{{What: "recur's REST API", Address: ln.Addr().String()}}
	own = append(own, srv.Listeners()...)
	if err := refuseOwn(ctx, &r.egress, c.pprofAddr, own...); err != nil {
		return err
	}
	return serveRoles(ctx, cl, r, ln, c.namespace, log)
}

// runCluster is `recur serve`, `recur worker` and `recur api`: recur's
// roles against an existing Temporal cluster.
func runCluster(ctx context.Context, name string, r roles, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	var envs envDefaults
	c.register(fs, r.api, &envs)
	if r.worker {
		c.work.register(fs, &envs)
	}
	address := fs.String("temporal-address", env("RECUR_TEMPORAL_ADDRESS", defaultTemporal), "Temporal frontend `host:port` (RECUR_TEMPORAL_ADDRESS)")
	var tf temporalFlags
	tf.register(fs, &envs)
	if r.api {
		c.security.register(fs, defaultRateLimit, &envs)
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := envs.err(); err != nil {
		fmt.Fprintf(stderr, "recur %s: %v\n", name, err)
		return 2
	}
	log, err := c.logger(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "recur %s: %v\n", name, err)
		return 2
	}
	if err := c.egress.load(log, false); err != nil {
		fmt.Fprintf(stderr, "recur %s: %v\n", name, err)
		return 2
	}
	conn, err := tf.conn()
	if err == nil {
		c.limits, err = c.conns.limits()
	}
	if err == nil {
		err = c.otlp.check(log)
	}
	if err == nil && r.worker {
		c.workerOptions, err = c.work.options()
	}
	if err == nil && r.api {
		c.apiConfig, err = c.security.prepare(ctx, c.httpAddr, log)
	}
	if err == nil && r.api {
		c.apiConfig.backfill, err = c.security.backfill.limits()
	}
	if err != nil {
		fmt.Fprintf(stderr, "recur %s: %v\n", name, err)
		return 2
	}
	if err := c.enc.load("", log); err != nil {
		fmt.Fprintf(stderr, "recur %s: %v\n", name, err)
		return 2
	}
	if err := cluster(ctx, c, r, *address, conn, log); err != nil {
		log.Error("recur "+name+" stopped", "error", err)
		return 1
	}
	return 0
}

func cluster(ctx context.Context, c common, r roles, address string, conn temporalConn, log *slog.Logger) error {
	var ln net.Listener
	if r.api {
		l, err := listen(c.httpAddr)
		if err != nil {
			return err
		}
		defer l.Close()
		ln = l
	}
	stopPprof, err := servePprof(c.pprofAddr, c.limits, log)
	if err != nil {
		return err
	}
	defer stopPprof()
	var metricsLn net.Listener
	if c.metricsAddr != "" {
		l, err := net.Listen("tcp", c.metricsAddr)
		if err != nil {
			return fmt.Errorf("metrics address %s is in use or invalid: %w", c.metricsAddr, err)
		}
		defer l.Close()
		metricsLn = l
	}
	set := metrics.New(log)
	defer set.Close()
	cl, err := dial(ctx, address, c.namespace, conn, c.enc.dataConverter(), set.Temporal, log)
	if err != nil {
		return err
	}
	defer cl.Close()
	log.Info("connected to Temporal", "address", address, "namespace", c.namespace, "tls", conn.tls != nil)
	regCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = temporalserver.RegisterSearchAttributes(regCtx, cl, c.namespace, jobs.SearchAttributeTypes())
	cancel()
	if err != nil {
		// Workflows cannot start with attributes the namespace lacks.
		return fmt.Errorf("register recur's search attributes on namespace %s (or register them by hand, see the README): %w", c.namespace, err)
	}
	if metricsLn != nil {
		stop := serveMetrics(metricsLn, set, c.limits, log)
		defer stop()
	}
	r = c.enc.roles(c.roles(r), "")
	r.metrics = set
	own := []temporalserver.Listener{{What: "the Temporal frontend recur uses", Address: address}}
	if ln != nil {
		own = append(own, temporalserver.Listener{What: "recur's REST API", Address: ln.Addr().String()})
	}
	if metricsLn != nil {
		own = append(own, temporalserver.Listener{What: "recur's metrics", Address: metricsLn.Addr().String()})
	}
	if err := refuseOwn(ctx, &r.egress, c.pprofAddr, own...); err != nil {
		return err
	}
	return serveRoles(ctx, cl, r, ln, c.namespace, log)
}
