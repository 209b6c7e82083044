package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/jobs"
)

// metricJobs is the gauge of jobs by state.
const metricJobs = "recur_jobs"

// jobsByStateTTL is how long a count of jobs by state is served before the
// next scrape counts again: scrapes never hammer Temporal's visibility.
const jobsByStateTTL = 5 * time.Second

// Gauges are the series the store counts in Temporal's visibility store
// on a scrape: jobs by state, and failing jobs (by collection with
// byCollection).
func (s *Store) Gauges(byCollection bool) []prometheus.Collector {
	return []prometheus.Collector{newJobsByState(s.temporal, s.namespace, s.log),
		newJobsFailing(s.temporal, s.namespace, byCollection, s.log)}
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
