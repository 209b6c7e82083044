// Package temporalserver runs a single-process Temporal server, backed by a
// SQLite file, and optionally the Temporal Web UI, for `recur dev`.
//
// It follows the shape of the Temporal CLI's `temporal server start-dev`:
// all four services in one process on static hosts, SQLite for both the
// default and the visibility store, and the namespace pre-created in the
// database so it is usable the moment the frontend answers.
package temporalserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/temporal"

	"github.com/recurhq/recur/connlimit"
)

// Defaults applied by Start to zero fields of Config.
const (
	DefaultHost         = "127.0.0.1"
	DefaultFrontendPort = 7233
	DefaultNamespace    = "default"
	DefaultRetention    = 60 * 24 * time.Hour
	// DefaultCachedWorkflows holds recur's default worker cache (10,000
	// jobs) and their collections.
	DefaultCachedWorkflows = 16384
)

// silent is above every level the server logs at.
const silent = slog.LevelError + 100

// readyTimeout caps the wait in Start when ctx has no earlier deadline.
const readyTimeout = time.Minute

// databaseFile is the name of the SQLite file inside Config.DataDir.
const databaseFile = "temporal.db"

// Config says where and how the embedded server runs. Zero fields take the
// defaults documented on each field.
type Config struct {
	// DataDir holds the SQLite database file (DataDir/temporal.db); it is
	// created if missing. Required.
	DataDir string
	// Host is the IP address the frontend and the UI bind to; default
	// "127.0.0.1". "localhost" is accepted and means 127.0.0.1.
	Host string
	// FrontendPort is the gRPC frontend port; default 7233. It must be free.
	// The frontend itself listens on a loopback port Start picks, behind
	// this one (see gate.go).
	FrontendPort int
	// UIPort is the Web UI port; 0 runs no UI. recur uses 8233.
	UIPort int
	// Limits caps the connections FrontendPort and UIPort each hold at
	// once, in all and per client address; zero fields are no cap.
	Limits connlimit.Limits
	// SilenceTimeout closes a connection to FrontendPort that sends
	// nothing for that long after it opens; default DefaultSilenceTimeout.
	SilenceTimeout time.Duration
	// UIServer returns the server of the Web UI's handler, with its
	// timeouts; default DefaultUIServer.
	UIServer func(http.Handler) *http.Server
	// CodecEndpoint is the URL of the remote codec the Web UI decodes
	// payloads through (recur's API, http://HOST:PORT/codec), called from
	// the browser; empty shows payloads as stored.
	CodecEndpoint string
	// Namespace is created at start if missing; default "default".
	Namespace string
	// Retention is the namespace's workflow retention; default 60 days,
	// at least one hour. An existing namespace is updated if it differs.
	Retention time.Duration
	// SearchAttributes are custom search attributes registered at start.
	// Registering is idempotent: an existing attribute of the same type is
	// fine, one of another type is an error.
	SearchAttributes map[string]enums.IndexedValueType
	// Sync is how SQLite commits reach the disk: SyncFull (the default)
	// syncs the write-ahead log at every commit, so an acknowledged change
	// survives a power loss; SyncNormal syncs it at checkpoints only,
	// which survives a crash of the process but may lose the last commits
	// to a power loss or a crash of the machine.
	Sync Sync
	// CachedWorkflows is how many workflows the history service keeps in
	// memory; default DefaultCachedWorkflows. One past it is read back
	// from SQLite at its next task, and a burst of more jobs than it
	// holds, due in the order they were last touched, misses on every
	// job: each load evicts the next job due. Size it with the worker's
	// cache, at about 36 KiB of RSS a workflow
	// (bench/history/2026-11-24-dev-10000-planner-stats.md).
	CachedWorkflows int
	// Logger receives the server's own logs, warnings and errors only (the
	// Temporal server is noisy below that). Default slog.Default().
	Logger *slog.Logger
}

// Server is a running embedded Temporal server, with its Web UI if one was
// asked for.
type Server struct {
	cfg          Config
	ports        servicePorts
	frontendAddr string // the gate's
	localAddr    string // the frontend's own
	uiAddr       string
	logLevel     *slog.LevelVar

	// frontendLn and uiLn are the configured ports, listened on from
	// the start so that nothing takes them while the server starts.
	frontendLn, uiLn net.Listener
	gate             *gate

	temporal temporal.Server
	client   client.Client
	ui       *http.Server
	uiDone   chan struct{}

	// refreshTimer ends the search attribute cache refreshing
	// (refreshSearchAttributeCaches), nil when none runs; dc holds the
	// dynamic config.
	refreshTimer *time.Timer
	dc           *dynamicconfig.MemoryClient

	stopOnce sync.Once
	stopErr  error
}

