package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/jobs"
)

// metricJobsFailing is the gauge of failing jobs.
const metricJobsFailing = "recur_jobs_failing"

// How often the failing jobs are counted again, at most, whatever the
// scrape rate: the total is one count query; by collection it is a list
// of the collections and a count query for each, which Temporal's
// visibility store is spared more often than every 30 s.
const (
	jobsFailingTTL             = 5 * time.Second
	jobsFailingByCollectionTTL = 30 * time.Second
	// failingCountsAtOnce bounds the count queries in flight by collection.
	failingCountsAtOnce = 8
)

// jobsFailing is the gauge of enabled jobs whose last run failed: live job
// workflows with RecurState Enabled and RecurStatus Failed in Temporal's
// visibility store. A job leaves it when a run succeeds, or when it is
// disabled, completes or faults (recur_jobs counts those). With
// byCollection, it has a series per live collection, labelled as the
// workflows' series are (jobs.Key.MetricCollection), 0 included, so that
// a collection's series never comes and goes with its failures.
type jobsFailing struct {
	temporal     client.Client
	namespace    string
	log          *slog.Logger
	byCollection bool
	desc         *prometheus.Desc

	mu     sync.Mutex
	at     time.Time
	counts map[string]int64 // by label value; "" alone without byCollection
	err    error            // of the last count, kept as long as a count
}

func newJobsFailing(c client.Client, namespace string, byCollection bool, log *slog.Logger) *jobsFailing {
	var labels []string
	help := "Enabled jobs whose last run failed (their workflows running in Temporal), counted at most every 5 s."
	if byCollection {
		labels = []string{jobs.MetricCollectionLabel}
		help = "Enabled jobs whose last run failed (their workflows running in Temporal), by collection, counted at most every 30 s."
	}
	return &jobsFailing{temporal: c, namespace: namespace, log: log, byCollection: byCollection,
		desc: prometheus.NewDesc(metricJobsFailing, help, labels, nil)}
}

// Describe implements prometheus.Collector.
func (j *jobsFailing) Describe(ch chan<- *prometheus.Desc) { ch <- j.desc }

// Collect implements prometheus.Collector. When Temporal cannot count,
// the gauge is left out of the scrape (and the failure logged) rather
// than reported as zero.
func (j *jobsFailing) Collect(ch chan<- prometheus.Metric) {
	counts, err := j.current()
	if err != nil {
		j.log.Warn("failing jobs left out of /metrics", "error", err)
		return
	}
	for label, n := range counts {
		var values []string
		if j.byCollection {
			values = []string{label}
		}
		ch <- prometheus.MustNewConstMetric(j.desc, prometheus.GaugeValue, float64(n), values...)
	}
}

// current returns the counts, counting again when they are older than
// their TTL; like jobsByState.current, concurrent scrapes wait for one
// count and a failed count is not tried again before the TTL either.
func (j *jobsFailing) current() (map[string]int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	ttl := jobsFailingTTL
	if j.byCollection {
		ttl = jobsFailingByCollectionTTL
	}
	if !j.at.IsZero() && time.Since(j.at) < ttl {
		return j.counts, j.err
	}
	if j.temporal == nil {
		j.counts, j.err = nil, errors.New("no Temporal client")
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		j.counts, j.err = j.count(ctx)
		cancel()
	}
	j.at = time.Now()
	return j.counts, j.err
}

// failingQuery finds the live enabled jobs whose last run failed.
var failingQuery = jobs.AttrKind.GetName() + " = " + quote(jobs.KindJob) + " AND " + running +
	" AND " + jobs.AttrState.GetName() + " = " + quote(string(jobs.Enabled)) +
	" AND " + jobs.AttrStatus.GetName() + " = " + quote(string(jobs.ExecutionFailed))

// count asks Temporal for the failing jobs: one count in all, or one per
// live collection.
func (j *jobsFailing) count(ctx context.Context) (map[string]int64, error) {
	if !j.byCollection {
		n, err := j.countQuery(ctx, failingQuery)
		if err != nil {
			return nil, fmt.Errorf("count failing jobs: %w", err)
		}
		return map[string]int64{"": n}, nil
	}
	collections, err := j.collections(ctx)
	if err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	counts := make(map[string]int64, len(collections))
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		slots    = make(chan struct{}, failingCountsAtOnce)
	)
	for _, k := range collections {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			n, err := j.countQuery(ctx, failingQuery+
				" AND "+jobs.AttrSubscription.GetName()+" = "+quote(k.Subscription)+
				" AND "+jobs.AttrResourceGroup.GetName()+" = "+quote(k.ResourceGroup)+
				" AND "+jobs.AttrCollection.GetName()+" = "+quote(k.Collection))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = cmp.Or(firstErr, fmt.Errorf("count failing jobs of collection %s: %w", k.Collection, err))
				return
			}
			// Labels that sanitize alike add up.
			counts[k.MetricCollection()] += n
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return counts, nil
}

func (j *jobsFailing) countQuery(ctx context.Context, query string) (int64, error) {
	resp, err := j.temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: j.namespace, Query: query})
	if err != nil {
		return 0, err
	}
	return resp.GetCount(), nil
}

// collections lists the keys of the live collections.
func (j *jobsFailing) collections(ctx context.Context) ([]jobs.Key, error) {
	var out []jobs.Key
	var token []byte
	for {
		resp, err := j.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: j.namespace, PageSize: listPage, NextPageToken: token,
			Query: jobs.AttrKind.GetName() + " = " + quote(jobs.KindCollection) + " AND " + running,
		})
		if err != nil {
			return nil, err
		}
		for _, e := range resp.GetExecutions() {
			if k, err := keyOf(e); err == nil {
				out = append(out, k)
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return out, nil
		}
	}
}
