// Package stall runs the real `recur dev` through the creations that once
// wedged job names: a process stopped while PUTs are in flight, and more
// concurrent PUTs than a collection has room for.
package stall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/recurproc"
)

const collection = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"

// spinning are what recur logs when a workflow's loop turns without
// blocking (the SDK's deadlock detector), or when the job's loop meets an
// occurrence it cannot move past (workflows.msgNoProgress).
var spinning = []string{"TMPRL1101", "Potential deadlock detected", "planned an occurrence that is not after the one before"}

var client = &http.Client{Timeout: 3 * time.Minute}

type recur struct {
	*recurproc.Process
	t *testing.T
}

// The recur binary the tests build once, into binDir.
var (
	binDir string
	build  sync.Once
	bin    string
	built  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "recur-stall")
	if err != nil {
		panic(err)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// start starts `recur dev` for the test, built once for all of them.
func start(t *testing.T) *recur {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: it builds and runs the recur binary")
	}
	build.Do(func() { bin, built = recurproc.Build(binDir) })
	require.NoError(t, built)
	dir := t.TempDir()
	p, err := recurproc.Start(bin, filepath.Join(dir, "data"), filepath.Join(dir, "recur.log"), false)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = p.Stop()
		if t.Failed() {
			warn, errs := p.LogLevels()
			t.Logf("recur's log: warnings %v, errors %v", warn, errs)
		}
	})
	return &recur{Process: p, t: t}
}

// do sends a request and returns its status and body.
func (r *recur) do(method, path string, body any) (int, string) {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		require.NoError(r.t, err)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, r.API+path+"?api-version=2016-03-01", rd)
	require.NoError(r.t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// putCollection creates the collection with room for maxJobs jobs.
func (r *recur) putCollection(sku string, maxJobs int) {
	r.t.Helper()
	code, body := r.do(http.MethodPut, collection, map[string]any{"location": "westus", "properties": map[string]any{
		"sku": map[string]any{"name": sku}, "quota": map[string]any{"maxJobCount": maxJobs,
			"maxRecurrence": map[string]any{"frequency": "Hour", "interval": 1}}}})
	require.Equal(r.t, http.StatusCreated, code, body)
}

// hourly is a job that first runs in 2030, every hour.
var hourly = map[string]any{"properties": map[string]any{
	"startTime":  "2030-01-01T00:00:00Z",
	"action":     map[string]any{"type": "Http", "request": map[string]any{"uri": "https://example.com/", "method": "GET"}},
	"recurrence": map[string]any{"frequency": "Hour", "interval": 1},
}}

// putAll PUTs the jobs named, all at once, and returns each one's status
// and body.
func (r *recur) putAll(names []string) (codes []int, bodies []string) {
	codes, bodies = make([]int, len(names)), make([]string, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { codes[i], bodies[i] = r.do(http.MethodPut, collection+"/jobs/"+name, hourly) })
	}
	wg.Wait()
	return codes, bodies
}

// requireListed waits until the collection's job list, which Temporal's
// visibility serves a moment behind the writes, names exactly the jobs
// given, and checks that each answers GET.
func (r *recur) requireListed(want []string) {
	r.t.Helper()
	require.EventuallyWithT(r.t, func(c *assert.CollectT) {
		code, body := r.do(http.MethodGet, collection+"/jobs", nil)
		if !assert.Equal(c, http.StatusOK, code, body) {
			return
		}
		var list struct {
			Value []struct{ Name string }
		}
		if !assert.NoError(c, json.Unmarshal([]byte(body), &list)) {
			return
		}
		var names []string
		for _, j := range list.Value {
			names = append(names, j.Name[strings.LastIndex(j.Name, "/")+1:])
		}
		assert.ElementsMatch(c, want, names)
	}, 30*time.Second, 250*time.Millisecond)
	for _, name := range want {
		code, body := r.do(http.MethodGet, collection+"/jobs/"+name, nil)
		require.Equal(r.t, http.StatusOK, code, "GET %s: %s", name, body)
	}
}

// requireNoSpin fails if recur's log says a workflow spun.
func (r *recur) requireNoSpin() {
	r.t.Helper()
	data, err := os.ReadFile(r.LogPath)
	require.NoError(r.t, err)
	for _, s := range spinning {
		require.NotContains(r.t, string(data), s)
	}
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%03d", prefix, i)
	}
	return out
}

