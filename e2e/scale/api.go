package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// apiVersion is the only version recur serves.
const apiVersion = "api-version=2016-03-01"

// api sends timed requests to recur's REST API.
type api struct {
	base string
	http *http.Client
}

func newAPI(base string, conns int) *api {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = conns
	return &api{base: base, http: &http.Client{Timeout: time.Minute, Transport: t}}
}

// call sends body (nil for none) as JSON to target, a path of the API or a
// full URL (a nextLink), and decodes a 2xx answer into out (nil to drop
// it). It returns the status, 0 when no answer came, and the time to the
// whole answer; err is set for a missing answer or one that is not 2xx.
func (a *api) call(ctx context.Context, method, target string, body []byte, out any) (int, time.Duration, error) {
	if !strings.HasPrefix(target, "http") {
		target = a.base + target + "?" + apiVersion
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	started := time.Now()
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, time.Since(started), fmt.Errorf("%s %s: %w", method, target, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	took := time.Since(started)
	switch {
	case err != nil:
		return resp.StatusCode, took, fmt.Errorf("%s %s: read the answer: %w", method, target, err)
	case resp.StatusCode/100 != 2:
		return resp.StatusCode, took, fmt.Errorf("%s %s: %s: %.300s", method, target, resp.Status, data)
	case out != nil:
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, took, fmt.Errorf("%s %s: decode the answer: %w", method, target, err)
		}
	}
	return resp.StatusCode, took, nil
}
