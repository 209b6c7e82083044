package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/recurhq/recur/jobs"
)

// recurJobs is the subject of recur's phase: jobs in collections of
// perCollection, through recur's REST API.
type recurJobs struct {
	api  *api
	sink *sink
}

// jobKey is the key of job i: jobs 0-999 are in collection scale-00,
// 1000-1999 in scale-01, ...
func jobKey(i int) jobs.Key {
	return jobs.Key{Subscription: "scale", ResourceGroup: "scale",
		Collection: fmt.Sprintf("scale-%02d", i/perCollection), Job: fmt.Sprintf("job-%05d", i)}
}

func (*recurJobs) name() string { return "recur" }

// prepare creates the collections that hold n jobs.
func (r *recurJobs) prepare(ctx context.Context, n int) error {
	for i := 0; i < n; i += perCollection {
		body, _ := json.Marshal(map[string]any{"location": "local", "properties": map[string]any{
			"sku": map[string]any{"name": "P20Premium"},
			"quota": map[string]any{
				"maxJobCount":   min(perCollection, n-i),
				"maxRecurrence": map[string]any{"frequency": "Minute", "interval": 1},
			},
		}})
		if err := r.api.call(ctx, http.MethodPut, jobKey(i).CollectionID(), body, nil); err != nil {
			return err
		}
	}
	return nil
}

// define PUTs job i: an hourly Http POST to the sink, first due at start.
func (r *recurJobs) define(ctx context.Context, i int, start time.Time) error {
	body, _ := json.Marshal(map[string]any{"properties": map[string]any{
		"startTime":  start.UTC().Format(time.RFC3339),
		"recurrence": map[string]any{"frequency": "Hour", "interval": 1},
		"action": map[string]any{"type": "Http", "request": map[string]any{
			"uri": r.sink.target(i), "method": "POST",
			"headers": map[string]string{"Content-Type": "application/json"},
			"body":    fmt.Sprintf(`{"job":%d}`, i),
		}},
	}})
	return r.api.call(ctx, http.MethodPut, jobKey(i).JobID(), body, nil)
}

func (r *recurJobs) get(ctx context.Context, i int) error {
	return r.api.call(ctx, http.MethodGet, jobKey(i).JobID(), nil, nil)
}

func (r *recurJobs) listFirst(ctx context.Context, i int) error {
	return r.api.call(ctx, http.MethodGet, jobKey(i).CollectionID()+"/jobs", nil, nil)
}

func (r *recurJobs) history(ctx context.Context, i int) error {
	return r.api.call(ctx, http.MethodGet, jobKey(i).JobID()+"/history", nil, nil)
}

// jobList is the part of Azure's JobListResult the list reads.
type jobList struct {
	Value    []struct{ Name string } `json:"value"`
	NextLink string                  `json:"nextLink"`
}

// listPages lists the jobs of the first collection, following nextLink.
func (r *recurJobs) listPages(ctx context.Context, rec *recorder) (pages, items int) {
	target := jobKey(0).CollectionID() + "/jobs"
	for target != "" && ctx.Err() == nil {
		var page jobList
		if err := rec.timed(func() error { return r.api.call(ctx, http.MethodGet, target, nil, &page) }); err != nil {
			break
		}
		pages++
		items += len(page.Value)
		target = page.NextLink
	}
	return pages, items
}

// remove deletes the collections, and with them their jobs, each to the
// end of its operation; a failed try is tried again a few times.
func (r *recurJobs) remove(ctx context.Context, n int) error {
	for i := 0; i < n; i += perCollection {
		var err error
		for try := range 5 {
			if try > 0 {
				time.Sleep(time.Duration(try) * 5 * time.Second)
			}
			err = r.api.call(ctx, http.MethodDelete, jobKey(i).CollectionID(), nil, nil)
			var he *httpError
			if err == nil || errors.As(err, &he) && he.status == http.StatusNotFound || ctx.Err() != nil {
				err = nil
				break
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
