package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"google.golang.org/grpc"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/connlimit"
	"github.com/recurhq/recur/egress"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/metrics"
	"github.com/recurhq/recur/store"
	"github.com/recurhq/recur/temporalserver"
	"github.com/recurhq/recur/worker"
)

// roles says which parts a process runs against its Temporal client.
type roles struct {
	worker bool
	api    bool
	// authority is the Azure AD authority for ActiveDirectoryOAuth
	// actions (a local identity provider in tests and on premises).
	authority string
	// storageQueue and serviceBus are the endpoints of those actions
	// (Azurite or a local server in tests; empty for Azure's).
	storageQueue, serviceBus string
	// egress says which destinations the worker's outbound calls may
	// reach, workflowTargets where its Workflow actions may start
	// workflows (the API refuses the others at PUT and PATCH).
	egress          egress.Policy
	workflowTargets jobs.WorkflowTargets
	// apiConfig is the REST API's authentication, rate limits and TLS.
	apiConfig apiConfig
	// converter is the Temporal client's data converter (encryption,
	// codec_flags.go), for the payloads the API decodes itself; codec
	// serves the Web UI's codec endpoint, nil for none, and codecOrigins
	// are the Web UIs it lets call it from a browser.
	converter    converter.DataConverter
	codec        http.Handler
	codecOrigins []string
	// metrics is the process's registry: the API serves it at /metrics.
	metrics *metrics.Set
	// metricsByCollection labels the workflows' series and the gauge of
	// failing jobs by collection (--metrics-collection-label).
	metricsByCollection bool
	// workerOptions size the worker (worker_flags.go); finishedRetention
	// is how long completed and faulted jobs are kept.
	workerOptions     sdkworker.Options
	finishedRetention time.Duration
	// actionBudget is how long a first attempt waits for its answer in a
	// local activity; 0 runs none there (worker_flags.go).
	actionBudget time.Duration
	// limits cap the API's connections (http.go).
	limits connlimit.Limits
	// otlp exports the worker's and the API's spans when it has an
	// endpoint (otlp.go).
	otlp otlpFlags
}

// dial connects to Temporal with recur's logger, over conn's TLS with its
// credentials; dc (nil: the SDK's default) converts every payload the
// client and its workers write and read, and then the messages of
// failures too (codec.FailureConverter), and mh (nil: none) gets the
// metrics of the client, its workers, workflows and activities.
func dial(ctx context.Context, address, namespace string, conn temporalConn, dc converter.DataConverter, mh client.MetricsHandler, log *slog.Logger) (client.Client, error) {
	var fc converter.FailureConverter
	if dc != nil {
		fc = codec.FailureConverter(dc)
	}
	c, err := client.DialContext(ctx, client.Options{
		DataConverter:     dc,
		FailureConverter:  fc,
		MetricsHandler:    mh,
		HostPort:          address,
		Namespace:         namespace,
		Logger:            sdklog.NewStructuredLogger(log.With("component", "temporal-client")),
		ConnectionOptions: client.ConnectionOptions{TLS: conn.tls, GrpcCompression: conn.compression, DialOptions: []grpc.DialOption{store.LeanLists()}},
		Credentials:       conn.credentials,
		PayloadLimits:     client.PayloadLimitOptions{MemoSizeWarning: temporalserver.MemoSizeWarning},
	})
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", address, err)
	}
	return c, nil
}

// listen opens the API's address before anything else starts, so that a
// port in use is a clear error and not a half-started process.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("API address %s is in use or invalid: %w", addr, err)
	}
	return ln, nil
}

