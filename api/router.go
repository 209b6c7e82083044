// Package api is recur's REST API: Azure Scheduler's 2016-03-01 paths and
// JSON on Gin, with its auth, rate limits and edge rules. It reads and
// writes jobs and collections through the store (package store), and
// maps what the store answers to HTTP.
package api

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/store"
)

// APIVersion is the only api-version the ARM paths accept.
const APIVersion = "2016-03-01"

// Options configure the API.
type Options struct {
	Namespace string
	Logger    *slog.Logger
	// Auth checks the bearer token of every request but /healthz,
	// /readyz, /openapi.json and the dashboard's files, which hold no
	// data (/codec and /metrics want an operator's); nil leaves the API
	// open to anyone who can reach it (recur dev on loopback).
	Auth Authenticator
	// RateLimit limits each subscription's requests; zero is no limit.
	RateLimit RateLimit
	// Backfill paces backfills (backfill.go).
	Backfill BackfillLimits
	// DataConverter is the Temporal client's (with recur's codec), for the
	// payloads the store decodes itself (memos, history rows); nil is
	// Temporal's default.
	DataConverter converter.DataConverter
	// Codec, if set, serves Temporal's remote codec protocol under /codec/
	// for the Web UI (codec.Handler), to operators only.
	Codec http.Handler
	// CodecOrigins are the origins of the Web UIs Codec lets call it from
	// a browser (its CORS origins): on /codec/ the API without tokens
	// answers their pages as its own.
	CodecOrigins []string
	// ListenAddr is the address the API listens on: a Host header may
	// give its host, and links in answers name it when the request's Host
	// is not allowed. Empty, links name localhost.
	ListenAddr string
	// AllowedHosts are the names a Host header may give beyond localhost,
	// IP addresses and ListenAddr's host. Without an Authenticator a
	// request for any other name is refused (DNS rebinding); with one, only
	// once names are set. Links in answers name the request's Host only
	// when it is allowed.
	AllowedHosts Hosts
	// TrustedProxies are the proxies whose forwarded headers (the client's
	// address and scheme) the API believes; none by default.
	TrustedProxies TrustedProxies
	// Metrics, if set, gets the API's series (request latency, jobs by
	// state) and is served at /metrics, open without an Authenticator and
	// to operators only with one: the counts span every tenant.
	Metrics *prometheus.Registry
	// MetricsByCollection labels the gauge of failing jobs by collection
	// (jobs.MetricCollectionLabel), as the workers' series are when the
	// operator opts in: a series per collection, and a count query per
	// collection every 30 s at most.
	MetricsByCollection bool
	// WorkflowTargets are where Workflow actions may start workflows: a
	// job aimed elsewhere is refused at PUT and PATCH. The zero value
	// allows none.
	WorkflowTargets jobs.WorkflowTargets
	// Ready, if set, says whether what the API needs of the namespace
	// beyond its existence is in place: on a cluster, that recur's search
	// attributes are usable (temporalserver.SearchAttributesUsable). Until
	// it has succeeded once, /readyz answers 503 and so does every request
	// that goes to Temporal, with Retry-After.
	Ready func(context.Context) error
	// MaxCollectionsPerSubscription caps the job collections of one
	// subscription, so that the per-collection quotas (jobs, recurrence)
	// do not multiply without bound; a PUT that would create one more is
	// a 409. Zero is no cap. The count is read from the visibility store,
	// so it is eventually consistent (store.CollectionRoom).
	MaxCollectionsPerSubscription int
	// OperationWait is how long a collection's DELETE, enable or disable
	// waits for its jobs to take the change before it answers 202 with a
	// Location to poll; zero is DefaultOperationWait.
	OperationWait time.Duration
}

// Server holds the API's dependencies; its methods are the handlers.
type Server struct {
	store     *store.Store
	namespace string
	log       *slog.Logger
	outage    outage
	auth      Authenticator
	limits    *limiters
	backfill  backfillLimits
	requests  *prometheus.HistogramVec // nil without Options.Metrics
	// workflowTargets are where Workflow actions may start workflows.
	workflowTargets jobs.WorkflowTargets
	ready           *readiness // nil without Options.Ready
	operationWait   time.Duration
	// edge is what checkEdge checks every request with (edge.go).
	edge *edgePolicy
	// refusals samples the log lines of refused requests (logRefusal).
	refusals *sampler
}

