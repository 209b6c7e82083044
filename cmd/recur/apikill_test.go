package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/internal/syncbuf"
	"github.com/recurhq/recur/jobs"
)

// TestKillingTheAPIKeepsJobsWhole sends PUT, PATCH and DELETE of 30 job
// names, 16 at a time (at least 200 writes, and until the last kill), to
// a `recur api` process that is killed with SIGKILL at random moments and
// started again, while a `recur worker` runs the workflows. Whatever
// moment the API dies, every job is either whole (its definition, as some
// PUT or PATCH gave it) or absent, and its collection holds exactly the
// jobs that exist, within its quota of 20.
func TestKillingTheAPIKeepsJobsWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it kills the API three times among 200 writes (about 25 s)")
	}
	t.Parallel() // it waits on the processes it kills: beside the others (TestMain)
	const names, ops, concurrency, quota = 30, 200, 16, 20
	bin := buildRecur(t)
	srv := startCluster(t, t.TempDir(), freePort(t))
	defer srv.Stop()
	w := &devProcess{output: &syncbuf.Buffer{}, done: make(chan error, 1)}
	w.startWorker(t, bin, srv.FrontendAddress())

	var mu sync.Mutex
	api := startRole(t, bin, "api", srv.FrontendAddress())
	current := func() *devProcess { mu.Lock(); defer mu.Unlock(); return api }
	code, body := api.do(t, http.MethodPut, crashCollection, map[string]any{"properties": map[string]any{
		"sku": map[string]any{"name": "Standard"}, "quota": map[string]any{"maxJobCount": quota}}})
	require.Equal(t, http.StatusCreated, code, body)

	// The killer: three times, at a random moment, SIGKILL and start
	// again. The writes go on until it has killed all three times: they
	// are fast enough that a fixed number of them could end before the
	// first kill.
	const kills = 3
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		for range kills {
			time.Sleep(time.Duration(200+rand.IntN(1500)) * time.Millisecond)
			p := current()
			_ = p.cmd.Process.Kill()
			<-p.done
			t.Logf("killed the API at %s", time.Now().Format(time.TimeOnly+".000"))
			next := startRole(t, bin, "api", srv.FrontendAddress())
			mu.Lock()
			api = next
			mu.Unlock()
		}
	}()

	client := &http.Client{Timeout: 30 * time.Second}
	var answered, cut int
	var wg sync.WaitGroup
	work := make(chan int)
	for range concurrency {
		wg.Go(func() {
			for i := range work {
				// A write the API died under (or refused while it
				// started) is sent again, as a client would.
				for try := 0; try < 50; try++ {
					status, err := apiKillOp(client, current().api, i, names)
					mu.Lock()
					if err == nil && status < 500 {
						answered++
						mu.Unlock()
						break
					}
					cut++
					mu.Unlock()
					time.Sleep(100 * time.Millisecond)
				}
			}
		})
	}
	sent := 0
	for killing := true; killing || sent < ops; sent++ {
		select {
		case <-killerDone:
			killing = false
		default:
		}
		work <- sent
	}
	close(work)
	wg.Wait()
	t.Logf("%d writes answered across %d kills; %d tries cut off by a kill or refused while the API started", answered, kills, cut)
	require.Equal(t, sent, answered, "every write was answered in the end")

	// Whatever each write became, the jobs are whole or absent, and the
	// collection holds exactly those that exist.
	tc, err := clientFor(t, srv.FrontendAddress())
	require.NoError(t, err)
	defer tc.Close()
	p := current()
	var exist, members []string
	whole := assert.EventuallyWithT(t, func(c *assert.CollectT) {
		exist, members = nil, nil
		for n := range names {
			name := fmt.Sprintf("k%02d", n)
			code, body, err := p.get(crashCollection + "/jobs/" + name)
			if !assert.NoError(c, err) {
				return
			}
			switch code {
			case http.StatusOK:
				exist = append(exist, name)
				assert.Equal(c, "http://127.0.0.1:9/"+name, lookup(body, "properties", "action", "request", "uri"), "%s is whole", name)
			case http.StatusNotFound:
			default:
				assert.Fail(c, "unexpected status", "%s: %d %v", name, code, body)
			}
		}
		m, err := collectionJobs(tc)
		if !assert.NoError(c, err) {
			return
		}
		members = m
		assert.Equal(c, exist, members, "the collection holds exactly the jobs that exist")
		assert.LessOrEqual(c, len(members), quota)
	}, 2*time.Minute, time.Second)
	if !whole {
		var differ []string
		for _, name := range append(slices.Clone(exist), members...) {
			if slices.Contains(exist, name) != slices.Contains(members, name) && !slices.Contains(differ, name) {
				differ = append(differ, name)
			}
		}
		logTimelines(t, tc, differ)
	}
}

// apiKillOp sends write i of the test: a PUT, PATCH or DELETE of one of
// the names, each job's target naming it.
func apiKillOp(c *http.Client, base string, i, names int) (int, error) {
	name := fmt.Sprintf("k%02d", rand.IntN(names))
	url := base + crashCollection + "/jobs/" + name + "?api-version=2016-03-01"
	var method string
	var body any
	switch i % 4 {
	case 0, 1:
		method, body = http.MethodPut, map[string]any{"properties": map[string]any{
			"startTime":  time.Now().UTC().Add(time.Hour).Format(time.RFC3339),
			"action":     map[string]any{"type": "Http", "request": map[string]any{"uri": "http://127.0.0.1:9/" + name, "method": "GET"}},
			"recurrence": map[string]any{"frequency": "Hour", "interval": 1 + i%5},
		}}
	case 2:
		method, body = http.MethodPatch, map[string]any{"properties": map[string]any{"recurrence": map[string]any{"interval": 2}}}
	default:
		method = http.MethodDelete
	}
	data, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	if body == nil {
		data = nil
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// clientFor connects to the test cluster's namespace, reading payloads
// with the key the test's processes write them with.
func clientFor(t *testing.T, address string) (client.Client, error) {
	keys, err := codec.Load(testKeyFile(t))
	if err != nil {
		return nil, err
	}
	return client.Dial(client.Options{HostPort: address, Namespace: "recur-cluster", DataConverter: codec.DataConverter(keys)})
}

// lookup returns the value at the keys' path in a decoded JSON object,
// nil when there is none.
func lookup(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// collectionJobs returns the names the test collection's workflow holds,
// sorted.
func collectionJobs(c client.Client) ([]string, error) {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(ctx, k.CollectionWorkflowID(), "", jobs.QueryCollection)
	if err != nil {
		return nil, err
	}
	var view jobs.CollectionView
	if err := v.Get(&view); err != nil {
		return nil, err
	}
	slices.Sort(view.Jobs)
	return view.Jobs, nil
}
