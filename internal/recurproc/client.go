package recurproc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Client speaks recur's ARM-shaped REST API.
type Client struct {
	base string
	http *http.Client
}

// NewClient returns a client of the API at base (Process.API).
func NewClient(base string) *Client {
	return &Client{base: base, http: &http.Client{Timeout: time.Minute}}
}

// Do sends body (nil for none) as JSON to path and decodes the answer into
// out (nil to drop it); any status other than want is an error that
// carries the answer.
func (c *Client) Do(ctx context.Context, method, path string, body, out any, want ...int) error {
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
