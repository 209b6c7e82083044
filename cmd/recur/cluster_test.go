package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/recurhq/recur/internal/syncbuf"
	"github.com/recurhq/recur/internal/temporalcluster"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/temporalserver"
)

// TestReadyMeansUsableOnACluster runs the binary against a fresh namespace
// of a Temporal cluster on PostgreSQL, whose frontend learns of recur's
// search attributes at its namespace cache's next refresh, up to 10 s
// after they are registered and listed. From start on, a client that PUTs
// a collection every few milliseconds meets 503 with Retry-After and then
// 201, never a 500; once /readyz has answered 200, the next PUT succeeds.
// Either `recur serve` registers the attributes itself, or an operator
// registered them by hand a moment before `recur worker` and `recur api`
// start, which then find nothing to register and nothing to wait for.
func TestReadyMeansUsableOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it starts PostgreSQL, a Temporal server and recur")
	}
	bin := buildRecur(t)
	for name, tc := range map[string]struct {
		byHand bool
		roles  []string
	}{
		"serve":                   {false, []string{"serve"}},
		"worker and api, by hand": {true, []string{"worker", "api"}},
	} {
		t.Run(name, func(t *testing.T) {
			c := temporalcluster.Start(t)
			if tc.byHand {
				registerByHand(t, c)
			}
			cluster := []string{"--temporal-address", c.FrontendAddress(), "--namespace", c.Namespace(),
				"--insecure-no-encryption", "--log-format", "text"}
			var api *devProcess
			for _, role := range tc.roles {
				p := &devProcess{output: &syncbuf.Buffer{}, done: make(chan error, 1)}
				args := append([]string{role}, cluster...)
				if role != "worker" {
					port := freePort(t)
					p.api = "http://127.0.0.1:" + strconv.Itoa(port)
					args = append(args, "--http-addr", "127.0.0.1:"+strconv.Itoa(port))
					api = p
				}
				p.launch(t, bin, args...)
			}
			putUntilCreated(t, api)
		})
	}
}

// registerByHand registers recur's search attributes as an operator
// would, and returns once they are listed.
func registerByHand(t *testing.T, c *temporalcluster.Cluster) {
	t.Helper()
	cl, err := client.Dial(client.Options{HostPort: c.FrontendAddress(), Namespace: c.Namespace(),
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	require.NoError(t, temporalserver.RegisterSearchAttributes(ctx, cl, c.Namespace(), jobs.SearchAttributeTypes()))
}

// putUntilCreated asks /readyz and PUTs a new collection in turn until a
// PUT creates one, and fails on any answer but 503 with Retry-After before
// that, or on a failed PUT after /readyz said 200.
func putUntilCreated(t *testing.T, p *devProcess) {
	t.Helper()
	begin := time.Now()
	var unavailable int
	var wrong string // the first answer that breaks the rules
	i := 0
	require.Eventually(t, func() bool {
		i++
		ready := statusOfGet(p.api+"/readyz") == http.StatusOK
		status, retryAfter := putCollection(p.api + fmt.Sprintf("/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c%d", i))
		switch {
		case status == http.StatusCreated:
			return true
		case ready:
			wrong = fmt.Sprintf("PUT answered %d after /readyz answered 200", status)
		case status == http.StatusServiceUnavailable && retryAfter == "":
			wrong = "PUT answered 503 without Retry-After"
		case status == http.StatusServiceUnavailable:
			unavailable++
			return false
		case status == 0:
			// Not listening yet: the process is still connecting to Temporal.
			return false
		default:
			wrong = fmt.Sprintf("PUT answered %d before /readyz answered 200; want 503", status)
		}
		return true
	}, 90*time.Second, 20*time.Millisecond, "no PUT succeeded:\n%s", p.output)
	require.Empty(t, wrong, "recur's output:\n%s", p.output)
	t.Logf("created after %v and %d answers of 503", time.Since(begin).Round(time.Millisecond), unavailable)
}

// statusOfGet returns the status of GET url, 0 when it has none.
func statusOfGet(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// putCollection PUTs a Standard collection at url and returns the status
// (0 when there is none) and the Retry-After header.
func putCollection(url string) (int, string) {
	req, err := http.NewRequest(http.MethodPut, url+"?api-version=2016-03-01",
		strings.NewReader(`{"location":"westeurope","properties":{"sku":{"name":"Standard"}}}`))
	if err != nil {
		return 0, ""
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, ""
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}