// New returns the router for c.
func New(c client.Client, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{namespace: opts.Namespace, log: logRequestIDs(opts.Logger),
		auth: opts.Auth, limits: newLimiters(opts.RateLimit), workflowTargets: opts.WorkflowTargets,
		operationWait: cmp.Or(opts.OperationWait, DefaultOperationWait),
		backfill:      backfillLimits{pace: opts.Backfill.Pace, budgets: newLimiters(opts.Backfill.PerSubscription)},
		edge:          newEdgePolicy(opts), refusals: newSampler()}
	stored := store.Options{Namespace: opts.Namespace, Logger: s.log, DataConverter: opts.DataConverter,
		MaxCollectionsPerSubscription: opts.MaxCollectionsPerSubscription}
	if opts.Metrics != nil {
		s.requests, stored.SlotWaits = registerMetrics(opts.Metrics)
	}
	s.store = store.New(c, stored)
	if opts.Metrics != nil {
		for _, g := range s.store.Gauges(opts.MetricsByCollection) {
			register(opts.Metrics, g)
		}
	}
	if opts.Ready != nil {
		s.ready = &readiness{check: opts.Ready}
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	// Gin believes X-Forwarded-For and X-Real-IP from anyone unless told
	// whom to (nil: no one). A prefix's string always parses.
	var proxies []string
	for _, p := range opts.TrustedProxies {
		proxies = append(proxies, p.String())
	}
	_ = r.SetTrustedProxies(proxies)
	r.Use(gin.Recovery(), s.requestID, s.measure, s.accessLog, s.checkEdge)
	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)
	r.GET("/openapi.json", s.openAPI)
	if opts.Metrics != nil {
		r.GET("/metrics", s.operatorOnly, gin.WrapH(promhttp.HandlerFor(opts.Metrics,
			promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})))
	}
	routeDashboard(r)
	if opts.Codec != nil {
		r.Any("/codec/*op", s.operatorOnly, s.codecBody, gin.WrapH(opts.Codec))
	}
	ext := r.Group("/recur/v1", s.authenticate, s.rateLimit)
	ext.POST("/preview", s.handle(s.previewBody))
	ext.GET("/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/jobCollections/:jobCollectionName/jobs/:jobName/preview", s.handle(s.previewJob))
	ext.GET("/subscriptions/:subscriptionId/jobs", s.temporalGate, s.handle(s.listJobsAcross))
	ext.GET("/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/jobs", s.temporalGate, s.handle(s.listJobsAcross))

	arm := r.Group("/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/Microsoft.Scheduler",
		s.authenticate, s.rateLimit, requireAPIVersion, s.temporalGate)
	r.GET("/subscriptions/:subscriptionId/providers/Microsoft.Scheduler/jobCollections",
		s.authenticate, s.rateLimit, requireAPIVersion, s.temporalGate, s.handle(s.listCollections))
	arm.GET("/jobCollections", s.handle(s.listCollections))
	coll := arm.Group("/jobCollections/:jobCollectionName")
	coll.PUT("", s.handle(s.putCollection))
	coll.GET("", s.handle(s.getCollection))
	coll.PATCH("", s.handle(s.patchCollection))
	coll.DELETE("", s.handle(s.deleteCollection))
	coll.POST("/enable", s.handle(s.enableCollection))
	coll.POST("/disable", s.handle(s.disableCollection))
	coll.GET("/operations/:operationId", s.handle(s.getOperation))
	coll.GET("/jobs", s.handle(s.listJobs))
	coll.PUT("/jobs/:jobName", s.handle(s.putJob))
	coll.GET("/jobs/:jobName", s.handle(s.getJob))
	coll.DELETE("/jobs/:jobName", s.handle(s.deleteJob))
	coll.PATCH("/jobs/:jobName", s.handle(s.patchJob))
	coll.POST("/jobs/:jobName/run", s.handle(s.runJob))
	coll.POST("/jobs/:jobName/backfill", s.handle(s.backfillJob))
	coll.GET("/jobs/:jobName/history", s.handle(s.listHistory))
	r.NoRoute(func(c *gin.Context) {
		writeError(c, s.log, &apiError{status: http.StatusNotFound, code: "NotFound",
			message: "no such resource: " + c.Request.Method + " " + c.Request.URL.Path})
	})
	return foldPath(r)
}

func requireAPIVersion(c *gin.Context) {
	switch v := c.Query("api-version"); v {
	case APIVersion:
		c.Next()
	case "":
		abort(c, http.StatusBadRequest, "MissingApiVersionParameter",
			"the api-version query parameter is required; use api-version="+APIVersion)
	default:
		abort(c, http.StatusBadRequest, "InvalidApiVersionParameter",
			"api-version "+v+" is not supported; use api-version="+APIVersion)
	}
}

// accessLog logs each request without its query string or body, which
// may carry secrets.
func (s *Server) accessLog(c *gin.Context) {
	c.Next()
	attrs := []any{"method", c.Request.Method, "path", c.Request.URL.Path, "route", c.FullPath(),
		"status", c.Writer.Status()}
	if p, ok := principalOf(c); ok {
		attrs = append(attrs, "principal", p.Name) // the token's name, never the token
	}
	s.log.DebugContext(c.Request.Context(), "request", attrs...)
}
