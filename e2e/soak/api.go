package main

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
	"github.com/recurhq/recur/jobs"
)

// key is the soak's collection; its jobs are soak-0000, soak-0001, ...
var key = jobs.Key{Subscription: "soak", ResourceGroup: "soak", Collection: "soak"}

func jobKey(name string) jobs.Key { k := key; k.Job = name; return k }

// restClient speaks recur's REST API, with the soak's own calls.
type restClient struct{ *recurproc.Client }

func newClient(base string) *restClient { return &restClient{recurproc.NewClient(base)} }

// collectionPath is the ARM path of the soak's collection.
func collectionPath() string { return key.CollectionID() }

// putCollection creates the collection with room for n jobs that run
// every minute.
func (c *restClient) putCollection(ctx context.Context, n int) error {
	body := map[string]any{"location": "local", "properties": map[string]any{
		"sku": map[string]any{"name": "P20Premium"},
		"quota": map[string]any{
			"maxJobCount":   n,
			"maxRecurrence": map[string]any{"frequency": "Minute", "interval": 1},
		},
	}}
	return c.Do(ctx, http.MethodPut, collectionPath(), body, nil, http.StatusCreated, http.StatusOK)
}

// jobView is the part of a job the soak reads back.
type jobView struct {
	Properties struct {
		State  string      `json:"state"`
		Status jobs.Status `json:"status"`
	} `json:"properties"`
}

// putJob creates a job from its properties and returns what recur
// answered. A loaded server may answer 503; PUT is idempotent, so it tries
// again a few times.
func (c *restClient) putJob(ctx context.Context, name string, props map[string]any) (jobView, error) {
	var v jobView
	var err error
	for try := range 5 {
		if try > 0 {
			log.Printf("PUT job %s failed, trying again: %v", name, err)
			time.Sleep(time.Duration(try) * 2 * time.Second)
		}
		err = c.Do(ctx, http.MethodPut, jobKey(name).JobID(), map[string]any{"properties": props}, &v, http.StatusCreated, http.StatusOK)
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	return v, err
}

// getJob reads a job's state and status.
func (c *restClient) getJob(ctx context.Context, name string) (jobView, error) {
	var v jobView
	err := c.Do(ctx, http.MethodGet, jobKey(name).JobID(), nil, &v, http.StatusOK)
	return v, err
}

// history reads a job's newest history rows, up to the API's largest
// page.
func (c *restClient) history(ctx context.Context, name string) ([]jobs.HistoryRow, error) {
	var page struct {
		Value []struct {
			Properties jobs.HistoryRow `json:"properties"`
		} `json:"value"`
	}
	if err := c.Do(ctx, http.MethodGet, jobKey(name).JobID()+"/history", nil, &page, http.StatusOK); err != nil {
		return nil, err
	}
	rows := make([]jobs.HistoryRow, len(page.Value))
	for i, v := range page.Value {
		rows[i] = v.Properties
	}
	return rows, nil
}

// disableCollection disables the collection and, through it, every job.
// Disabling is idempotent, so a failure is tried again a few times.
func (c *restClient) disableCollection(ctx context.Context) error {
	var err error
	for try := range 3 {
		if try > 0 {
			log.Printf("disabling the collection failed, trying again: %v", err)
			time.Sleep(5 * time.Second)
		}
		err = c.Do(ctx, http.MethodPost, collectionPath()+"/disable", nil, nil, http.StatusOK, http.StatusNoContent, http.StatusAccepted)
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	return err
}
