package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"time"

	"github.com/recurhq/recur/jobs"
)

// key is the soak's collection; its jobs are soak-0000, soak-0001, ...
var key = jobs.Key{Subscription: "soak", ResourceGroup: "soak", Collection: "soak"}

func jobKey(name string) jobs.Key { k := key; k.Job = name; return k }

// restClient speaks recur's ARM-shaped REST API.
type restClient struct {
	base string
	http *http.Client
}

func newClient(base string) *restClient {
	return &restClient{base: base, http: &http.Client{Timeout: time.Minute}}
}

// do sends body as JSON to path and decodes the answer into out; any
// status other than want is an error that carries the answer.
func (c *restClient) do(ctx context.Context, method, path string, body, out any, want ...int) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path+"?api-version=2016-03-01", rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	for _, w := range want {
		if resp.StatusCode == w {
			if out == nil || len(data) == 0 {
				return nil
			}
			return json.Unmarshal(data, out)
		}
	}
	return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, data)
}

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
	return c.do(ctx, http.MethodPut, collectionPath(), body, nil, http.StatusCreated, http.StatusOK)
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
		err = c.do(ctx, http.MethodPut, jobKey(name).JobID(), map[string]any{"properties": props}, &v, http.StatusCreated, http.StatusOK)
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	return v, err
}

// getJob reads a job's state and status.
func (c *restClient) getJob(ctx context.Context, name string) (jobView, error) {
	var v jobView
	err := c.do(ctx, http.MethodGet, jobKey(name).JobID(), nil, &v, http.StatusOK)
	return v, err
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
		err = c.do(ctx, http.MethodPost, collectionPath()+"/disable", nil, nil, http.StatusOK, http.StatusNoContent, http.StatusAccepted)
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	return err
}
