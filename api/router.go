// Package api is recur's REST API: Azure Scheduler's 2016-03-01 paths and
// JSON on Gin, with its auth, rate limits and edge rules. It reads and
// writes jobs and collections through the store (package store), and
// maps what the store answers to HTTP.
package api

import (
	"cmp"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/store"
)

// New returns the router for c.
func New(c client.Client, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{namespace: opts.Namespace, log: logRequestIDs(opts.Logger),
		auth: opts.Auth, limits: newLimiters(opts.RateLimit), workflowTargets: opts.WorkflowTargets,
		operationWait: cmp.Or(opts.OperationWait, DefaultOperationWait),
		backfill:      backfillLimits{pace: opts.Backfill.Pace, budgets: newLimiters(opts.Backfill.PerSubscription)},
		edge:          newEdgePolicy(opts), refusals: newSampler(), tracer: opts.Tracer,
		minInterval: cmp.Or(opts.MinInterval, jobs.DefaultMinInterval)}
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
	r.Use(gin.Recovery(), s.trace, s.requestID, s.measure, s.accessLog, s.checkEdge)
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
	ext.GET("/subscriptions/:subscriptionId/jobs", s.whileTemporalUp, s.handle(s.listJobsAcross))
	ext.GET("/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/jobs", s.whileTemporalUp, s.handle(s.listJobsAcross))
	ext.GET("/subscriptions/:subscriptionId/failures", s.whileTemporalUp, s.handle(s.listFailuresAcross))
	ext.GET("/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/failures", s.whileTemporalUp, s.handle(s.listFailuresAcross))

	arm := r.Group("/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/Microsoft.Scheduler",
		s.authenticate, s.rateLimit, requireAPIVersion, s.whileTemporalUp)
	r.GET("/subscriptions/:subscriptionId/providers/Microsoft.Scheduler/jobCollections",
		s.authenticate, s.rateLimit, requireAPIVersion, s.whileTemporalUp, s.handle(s.listCollections))
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
	coll.GET("/failures", s.handle(s.listFailuresAcross))
	coll.PUT("/jobs/:jobName", s.handle(s.putJob))
	coll.GET("/jobs/:jobName", s.handle(s.getJob))
	coll.DELETE("/jobs/:jobName", s.handle(s.deleteJob))
	coll.PATCH("/jobs/:jobName", s.handle(s.patchJob))
	coll.POST("/jobs/:jobName/run", s.handle(s.runJob))
	coll.POST("/jobs/:jobName/backfill", s.handle(s.backfillJob))
	coll.GET("/jobs/:jobName/history", s.handle(s.listHistory))
	coll.GET("/jobs/:jobName/failures", s.handle(s.listFailures))
	coll.GET("/jobs/:jobName/failures/:failureId", s.handle(s.getFailure))
	coll.POST("/jobs/:jobName/failures/:failureId/run", s.handle(s.rerunFailure))
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
