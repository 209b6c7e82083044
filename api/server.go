package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
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
	// Tracer, when set, makes each request a span (trace.go); nil traces
	// nothing.
	Tracer trace.Tracer
	// MinInterval is the operator's floor: a PUT or PATCH whose job runs
	// more often is refused, unless it leaves the schedule of a job
	// admitted before alone (checkFloor). Zero is jobs.DefaultMinInterval.
	MinInterval time.Duration
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
	// tracer is Options.Tracer.
	tracer trace.Tracer
	// minInterval is Options.MinInterval, its default filled in.
	minInterval time.Duration
}
