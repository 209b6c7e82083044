package store

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

// newJobsFailing makes the gauge of enabled jobs whose last run failed:
// live job workflows with RecurState Enabled and RecurStatus Failed in
// Temporal's visibility store. A job leaves it when a run succeeds, or
// when it is disabled, completes or faults (recur_jobs counts those). With
// byCollection, it has a series per live collection, labelled as the
// workflows' series are (jobs.Key.MetricCollection), 0 included, so that
// a collection's series never comes and goes with its failures.
func newJobsFailing(c client.Client, namespace string, byCollection bool, log *slog.Logger) *countedGauge {
	f := failingCounter{temporal: c, namespace: namespace}
	g := &countedGauge{log: log, what: "failing jobs", ttl: jobsFailingTTL, timeout: 10 * time.Second, count: f.total,
		desc: prometheus.NewDesc(metricJobsFailing,
			"Enabled jobs whose last run failed (their workflows running in Temporal), counted at most every 5 s.", nil, nil)}
	if byCollection {
		g.ttl, g.count = jobsFailingByCollectionTTL, f.byCollection
		g.desc = prometheus.NewDesc(metricJobsFailing,
			"Enabled jobs whose last run failed (their workflows running in Temporal), by collection, counted at most every 30 s.",
			[]string{jobs.MetricCollectionLabel}, nil)
	}
	return g
}

// failingCounter counts the failing jobs in Temporal's visibility store.
type failingCounter struct {
	temporal  client.Client
	namespace string
}

// failingQuery finds the live enabled jobs whose last run failed.
var failingQuery = jobs.AttrKind.GetName() + " = " + jobs.Quote(jobs.KindJob) + " AND " + running +
	" AND " + jobs.AttrState.GetName() + " = " + jobs.Quote(string(jobs.Enabled)) +
	" AND " + jobs.AttrStatus.GetName() + " = " + jobs.Quote(string(jobs.ExecutionFailed))

// total counts the failing jobs in all: one count query.
func (f failingCounter) total(ctx context.Context) ([]countedValue, error) {
	n, err := f.countQuery(ctx, failingQuery)
	if err != nil {
		return nil, fmt.Errorf("count failing jobs: %w", err)
	}
	return []countedValue{{n: n}}, nil
}

// byCollection counts the failing jobs of each live collection: a list of
// the collections and a count query for each.
func (f failingCounter) byCollection(ctx context.Context) ([]countedValue, error) {
	collections, err := f.collections(ctx)
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
			n, err := f.countQuery(ctx, failingQuery+
				" AND "+jobs.AttrSubscription.GetName()+" = "+jobs.Quote(k.Subscription)+
				" AND "+jobs.AttrResourceGroup.GetName()+" = "+jobs.Quote(k.ResourceGroup)+
				" AND "+jobs.AttrCollection.GetName()+" = "+jobs.Quote(k.Collection))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = cmp.Or(firstErr, fmt.Errorf("count failing jobs of collection %s: %w", k.Collection, err))
				return
			}
			counts[k.MetricCollection()] = n
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	values := make([]countedValue, 0, len(counts))
	for label, n := range counts {
		values = append(values, countedValue{n: n, labels: []string{label}})
	}
	return values, nil
}

func (f failingCounter) countQuery(ctx context.Context, query string) (int64, error) {
	if f.temporal == nil {
		return 0, errors.New("no Temporal client")
	}
	resp, err := f.temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: f.namespace, Query: query})
	if err != nil {
		return 0, err
	}
	return resp.GetCount(), nil
}

// collections lists the keys of the live collections.
func (f failingCounter) collections(ctx context.Context) ([]jobs.Key, error) {
	if f.temporal == nil {
		return nil, errors.New("no Temporal client")
	}
	var out []jobs.Key
	var token []byte
	for {
		resp, err := f.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: f.namespace, PageSize: listPage, NextPageToken: token,
			Query: jobs.AttrKind.GetName() + " = " + jobs.Quote(jobs.KindCollection) + " AND " + running,
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
