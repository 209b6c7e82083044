package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
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

// httpError is an answer that is not 2xx.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// call sends body (nil for none) as JSON to target, a path of the API or a
// full URL (a nextLink), and decodes a 2xx answer into out (nil to drop
// it); a 202 with a Location is followed to its end. An answer that is
// not 2xx is an *httpError.
func (a *api) call(ctx context.Context, method, target string, body []byte, out any) error {
	return a.send(ctx, method, target, body, out, true)
}

// answer is call without following a 202: the write's own answer, not
// the end of what it started.
func (a *api) answer(ctx context.Context, method, target string, body []byte) error {
	return a.send(ctx, method, target, body, nil, false)
}

func (a *api) send(ctx context.Context, method, target string, body []byte, out any, follow bool) error {
	if !strings.HasPrefix(target, "http") {
		target = a.base + target + "?" + apiVersion
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, target, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return fmt.Errorf("%s %s: read the answer: %w", method, target, err)
	case resp.StatusCode/100 != 2:
		return &httpError{status: resp.StatusCode, msg: fmt.Sprintf("%s %s: %s: %.300s", method, target, resp.Status, data)}
	case follow && resp.StatusCode == http.StatusAccepted && resp.Header.Get("Location") != "":
		// A long-running operation (a collection's DELETE): its end is
		// the answer.
		pause, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		if err != nil || pause < 1 {
			pause = 1
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(pause) * time.Second):
		}
		return a.call(ctx, http.MethodGet, resp.Header.Get("Location"), nil, out)
	case out != nil:
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode the answer: %w", method, target, err)
		}
	}
	return nil
}
