package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
	"github.com/recurhq/recur/jobs"
)

// perCollection is the job quota of the P20Premium sku.
const perCollection = 1000

// jobKey is the key of job i of the recur phase: jobs 0-999 are in
// collection firing-00, 1000-1999 in firing-01, ...
func jobKey(i int) jobs.Key {
	return jobs.Key{Subscription: "firing", ResourceGroup: "firing",
		Collection: fmt.Sprintf("firing-%02d", i/perCollection), Job: jobName(i)}
}

func jobName(i int) string { return fmt.Sprintf("job-%05d", i) }

// restClient speaks recur's REST API, retrying what a loaded server
// refuses.
type restClient struct{ *recurproc.Client }

// do sends body as JSON to path; any status other than want is an error
// that carries the answer. A loaded server may answer 503 and the calls
// made here are idempotent, so it tries a few times.
func (c *restClient) do(ctx context.Context, method, path string, body any, want ...int) error {
	var err error
	for try := range 5 {
		if try > 0 {
			log.Printf("%s failed, trying again: %v", method, err)
			time.Sleep(time.Duration(try) * 2 * time.Second)
		}
		if err = c.Do(ctx, method, path, body, nil, want...); err == nil || ctx.Err() != nil {
			break
		}
	}
	return err
}

// collections returns the keys of the collections that hold n jobs.
func collections(n int) []jobs.Key {
	var keys []jobs.Key
	for i := 0; i < n; i += perCollection {
		keys = append(keys, jobKey(i).CollectionKey())
	}
	return keys
}

// createJobs creates the collections and the jobs, every -every; job i
// fires at its offset past each period. Without a first minute, start
// times lie in the past, so every job begins at its next slot after it was
// created; with one, every job begins in that minute. It returns the names
// of the jobs it created.
func (f *firing) createJobs(ctx context.Context, n int, first time.Time) ([]string, error) {
	for i, k := range collections(n) {
		body := map[string]any{"location": "local", "properties": map[string]any{
			"sku": map[string]any{"name": "P20Premium"},
			"quota": map[string]any{
				"maxJobCount":   min(perCollection, n-i*perCollection),
				"maxRecurrence": f.maxRecurrence(),
			},
		}}
		if err := f.api.do(ctx, http.MethodPut, k.CollectionID(), body, http.StatusCreated, http.StatusOK); err != nil {
			return nil, err
		}
	}
	base := first
	if base.IsZero() {
		base = time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = jobName(i)
	}
	return parallel(names, func(i int, name string) error {
		props := map[string]any{
			"catchUpWindow": f.cfg.catchUp,
			"startTime":     base.Add(offset(i, n, f.cfg.every)).Format(time.RFC3339),
			"recurrence":    f.recurrence(),
			"action": map[string]any{"type": "Http", "request": map[string]any{
				"uri": f.sink.target("recur", name), "method": "POST",
				"headers": map[string]string{"Content-Type": "application/json"},
				"body":    fmt.Sprintf(`{"job":%q}`, name),
			}},
		}
		return f.api.do(ctx, http.MethodPut, jobKey(i).JobID(), map[string]any{"properties": props}, http.StatusCreated, http.StatusOK)
	})
}

// deleteCollections deletes the collections and, through them, the jobs.
func (f *firing) deleteCollections(ctx context.Context, n int) error {
	for _, k := range collections(n) {
		if err := f.api.do(ctx, http.MethodDelete, k.CollectionID(), nil, http.StatusOK, http.StatusAccepted, http.StatusNoContent); err != nil {
			return err
		}
	}
	return nil
}

// recurrence is every job's: Minute for a minute, else Second.
func (f *firing) recurrence() map[string]any {
	if f.cfg.every == time.Minute {
		return map[string]any{"frequency": "Minute", "interval": 1}
	}
	return map[string]any{"frequency": "Second", "interval": int(f.cfg.every / time.Second)}
}

// maxRecurrence is the collections' quota: as often as the jobs run.
func (f *firing) maxRecurrence() map[string]any {
	if f.cfg.every == time.Minute {
		return map[string]any{"frequency": "Minute", "interval": 1}
	}
	return map[string]any{"frequency": "Second", "interval": 1}
}