// Start checks the ports, opens (or creates) the database, starts the
// Temporal services and the UI, and returns once the frontend answers and
// the namespace, its retention and the search attributes are in place. ctx
// bounds that wait; on any error nothing is left running.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	frontendLn, uiLn, err := listenPorts(cfg)
	if err != nil {
		return nil, err
	}
	s, err := start(ctx, cfg, frontendLn, uiLn)
	if err != nil {
		_ = frontendLn.Close()
		if uiLn != nil {
			_ = uiLn.Close()
		}
		return nil, err
	}
	return s, nil
}

func start(ctx context.Context, cfg Config, frontendLn, uiLn net.Listener) (*Server, error) {
	ports, err := internalPorts(cfg.Host)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("create data dir %s: %w", cfg.DataDir, err)
	}
	if err := usePageCache(); err != nil {
		cfg.Logger.Warn("SQLite allocates its pages one by one: sorted lists cost more", "error", err)
	}
	sqlCfg := sqliteConfig(filepath.Join(cfg.DataDir, databaseFile), cfg.Sync)
	if err := prepareDatabase(sqlCfg, cfg); err != nil {
		return nil, err
	}

	s := &Server{
		cfg:          cfg,
		ports:        ports,
		frontendAddr: net.JoinHostPort(dialHost(cfg.Host), strconv.Itoa(cfg.FrontendPort)),
		localAddr:    hostPort(loopback(cfg.Host), ports.frontend),
		logLevel:     new(slog.LevelVar),
		frontendLn:   frontendLn,
		uiLn:         uiLn,
	}
	s.logLevel.Set(slog.LevelWarn)
	logger := slog.New(minLevelHandler{next: cfg.Logger.Handler(), min: s.logLevel})

	s.dc = devDynamicConfig(cfg)
	opts, err := serverOptions(cfg, sqlCfg, ports, s.dc, logger)
	if err != nil {
		return nil, err
	}
	if s.temporal, err = temporal.NewServer(opts...); err != nil {
		return nil, fmt.Errorf("create temporal server: %w", err)
	}
	if err := s.temporal.Start(); err != nil {
		// Start stops whatever it had started when it fails.
		return nil, fmt.Errorf("start temporal server: %w", err)
	}
	// The gate opens once the frontend listens: a client it lets in
	// reaches the frontend at once.
	s.gate = openGate(connlimit.New(frontendLn, cfg.Limits, cfg.Logger.With("listener", "temporal frontend")),
		s.localAddr, cfg.SilenceTimeout, cfg.Logger)
	if err := s.becomeReady(ctx, logger); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// becomeReady connects a client, settles the namespace and the search
// attributes, then brings up the UI.
func (s *Server) becomeReady(ctx context.Context, logger *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	c, err := dialFrontend(ctx, s.localAddr, s.cfg.Namespace, logger)
	if err != nil {
		return err
	}
	s.client = c
	if err := ensureNamespace(ctx, c, s.cfg.Namespace, s.cfg.Retention); err != nil {
		return err
	}
	missing, err := missingSearchAttributes(ctx, c, s.cfg.Namespace, s.cfg.SearchAttributes)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		s.refreshSearchAttributeCaches()
		if err := addSearchAttributes(ctx, c, s.cfg.Namespace, missing); err != nil {
			return err
		}
	}
	if s.cfg.UIPort == 0 {
		return nil
	}
	s.uiAddr = "http://" + net.JoinHostPort(dialHost(s.cfg.Host), strconv.Itoa(s.cfg.UIPort))
	h, err := uiHandler(s.cfg, s.localAddr)
	if err != nil {
		return err
	}
	s.ui = s.cfg.UIServer(h)
	ln := connlimit.New(s.uiLn, s.cfg.Limits, s.cfg.Logger.With("listener", "temporal web ui"))
	s.uiDone = make(chan struct{})
	go func() {
		defer close(s.uiDone)
		if err := s.ui.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Error("temporal web ui stopped", "error", err)
		}
	}()
	return waitHTTP(ctx, s.uiAddr+"/healthz")
}

// refreshSearchAttributeCaches has every service refresh its search
// attribute cache on every read until searchAttributeCacheExpiry has
// passed, when each has reloaded by itself: attributes this start
// registers in a namespace made before are usable at once, not a minute
// later. Only then: each refresh is a read of the one SQLite connection,
// behind every write queued there, and every row of every visibility list
// makes one, under a lock all lists share (BENCHMARKS.md,
// reads-10000-dev-after-creation). A new database's namespace has its
// attributes from the start (prepareDatabase), which the caches load.
func (s *Server) refreshSearchAttributeCaches() {
	end := s.dc.OverrideValue(dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(), true)
	s.refreshTimer = time.AfterFunc(searchAttributeCacheExpiry, end)
}

// FrontendAddress is the host:port of the gRPC frontend, for SDK clients and
// the temporal CLI, e.g. "127.0.0.1:7233". Its connections are capped
// (Config.Limits).
func (s *Server) FrontendAddress() string { return s.frontendAddr }

// LocalFrontendAddress is the loopback host:port the frontend itself
// listens on, behind FrontendAddress, for clients in this process: no
// cap applies to them, so that clients holding FrontendAddress's
// connections cannot lock them out.
func (s *Server) LocalFrontendAddress() string { return s.localAddr }

