package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/jobs"
)

// Series the API serves beside those of the registry it is given.
const (
	metricRequestDuration = "recur_api_request_duration_seconds"
	metricJobs            = "recur_jobs"
	metricSlotWait        = "recur_api_lease_slot_wait_seconds"
)

// requestBuckets are the upper bounds, in seconds, of the API's latency
// histogram: from a cached answer to Temporal's 10-second call timeout.
var requestBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// jobsByStateTTL is how long a count of jobs by state is served before the
// next scrape counts again: scrapes never hammer Temporal's visibility.
const jobsByStateTTL = 5 * time.Second

// knownMethods keeps the method label bounded: a client may send any
// method name.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// registerMetrics registers the API's series on reg, or takes those a
// previous router registered there; byCollection labels the gauge of
// failing jobs by collection.
func (s *Server) registerMetrics(reg prometheus.Registerer, byCollection bool) {
	s.requests = register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    metricRequestDuration,
		Help:    "Time to answer an API request, by method, route template and status.",
		Buckets: requestBuckets,
	}, []string{"method", "route", "status"}))
	s.slotWaits = register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: metricSlotWait,
		Help: "Time a new job's PUT waited for a slot of its collection's lease, " +
			"whether it got one or asked by name after; mostly 0, a collection's round trip when the lease ran dry.",
		Buckets: requestBuckets,
	}))
	register(reg, prometheus.Collector(newJobsByState(s.temporal, s.namespace, s.log)))
	register(reg, prometheus.Collector(newJobsFailing(s.temporal, s.namespace, byCollection, s.log)))
}

// register registers c on reg and returns it, or the collector already
// registered in its place.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) {
			if existing, ok := already.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err) // a programming error: two series of one name
	}
	return c
}

// measure observes each request's latency under its route template
// (c.FullPath()), never its path: paths hold tenants' names, and the
// series must stay few.
func (s *Server) measure(c *gin.Context) {
	if s.requests == nil {
		c.Next()
		return
	}
	started := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	method := c.Request.Method
	if !knownMethods[method] {
		method = "other"
	}
	s.requests.WithLabelValues(method, route, strconv.Itoa(c.Writer.Status())).Observe(time.Since(started).Seconds())
}

// countedGauge is a gauge that Temporal's visibility store counts on a
// scrape (count), served for ttl. Concurrent scrapes wait for one count; a
// failed count is not tried again before ttl either, so that scrapes
// during an outage do not each wait for Temporal, and it leaves the gauge
// out of the scrape (logged as what) rather than reporting it as zero.
type countedGauge struct {
	desc    *prometheus.Desc
	what    string
	ttl     time.Duration
	timeout time.Duration // of one count
	count   func(ctx context.Context) ([]countedValue, error)
	log     *slog.Logger

	mu     sync.Mutex
	at     time.Time
	values []countedValue
	err    error // of the last count, kept as long as a count
}

// countedValue is one series of a countedGauge.
type countedValue struct {
	n      int64
	labels []string
}

// Describe implements prometheus.Collector.
func (g *countedGauge) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

// Collect implements prometheus.Collector.
func (g *countedGauge) Collect(ch chan<- prometheus.Metric) {
	values, err := g.current()
	if err != nil {
		g.log.Warn(g.what+" left out of /metrics", "error", err)
		return
	}
	for _, v := range values {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, float64(v.n), v.labels...)
	}
}

func (g *countedGauge) current() ([]countedValue, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.at.IsZero() && time.Since(g.at) < g.ttl {
		return g.values, g.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	g.values, g.err = g.count(ctx)
	cancel()
	g.at = time.Now()
	return g.values, g.err
}

// jobStateValues are the states counted, as the RecurState attribute
// holds them.
var jobStateValues = []jobs.State{jobs.Enabled, jobs.Disabled, jobs.Completed, jobs.Faulted}

// newJobsByState makes the gauge of jobs by state: the live job workflows
// of each state in Temporal's visibility store, one count query per state.
func newJobsByState(c client.Client, namespace string, log *slog.Logger) *countedGauge {
	return &countedGauge{log: log, what: "jobs by state", ttl: jobsByStateTTL, timeout: 5 * time.Second,
		desc: prometheus.NewDesc(metricJobs, "Jobs by state (their workflows running in Temporal), counted at most every 5 s.",
			[]string{"state"}, nil),
		count: func(ctx context.Context) ([]countedValue, error) {
			if c == nil {
				return nil, errors.New("no Temporal client")
			}
			values := make([]countedValue, len(jobStateValues))
			for i, state := range jobStateValues {
				resp, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
					Namespace: namespace,
					Query: jobs.AttrKind.GetName() + " = " + jobs.Quote(jobs.KindJob) + " AND " + running +
						" AND " + jobs.AttrState.GetName() + " = " + jobs.Quote(string(state)),
				})
				if err != nil {
					return nil, fmt.Errorf("count %s jobs: %w", strings.ToLower(string(state)), err)
				}
				values[i] = countedValue{n: resp.GetCount(), labels: []string{strings.ToLower(string(state))}}
			}
			return values, nil
		}}
}
