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
		if err := r.collection(ctx, jobKey(i), min(perCollection, n-i)); err != nil {
			return err
		}
	}
	return nil
}

// collection PUTs the collection of k, for n jobs.
func (r *recurJobs) collection(ctx context.Context, k jobs.Key, n int) error {
	body, _ := json.Marshal(map[string]any{"location": "local", "properties": map[string]any{
		"sku": map[string]any{"name": "P20Premium"},
		"quota": map[string]any{
			"maxJobCount":   n,
			"maxRecurrence": map[string]any{"frequency": "Minute", "interval": 1},
		},
	}})
	return r.api.call(ctx, http.MethodPut, k.CollectionID(), body, nil)
}

// groupJobs is how many jobs the collection the burst's load disables
// holds.
const groupJobs = 100

// writeKey is the key of the writes' item k, in a collection of their
// own; groupKey of job k of the collection the writes disable. Their
// targets are the sink's, under names it counts apart from the burst's.
func writeKey(k int) jobs.Key {
	return jobs.Key{Subscription: "scale", ResourceGroup: "scale", Collection: "scale-writes", Job: fmt.Sprintf("w-%03d", k)}
}

func groupKey(k int) jobs.Key {
	return jobs.Key{Subscription: "scale", ResourceGroup: "scale", Collection: "scale-group", Job: fmt.Sprintf("g-%03d", k)}
}

// prepareWrites creates the collection of the writes' n jobs and the
// collection of groupJobs jobs they disable.
func (r *recurJobs) prepareWrites(ctx context.Context, n int, start time.Time) error {
	for _, c := range []struct {
		key func(int) jobs.Key
		n   int
	}{{writeKey, n}, {groupKey, groupJobs}} {
		if err := r.collection(ctx, c.key(0), c.n); err != nil {
			return err
		}
		for k := range c.n {
			if err := r.put(ctx, c.key(k), r.sink.Target(c.key(k).Job), start); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *recurJobs) redefineW(ctx context.Context, k int, start time.Time) error {
	return r.put(ctx, writeKey(k), r.sink.Target(writeKey(k).Job), start)
}

func (r *recurJobs) deleteW(ctx context.Context, k int) error {
	return r.api.call(ctx, http.MethodDelete, writeKey(k).JobID(), nil, nil)
}

func (r *recurJobs) pauseW(ctx context.Context, k int, paused bool) error {
	state := "Enabled"
	if paused {
		state = "Disabled"
	}
	body, _ := json.Marshal(map[string]any{"properties": map[string]any{"state": state}})
	return r.api.call(ctx, http.MethodPatch, writeKey(k).JobID(), body, nil)
}

func (r *recurJobs) runW(ctx context.Context, k int) error {
	return r.api.call(ctx, http.MethodPost, writeKey(k).JobID()+"/run", nil, nil)
}

// disableGroup disables or enables the collection of groupJobs: its
// answer, a 202 when telling every job takes longer than a write should.
func (r *recurJobs) disableGroup(ctx context.Context, disabled bool) error {
	op := "/enable"
	if disabled {
		op = "/disable"
	}
	return r.api.answer(ctx, http.MethodPost, groupKey(0).CollectionID()+op, nil)
}

// listAcross reads the first page of the subscription's jobs (recur's
// extension).
func (r *recurJobs) listAcross(ctx context.Context) error {
	return r.api.call(ctx, http.MethodGet, "/recur/v1/subscriptions/scale/jobs", nil, nil)
}

// define PUTs job i: an hourly Http POST to the sink, first due at start.
func (r *recurJobs) define(ctx context.Context, i int, start time.Time) error {
	return r.put(ctx, jobKey(i), r.sink.target(i), start)
}

// put PUTs the job k: an hourly Http POST to target, first due at start.
func (r *recurJobs) put(ctx context.Context, k jobs.Key, target string, start time.Time) error {
	body, _ := json.Marshal(map[string]any{"properties": map[string]any{
		"startTime":  start.UTC().Format(time.RFC3339),
		"recurrence": map[string]any{"frequency": "Hour", "interval": 1},
		"action": map[string]any{"type": "Http", "request": map[string]any{
			"uri": target, "method": "POST",
			"headers": map[string]string{"Content-Type": "application/json"},
			"body":    fmt.Sprintf(`{"job":%q}`, k.Job),
		}},
	}})
	return r.api.call(ctx, http.MethodPut, k.JobID(), body, nil)
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

// remove deletes the collections, the writes' too, and with them their
// jobs, each to the end of its operation; a failed try is tried again a
// few times, and one never created is gone already.
func (r *recurJobs) remove(ctx context.Context, n int) error {
	keys := []jobs.Key{writeKey(0), groupKey(0)}
	for i := 0; i < n; i += perCollection {
		keys = append(keys, jobKey(i))
	}
	for _, k := range keys {
		var err error
		for try := range 5 {
			if try > 0 {
				time.Sleep(time.Duration(try) * 5 * time.Second)
			}
			err = r.api.call(ctx, http.MethodDelete, k.CollectionID(), nil, nil)
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