// TestAStoppedRecurWedgesNoJobName stops recur (SIGSTOP) 0.3 s into 30
// concurrent creations and lets it go on 70 s later, past a new job's
// one-minute grace. Whatever those PUTs answered, no workflow spins, every
// name takes a new PUT, and the collection counts exactly the jobs that
// exist: with room for 30, all 30 fit, a 31st does not, and deleting five
// makes room for five others.
func TestAStoppedRecurWedgesNoJobName(t *testing.T) {
	r := start(t)
	r.putCollection("Standard", 30)
	jobs := names("j", 30)
	var codes []int
	var bodies []string
	done := make(chan struct{})
	go func() { codes, bodies = r.putAll(jobs); close(done) }()
	time.Sleep(300 * time.Millisecond) // the creations are in flight
	require.NoError(t, syscall.Kill(r.Pid(), syscall.SIGSTOP))
	time.Sleep(70 * time.Second) // the scenario: recur stopped past the grace
	require.NoError(t, syscall.Kill(r.Pid(), syscall.SIGCONT))
	<-done
	for i, code := range codes {
		t.Logf("PUT %s across the stop: %d %.200s", jobs[i], code, bodies[i])
	}

	codes, bodies = r.putAll(jobs)
	for i, code := range codes {
		require.Contains(t, []int{http.StatusCreated, http.StatusOK}, code, "PUT %s again: %s", jobs[i], bodies[i])
	}
	r.requireListed(jobs)
	code, body := r.do(http.MethodPut, collection+"/jobs/one-too-many", hourly)
	require.Equal(t, http.StatusConflict, code, body)
	require.Contains(t, body, "QuotaExceeded")

	others := r.requireRoomAfterDeleting(jobs[:5], 5)
	r.requireListed(append(others, jobs[5:]...))
	r.requireNoSpin()
}

// TestConcurrentPutsFillAFiveJobCollectionExactly sends 200 PUTs of new
// jobs at once into a collection with room for five: at most five are
// created, every one refused for the quota leaves no trace, nothing
// spins, and once the jobs that exist are deleted, five others fit: no
// slot was lost. On a machine too busy to answer every PUT within the
// API's 30 s (503), a job whose PUT timed out may still be created, or
// give up its slot at its one-minute grace; with no 503, exactly five are
// created.
func TestConcurrentPutsFillAFiveJobCollectionExactly(t *testing.T) {
	r := start(t)
	r.putCollection("Free", 5)
	jobs := names("j", 200)
	sent := time.Now()
	codes, bodies := r.putAll(jobs)
	var created, refused, timedOut []string
	for i, code := range codes {
		switch code {
		case http.StatusCreated:
			created = append(created, jobs[i])
		case http.StatusConflict:
			require.Contains(t, bodies[i], "QuotaExceeded", jobs[i])
			refused = append(refused, jobs[i])
		case http.StatusServiceUnavailable:
			timedOut = append(timedOut, jobs[i])
		default:
			t.Fatalf("PUT %s: %d %s", jobs[i], code, bodies[i])
		}
	}
	t.Logf("%d created, %d refused, %d timed out (503)", len(created), len(refused), len(timedOut))
	exist := created
	if len(timedOut) == 0 {
		require.Len(t, created, 5)
	} else {
		// Every creation still in flight has ended once the grace has.
		time.Sleep(time.Until(sent.Add(70 * time.Second)))
		exist = r.existing(timedOut, created)
		require.LessOrEqual(t, len(exist), 5)
	}
	r.requireListed(exist)
	for _, name := range refused {
		code, body := r.do(http.MethodGet, collection+"/jobs/"+name, nil)
		require.Equal(t, http.StatusNotFound, code, "a refused job %s is not there: %s", name, body)
	}
	r.requireListed(r.requireRoomAfterDeleting(exist, 5))
	r.requireNoSpin()
}

// requireRoomAfterDeleting deletes the jobs named, then creates room
// others in one burst, each answering 201: the collection counted exactly
// the jobs it held. It returns the others' names.
func (r *recur) requireRoomAfterDeleting(deleted []string, room int) []string {
	r.t.Helper()
	for _, name := range deleted {
		code, body := r.do(http.MethodDelete, collection+"/jobs/"+name, nil)
		require.Equal(r.t, http.StatusOK, code, body)
	}
	others := names("k", room)
	codes, bodies := r.putAll(others)
	for i, code := range codes {
		require.Equal(r.t, http.StatusCreated, code, "PUT %s: %s", others[i], bodies[i])
	}
	return others
}

// existing returns the jobs created, and those of maybe that exist.
func (r *recur) existing(maybe, created []string) []string {
	r.t.Helper()
	out := append([]string(nil), created...)
	for _, name := range maybe {
		switch code, body := r.do(http.MethodGet, collection+"/jobs/"+name, nil); code {
		case http.StatusOK:
			out = append(out, name)
		case http.StatusNotFound:
		default:
			r.t.Fatalf("GET %s: %d %s", name, code, body)
		}
	}
	return out
}