// serveRoles runs the worker and/or the API on c until ctx ends, then
// stops the API (finishing requests in flight) and drains the worker.
func serveRoles(ctx context.Context, c client.Client, r roles, ln net.Listener, namespace string, log *slog.Logger) error {
	tracer, stopTracing, err := r.otlp.tracer(ctx, log)
	if err != nil {
		return err
	}
	// Deferred first, run last: the spans of the requests and actions the
	// stops below finish are flushed.
	defer stopTracing()
	var w sdkworker.Worker
	if r.worker {
		acts := activities.New(r.egress)
		if r.authority != "" {
			acts.Authority = r.authority
		}
		acts.StorageQueueEndpoint, acts.ServiceBusEndpoint = r.storageQueue, r.serviceBus
		acts.WorkflowTargets, acts.FinishedRetention = r.workflowTargets, r.finishedRetention
		acts.DataConverter = r.converter
		acts.Attempts, acts.Tracer = nil, tracer
		if r.actionBudget > 0 {
			acts.Attempts = activities.NewAttempts(r.actionBudget)
		}
		plain, err := plainClient(c, namespace, r.metrics, log)
		if err != nil {
			return err
		}
		defer plain.Close()
		acts.Temporal = plain
		opts := r.workerOptions
		if r.metricsByCollection {
			opts.Interceptors = append(slices.Clip(opts.Interceptors), worker.CollectionLabel())
		}
		w = worker.New(c, acts, opts)
		if err := w.Start(); err != nil {
			return fmt.Errorf("start worker: %w", err)
		}
		log.Info("worker polling", "taskQueue", jobs.TaskQueue, "namespace", namespace)
		logEgress(log, r.egress, r.workflowTargets)
	}
	var srv *http.Server
	errc := make(chan error, 1)
	if r.api {
		// Another process may have registered the search attributes a
		// moment ago: listed is not yet usable.
		ready := func(ctx context.Context) error {
			return temporalserver.SearchAttributesUsable(ctx, c, namespace, jobs.SearchAttributeTypes())
		}
		srv = httpServer(api.New(c, api.Options{Namespace: namespace, Logger: log,
			Auth: r.apiConfig.auth, RateLimit: r.apiConfig.rateLimit, DataConverter: r.converter, Codec: r.codec,
			Metrics: r.metrics.Registry, MetricsByCollection: r.metricsByCollection, WorkflowTargets: r.workflowTargets, Ready: ready,
			CodecOrigins: r.codecOrigins, ListenAddr: ln.Addr().String(),
			AllowedHosts: r.apiConfig.allowedHosts, TrustedProxies: r.apiConfig.trustedProxies,
			MaxCollectionsPerSubscription: r.apiConfig.maxCollections, Backfill: r.apiConfig.backfill, Tracer: tracer,
			MinInterval: r.apiConfig.minInterval}), writeTimeout)
		srv.TLSConfig = r.apiConfig.tls
		ln = limitListener(ln, r.limits, "api", log)
		scheme := "http://"
		if srv.TLSConfig != nil {
			scheme = "https://"
		}
		log.Info("REST API listening", "url", scheme+ln.Addr().String(), "authentication", r.apiConfig.auth != nil,
			"rateLimitPerSubscription", r.apiConfig.rateLimit.PerSecond, "maxCollectionsPerSubscription", r.apiConfig.maxCollections,
			"minInterval", r.apiConfig.minInterval.String(), "backfillPace", r.apiConfig.backfill.Pace.String(), "backfillRatePerSubscription", r.apiConfig.backfill.PerSubscription.PerSecond,
			"maxConnections", r.limits.Total, "maxConnectionsPerClient", r.limits.PerClient,
			"allowedHosts", r.apiConfig.allowedHosts.String(), "trustedProxies", r.apiConfig.trustedProxies.String())
		go func() {
			if srv.TLSConfig != nil {
				errc <- srv.ServeTLS(ln, "", "")
				return
			}
			errc <- srv.Serve(ln)
		}()
	}
	select {
	case <-ctx.Done():
	case err = <-errc:
		err = fmt.Errorf("REST API: %w", err)
	}
	if srv != nil {
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if sErr := srv.Shutdown(shutdownCtx); sErr != nil && !errors.Is(sErr, http.ErrServerClosed) {
			log.Warn("REST API shutdown", "error", sErr)
		}
		cancel()
	}
	if w != nil {
		w.Stop() // waits for the tasks and actions in flight, up to --stop-timeout
	}
	return err
}

// serveMetrics serves /metrics on ln within limits, for a worker without
// the API, until the returned function stops it. It is unauthenticated:
// the series are counts and latencies, no tenant's names; bind it to a
// private address.
func serveMetrics(ln net.Listener, set *metrics.Set, limits connlimit.Limits, log *slog.Logger) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", set.Handler())
	srv := httpServer(mux, writeTimeout)
	log.Info("metrics listening", "url", "http://"+ln.Addr().String()+"/metrics")
	go func() {
		if err := srv.Serve(limitListener(ln, limits, "metrics", log)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics server stopped", "error", err)
		}
	}()
	return func() { _ = srv.Close() }
}