// UIAddress is the Web UI's base URL, e.g. "http://127.0.0.1:8233", or ""
// when no UI runs.
func (s *Server) UIAddress() string { return s.uiAddr }

// Listener is one of the addresses the server listens on.
type Listener struct {
	What    string // e.g. "the embedded Temporal frontend"
	Address string // host:port as bound; a wildcard host listens on every address
}

// Listeners are every address the server and its Web UI listen on: the
// frontend, the internal services' gRPC ports and the UI.
func (s *Server) Listeners() []Listener {
	local := dialHost(s.cfg.Host)
	out := []Listener{
		{"the embedded Temporal frontend", hostPort(s.cfg.Host, s.cfg.FrontendPort)},
		{"the embedded Temporal frontend behind its connection cap", s.localAddr},
		{"the embedded Temporal history service", hostPort(local, s.ports.history)},
		{"the embedded Temporal matching service", hostPort(local, s.ports.matching)},
		{"the embedded Temporal worker service", hostPort(local, s.ports.worker)},
	}
	if s.cfg.UIPort != 0 {
		out = append(out, Listener{"the Temporal Web UI", hostPort(s.cfg.Host, s.cfg.UIPort)})
	}
	return out
}

// Namespace is the namespace Start made ready.
func (s *Server) Namespace() string { return s.cfg.Namespace }

// Stop stops the UI and the Temporal services and closes the database. It
// is safe to call more than once; later calls return the first result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		// Shutting down, the server logs warnings and errors (context
		// canceled, task queue closed) that are no news; Stop's own result
		// says whether it failed.
		s.logLevel.Set(silent)
		if s.refreshTimer != nil {
			s.refreshTimer.Stop()
		}
		if s.ui != nil {
			_ = s.ui.Close()
			<-s.uiDone
		} else if s.uiLn != nil {
			_ = s.uiLn.Close()
		}
		if s.gate != nil {
			s.gate.close()
		} else {
			_ = s.frontendLn.Close()
		}
		if s.client != nil {
			s.client.Close()
		}
		if err := s.temporal.Stop(); err != nil {
			s.stopErr = fmt.Errorf("stop temporal server: %w", err)
		}
	})
	return s.stopErr
}

// withDefaults fills zero fields and rejects what cannot work.
func withDefaults(cfg Config) (Config, error) {
	if cfg.DataDir == "" {
		return cfg, errors.New("temporal server: data dir is required")
	}
	switch cfg.Host {
	case "":
		cfg.Host = DefaultHost
	case "localhost":
		// The server binds to an IP, never to a name.
		cfg.Host = DefaultHost
	}
	if net.ParseIP(cfg.Host) == nil {
		return cfg, fmt.Errorf("temporal server: host %q is not an IP address", cfg.Host)
	}
	if cfg.FrontendPort == 0 {
		cfg.FrontendPort = DefaultFrontendPort
	}
	if cfg.Namespace == "" {
		cfg.Namespace = DefaultNamespace
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.Retention < time.Hour {
		return cfg, fmt.Errorf("temporal server: retention %v is below the minimum of 1h", cfg.Retention)
	}
	switch cfg.Sync {
	case "":
		cfg.Sync = SyncFull
	case SyncFull, SyncNormal:
	default:
		return cfg, fmt.Errorf("temporal server: sync %q is neither %q nor %q", cfg.Sync, SyncFull, SyncNormal)
	}
	if cfg.CachedWorkflows == 0 {
		cfg.CachedWorkflows = DefaultCachedWorkflows
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SilenceTimeout == 0 {
		cfg.SilenceTimeout = DefaultSilenceTimeout
	}
	if cfg.UIServer == nil {
		cfg.UIServer = DefaultUIServer
	}
	if cfg.Limits.Total < 0 || cfg.Limits.PerClient < 0 {
		return cfg, errors.New("temporal server: connection caps must be 0 (no cap) or more")
	}
	return cfg, nil
}

// DefaultUIServer is the Web UI's server unless Config.UIServer says
// otherwise: a slow or silent client is cut off as recur's HTTP servers
// cut it off (cmd/recur/http.go), and no answer is held past a minute.
func DefaultUIServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
}

// dialFrontend connects to the frontend, retrying until it answers or ctx
// ends: the services are started but the frontend's listener may still be
// settling.
func dialFrontend(ctx context.Context, addr, namespace string, logger *slog.Logger) (client.Client, error) {
	opts := client.Options{
		HostPort:  addr,
		Namespace: namespace,
		Logger:    sdklog.NewStructuredLogger(logger),
	}
	for {
		c, err := client.DialContext(ctx, opts)
		if err == nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connect to temporal frontend %s: %w", addr, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitHTTP polls url until it answers 200 or ctx ends.
func waitHTTP(ctx context.Context, url string) error {
	hc := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("wait for %s: %w", url, err)
		}
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w", url, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
