package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

// Series the API serves beside those of the registry it is given.
const (
	metricRequestDuration = "recur_api_request_duration_seconds"
	metricSlotWait        = "recur_api_lease_slot_wait_seconds"
)

// requestBuckets are the upper bounds, in seconds, of the API's latency
// histogram: from a cached answer to Temporal's 10-second call timeout.
var requestBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// knownMethods keeps the method label bounded: a client may send any
// method name.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// registerMetrics registers the API's histograms on reg, or takes those
// a previous router registered there: the latency of requests, and that
// of lease slots, which the store observes.
func registerMetrics(reg prometheus.Registerer) (requests *prometheus.HistogramVec, slotWaits prometheus.Histogram) {
	requests = register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    metricRequestDuration,
		Help:    "Time to answer an API request, by method, route template and status.",
		Buckets: requestBuckets,
	}, []string{"method", "route", "status"}))
	slotWaits = register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: metricSlotWait,
		Help: "Time a new job's PUT waited for a slot of its collection's lease, " +
			"whether it got one or asked by name after; mostly 0, a collection's round trip when the lease ran dry.",
		Buckets: requestBuckets,
	}))
	return requests, slotWaits
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
