// Package metrics is recur's Prometheus registry: the API's own series,
// and a Temporal SDK metrics handler that reports into the same registry,
// so that the SDK's temporal_* series and those workflows and activities
// emit through workflow.GetMetricsHandler and activity.GetMetricsHandler
// come out of one /metrics.
package metrics

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
)

// Buckets are the upper bounds, in seconds, of every latency histogram:
// API requests of a few milliseconds, actions of up to the 10-minute
// attempt limit, lateness from milliseconds to an overloaded worker's
// minutes.
var Buckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// reportInterval is how often the SDK's metrics reach the registry.
const reportInterval = time.Second

// Set is a registry and the Temporal metrics handler that reports into it.
type Set struct {
	// Registry holds every series; the API registers its own on it.
	Registry *prometheus.Registry
	// Temporal is for client.Options.MetricsHandler: the SDK's metrics,
	// and those of workflows and activities, land in Registry.
	Temporal client.MetricsHandler
	closer   interface{ Close() error }
}

// New returns a Set with the Go runtime and process collectors. Series
// the SDK cannot register (a name it reuses with other labels) are logged
// at debug level and dropped. The caller closes it.
func New(log *slog.Logger) *Set {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reporter := tallyprom.NewReporter(tallyprom.Options{
		Registerer:              reg,
		DefaultTimerType:        tallyprom.HistogramTimerType,
		DefaultHistogramBuckets: Buckets,
		OnRegisterError: func(err error) {
			log.Debug("metric not registered", "error", err)
		},
	})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sdktally.PrometheusSanitizeOptions,
	}, reportInterval)
	scope = sdktally.NewPrometheusNamingScope(scope)
	return &Set{Registry: reg, Temporal: sdktally.NewMetricsHandler(scope), closer: closer}
}

// Handler serves the registry in Prometheus' text format.
func (s *Set) Handler() http.Handler {
	return promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Close reports what is pending and stops reporting.
func (s *Set) Close() error { return s.closer.Close() }
