// Command writes measures how long writes take while actions run against
// a slow target (issue 35, goal 1). It starts `recur dev` (fresh data
// directory, free ports) and a local HTTP target that answers each
// request after -delay, or with -silent never (it holds each request
// until the client gives up: the jobs' action timeout, -timeout, 10m by
// default then, keeps each attempt in flight for the whole run). Each job
// is an HTTP POST, retryType None, that never fires on its own.
//
// First one job: it runs the job now, and while an action is in flight
// times -rounds rounds of PATCH state Disabled, PATCH state Enabled, POST
// run, GET and a PUT that redefines the job, then one DELETE. Then a
// collection of -jobs jobs (100 by default), each run now: it times
// -rounds rounds of the collection's PUT (new tags), PATCH (the quota's
// maxJobCount), POST disable, POST enable and GET, then one DELETE of the
// collection, timed to its answer (202 with a Location when its jobs take
// longer than the operation wait) and apart until its GET is 404. Each
// write begins with the actions in flight, the job's or all of the
// collection's: it runs now, untimed, each job whose action has ended and
// waits for the target to get them. Then, on the same server, it times
// the job's writes of a native Schedule whose workflow makes the same POST
// (pause, unpause, trigger, describe, update, delete), each begun with one
// of its actions in flight; Schedules have no collection, and the
// collection's rows say so. It prints p50, p99 and max of each write, how
// many began without the expected actions in flight, and how many were
// answered 202.
//
// It is a bench command, not a test; run it from the repository root:
//
//	go run ./e2e/writes
//	go run ./e2e/writes -bin /tmp/recur-la -rounds 20 -delay 50s
//	go run ./e2e/writes -silent -timeout 10m -jobs 100
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/internal/peer"
	"github.com/recurhq/recur/internal/recurproc"
	"github.com/recurhq/recur/jobs"
)

type config struct {
	bin     string
	rounds  int
	jobs    int
	delay   time.Duration
	silent  bool
	timeout time.Duration
	keep    bool
}

func main() {
	var c config
	flag.StringVar(&c.bin, "bin", "", recurproc.BinUsage)
	flag.IntVar(&c.rounds, "rounds", 20, "rounds of writes: of the job, each PATCH Disabled, PATCH Enabled, POST run, GET and PUT; of the collection, each PUT, PATCH, disable, enable and GET")
	flag.IntVar(&c.jobs, "jobs", 100, "jobs of the collection whose writes are timed, each with its action in flight")
	flag.DurationVar(&c.delay, "delay", 50*time.Second, "how long the target takes to answer each request")
	flag.BoolVar(&c.silent, "silent", false, "the target never answers: it holds each request until the client gives up (-delay is unused)")
	flag.DurationVar(&c.timeout, "timeout", 0, "the jobs' action timeout, whole seconds up to 10m; 0 is the server's default (60s), or 10m with -silent")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (binary, data, recur.log)")
	flag.Parse()
	if c.rounds < 1 || c.delay <= 0 {
		fmt.Fprintln(os.Stderr, "writes: -rounds and -delay must be positive")
		os.Exit(2)
	}
	if c.jobs < 1 || c.jobs > maxJobs {
		// The collection's quota is -jobs + 2 at most, within P20Premium's.
		fmt.Fprintf(os.Stderr, "writes: -jobs must be from 1 to %d\n", maxJobs)
		os.Exit(2)
	}
	if c.timeout == 0 && c.silent {
		c.timeout = jobs.MaxTimeout
	}
	if c.timeout != 0 && (c.timeout < time.Second || c.timeout > jobs.MaxTimeout || c.timeout%time.Second != 0) {
		fmt.Fprintf(os.Stderr, "writes: -timeout must be whole seconds from 1s to %s\n", jobs.MaxTimeout)
		os.Exit(2)
	}
	recurproc.Main("writes", func(ctx context.Context) error { return run(ctx, c) })
}

// maxJobs is P20Premium's quota less the two a PATCH of the collection's
// quota goes past -jobs.
const maxJobs = 998

// answers says what the target does with a request and, of the jobs'
// actions, how long one is allowed: the tables' titles.
func (c config) answers(timeout bool) string {
	s := fmt.Sprintf("target answers after %s", c.delay)
	if c.silent {
		s = "target never answers"
	}
	switch {
	case !timeout:
	case c.timeout > 0:
		s += ", action timeout " + c.timeout.String()
	default:
		s += ", the server's default action timeout"
	}
	return s
}

// target holds every request for its delay, or until the client gives up
// when silent, and counts the requests that arrived and those it holds by
// path: each job, and the Schedule, posts to a path of its own, so that
// one's actions are never taken for another's.
type target struct {
	url     string // without a path
	delay   time.Duration
	silent  bool
	mu      sync.Mutex
	arrived map[string]int
	held    map[string]int
	changed chan struct{} // closed, and replaced, at each arrival
	close   func()
}

func startTarget(delay time.Duration, silent bool) (*target, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &target{url: "http://" + ln.Addr().String(), delay: delay, silent: silent,
		arrived: map[string]int{}, held: map[string]int{}, changed: make(chan struct{})}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		// The server notices a client that gives up (a run cancelled, an
		// attempt past its timeout) only once the body has been read.
		_, _ = io.Copy(io.Discard, r.Body)
		t.mu.Lock()
		t.arrived[path]++
		t.held[path]++
		close(t.changed)
		t.changed = make(chan struct{})
		t.mu.Unlock()
		defer func() {
			t.mu.Lock()
			t.held[path]--
			t.mu.Unlock()
		}()
		var answer <-chan time.Time // never, when silent
		if !t.silent {
			answer = time.After(t.delay)
		}
		select {
		case <-answer:
			w.WriteHeader(http.StatusOK)
		case <-r.Context().Done():
		}
	})}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("target stopped: %v", err)
		}
	}()
	// Close drops the connections of the requests it holds as well.
	t.close = func() { _ = srv.Close() }
	return t, nil
}

// counts returns the arrivals and the requests held now at each of paths.
func (t *target) counts(paths []string) (arrived, held []int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range paths {
		arrived = append(arrived, t.arrived[p])
		held = append(held, t.held[p])
	}
	return arrived, held
}

// holding says whether the target holds a request of each of paths.
func (t *target) holding(paths ...string) bool {
	_, held := t.counts(paths)
	return !slices.Contains(held, 0)
}

// await waits until done says yes of the counts at paths, checking at
// each arrival and every second (a request may end without one).
func (t *target) await(ctx context.Context, paths []string, limit time.Duration, done func(arrived, held []int) bool) error {
	deadline := time.After(limit)
	for {
		t.mu.Lock()
		changed := t.changed
		t.mu.Unlock()
		if done(t.counts(paths)) {
			return nil
		}
		select {
		case <-changed:
		case <-time.After(time.Second):
		case <-deadline:
			return fmt.Errorf("not within %s", limit)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

var (
	key = jobs.Key{Subscription: "writes", ResourceGroup: "writes", Collection: "writes", Job: "slow"}
	// many is the collection of -jobs jobs, many-0001 and on.
	many = jobs.Key{Subscription: "writes", ResourceGroup: "writes", Collection: "many"}
)

func run(ctx context.Context, c config) error {
	work, remove, err := recurproc.WorkDir("recur-writes-", c.keep)
	if err != nil {
		return err
	}
	defer remove()
	bin, err := recurproc.Binary(c.bin, work)
	if err != nil {
		return err
	}
	tg, err := startTarget(c.delay, c.silent)
	if err != nil {
		return err
	}
	defer tg.close()
	d, err := recurproc.Deploy(ctx, bin, work, nil, false)
	if err != nil {
		return err
	}
	defer d.Close()
	api := recurproc.NewClient(d.API)
	if err := api.Do(ctx, http.MethodPut, key.CollectionID(), map[string]any{"location": "local", "properties": map[string]any{
		"sku":   map[string]any{"name": "P20Premium"},
		"quota": map[string]any{"maxJobCount": 10, "maxRecurrence": map[string]any{"frequency": "Minute", "interval": 1}},
	}}, nil, http.StatusCreated, http.StatusOK); err != nil {
		return err
	}
	slow := "/job/" + key.Job
	if err := api.Do(ctx, http.MethodPut, key.JobID(), definition(tg.url+slow, 0, c.timeout), nil, http.StatusCreated); err != nil {
		return err
	}
	b := newBench(tg)
	b.api, b.base, b.http = api, d.API, &http.Client{Timeout: time.Minute}
	b.expected = func() bool { return tg.holding(slow) }
	log.Printf("created the job; %d rounds of writes, %s", c.rounds, c.answers(true))
	started := time.Now()
	for r := range c.rounds {
		for _, w := range []struct {
			name, method, path string
			body               any
		}{
			{"PATCH state Disabled", http.MethodPatch, key.JobID(), map[string]any{"properties": map[string]any{"state": "Disabled"}}},
			{"PATCH state Enabled", http.MethodPatch, key.JobID(), map[string]any{"properties": map[string]any{"state": "Enabled"}}},
			{"POST run", http.MethodPost, key.JobID() + "/run", nil},
			{"GET", http.MethodGet, key.JobID(), nil},
			{"PUT redefinition", http.MethodPut, key.JobID(), definition(tg.url+slow, r+1, c.timeout)},
		} {
			if err := b.inFlight(ctx, []jobs.Key{key}, []string{slow}); err != nil {
				return err
			}
			if err := b.time(ctx, w.name, w.method, w.path, w.body); err != nil {
				return err
			}
		}
		log.Printf("round %d done after %s", r+1, time.Since(started).Round(time.Second))
	}
	if err := b.inFlight(ctx, []jobs.Key{key}, []string{slow}); err != nil {
		return err
	}
	if err := b.time(ctx, "DELETE", http.MethodDelete, key.JobID(), nil); err != nil {
		return err
	}
	if err := collection(ctx, c, b); err != nil {
		return err
	}
	b.print(c.answers(true), bin, fmt.Sprintf("a job whose action is in flight, then to a collection of %d jobs each with its action in flight", c.jobs))
	fmt.Printf("\ncollection rows: begun with no action in flight counts writes begun with fewer than all %d of its jobs' actions in flight.\n", c.jobs)
	if err := schedules(ctx, c, d, tg); err != nil {
		return err
	}
	return d.Stop()
}

// collection times the writes of a collection of c.jobs jobs while every
// job has an action in flight: rounds of PUT (new tags), PATCH (the
// quota's maxJobCount), disable, enable and GET, then one DELETE, timed to
// its answer (a 202 when the jobs take longer than the operation wait),
// and apart the time until the collection's GET is 404. Before each write
// it runs now, untimed, each job whose action has ended, and waits until
// the target has them all.
func collection(ctx context.Context, c config, b *bench) error {
	define := func(tags map[string]string) map[string]any {
		return map[string]any{"location": "local", "tags": tags, "properties": map[string]any{
			"sku":   map[string]any{"name": "P20Premium"},
			"quota": map[string]any{"maxJobCount": c.jobs + 1, "maxRecurrence": map[string]any{"frequency": "Minute", "interval": 1}},
		}}
	}
	if err := b.api.Do(ctx, http.MethodPut, many.CollectionID(), define(map[string]string{"round": "0"}), nil, http.StatusCreated); err != nil {
		return err
	}
	keys := make([]jobs.Key, c.jobs)
	paths := make([]string, c.jobs)
	for i := range keys {
		keys[i] = many
		keys[i].Job = fmt.Sprintf("many-%04d", i+1)
		paths[i] = "/job/" + keys[i].Collection + "/" + keys[i].Job
		if err := b.api.Do(ctx, http.MethodPut, keys[i].JobID(), definition(b.tg.url+paths[i], 0, c.timeout), nil, http.StatusCreated); err != nil {
			return err
		}
	}
	b.expected = func() bool { return b.tg.holding(paths...) }
	allInFlight := func() error { return b.inFlight(ctx, keys, paths) }
	log.Printf("created the collection of %d jobs; %d rounds of its writes", c.jobs, c.rounds)
	started := time.Now()
	for r := range c.rounds {
		for _, w := range []struct {
			name, method, path string
			body               any
		}{
			{"collection PUT (tags)", http.MethodPut, many.CollectionID(), define(map[string]string{"round": strconv.Itoa(r + 1)})},
			{"collection PATCH quota maxJobCount", http.MethodPatch, many.CollectionID(), map[string]any{"properties": map[string]any{
				"quota": map[string]any{"maxJobCount": c.jobs + 2}}}},
			{"collection POST disable", http.MethodPost, many.CollectionID() + "/disable", nil},
			{"collection POST enable", http.MethodPost, many.CollectionID() + "/enable", nil},
			{"collection GET", http.MethodGet, many.CollectionID(), nil},
		} {
			if err := allInFlight(); err != nil {
				return err
			}
			write := b.time
			if strings.HasSuffix(w.path, "able") {
				write = b.timeOperation
			}
			if err := write(ctx, w.name, w.method, w.path, w.body); err != nil {
				return err
			}
		}
		log.Printf("collection round %d done after %s", r+1, time.Since(started).Round(time.Second))
	}
	if err := allInFlight(); err != nil {
		return err
	}
	deleted := time.Now()
	var location string
	if err := b.timeCall("collection DELETE (to its answer)", func() error {
		status, header, err := b.send(ctx, http.MethodDelete, many.CollectionID(), nil, http.StatusOK, http.StatusAccepted)
		if status == http.StatusAccepted {
			b.accepted["collection DELETE (to its answer)"]++
			location = header.Get("Location")
		}
		return err
	}); err != nil {
		return err
	}
	if location != "" {
		log.Printf("the collection's DELETE answered 202, Location %s", location)
	}
	// Its GET is 404 once the collection's workflow has deleted the jobs
	// and ended: what a client polling the collection waits for.
	for {
		status, _, err := b.send(ctx, http.MethodGet, many.CollectionID(), nil, http.StatusOK, http.StatusNotFound)
		if err != nil {
			return fmt.Errorf("GET of the deleted collection: %w", err)
		}
		if status == http.StatusNotFound {
			break
		}
		if time.Since(deleted) > 10*time.Minute {
			return errors.New("the deleted collection's GET is not 404 after 10m")
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.record("collection DELETE, until its GET is 404", time.Since(deleted))
	// A DELETE cancels the runs in flight; the target sees each when the
	// worker drops its request (at the attempt's next heartbeat).
	err := b.tg.await(ctx, paths, time.Minute, func(_, held []int) bool { return !slices.ContainsFunc(held, func(n int) bool { return n > 0 }) })
	if err != nil {
		log.Printf("the deleted collection's actions still reach the target: %v", err)
	} else {
		log.Printf("the target holds none of the deleted collection's actions %s after its DELETE", time.Since(deleted).Round(10*time.Millisecond))
	}
	return nil
}

// schedules times the same writes on a native Schedule of the same
// server, whose workflow makes the same POST to the target: pause,
// unpause, trigger, describe, an update of its action, and a delete.
// Schedules have no collection: its rows say so.
func schedules(ctx context.Context, c config, d *recurproc.Deployment, tg *target) error {
	tc, err := peer.Dial(ctx, d.Temporal, d.Namespace)
	if err != nil {
		return err
	}
	defer tc.Close()
	w, err := peer.StartWorker(tc)
	if err != nil {
		return err
	}
	defer w.Stop()
	const id = "writes-schedule"
	const path = "/schedule"
	h, err := tc.ScheduleClient().Create(ctx, client.ScheduleOptions{ID: id,
		Spec:   client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: 24 * time.Hour}}},
		Action: peer.Action(id, tg.url+path), Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL})
	if err != nil {
		return fmt.Errorf("create the schedule: %w", err)
	}
	b := newBench(tg)
	b.expected = func() bool { return tg.holding(path) }
	trigger := func() error { return h.Trigger(ctx, client.ScheduleTriggerOptions{}) }
	triggerAt := func(int) error { return trigger() }
	update := func() error {
		return h.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			in.Description.Schedule.Action = peer.Action(id, tg.url+path)
			return &client.ScheduleUpdate{Schedule: &in.Description.Schedule}, nil
		}})
	}
	for range c.rounds {
		for _, write := range []struct {
			name string
			f    func() error
		}{
			{"Pause", func() error { return h.Pause(ctx, client.SchedulePauseOptions{}) }},
			{"Unpause", func() error { return h.Unpause(ctx, client.ScheduleUnpauseOptions{}) }},
			{"Trigger", trigger},
			{"Describe", func() error { _, err := h.Describe(ctx); return err }},
			{"Update", update},
		} {
			if err := b.inFlightBy(ctx, triggerAt, path); err != nil {
				return err
			}
			if err := b.timeCall(write.name, write.f); err != nil {
				return err
			}
		}
	}
	if err := b.inFlightBy(ctx, triggerAt, path); err != nil {
		return err
	}
	if err := b.timeCall("Delete", func() error { return h.Delete(ctx) }); err != nil {
		return err
	}
	// A write on a collection is one request whatever its jobs; the same
	// on N Schedules is N requests, whose sum or slowest would compare
	// unlike things.
	b.absent = []string{"collection PUT (tags)", "collection PATCH quota maxJobCount", "collection POST disable",
		"collection POST enable", "collection GET", "collection DELETE (to its answer)", "collection DELETE, until its GET is 404"}
	b.print(c.answers(false)+", the Schedule's activity: start-to-close 1m, retried", "native Schedule", "a Schedule whose action is in flight")
	fmt.Printf("\nno counterpart: Temporal has no collection of Schedules; pausing, unpausing or deleting %d Schedules is %d writes, not one, "+
		"and a collection's GET is nearest to Describe above.\n", c.jobs, c.jobs)
	return nil
}

// definition is the job: an HTTP POST to url, one attempt, a daily
// recurrence starting tomorrow, so that it runs only when asked, and the
// action's timeout when timeout is not 0; rev changes its body, so that
// each PUT redefines it.
func definition(url string, rev int, timeout time.Duration) map[string]any {
	action := map[string]any{"type": "Http",
		"retryPolicy": map[string]any{"retryType": "None"},
		"request": map[string]any{"uri": url, "method": "POST",
			"headers": map[string]string{"Content-Type": "application/json"},
			"body":    fmt.Sprintf(`{"revision":%d}`, rev)}}
	if timeout > 0 {
		action["timeout"] = fmt.Sprintf("PT%dS", int(timeout/time.Second))
	}
	return map[string]any{"properties": map[string]any{
		"startTime":  time.Now().UTC().Add(24 * time.Hour).Truncate(time.Hour).Format(time.RFC3339),
		"recurrence": map[string]any{"frequency": "Day", "interval": 1},
		"action":     action,
	}}
}

type bench struct {
	api  *recurproc.Client // untimed requests
	base string            // the API's, for the timed ones
	http *http.Client
	tg   *target
	// expected says whether the actions a write should begin with are in
	// flight.
	expected func() bool
	order    []string
	times    map[string][]time.Duration
	idle     map[string]int // writes that began without the expected actions in flight
	accepted map[string]int // writes answered 202: the operation runs on
	absent   []string       // writes with no counterpart
}

func newBench(tg *target) *bench {
	return &bench{tg: tg, times: map[string][]time.Duration{}, idle: map[string]int{}, accepted: map[string]int{}}
}

// inFlight makes sure each job of keys has an action in flight, held by
// the target at the same index of paths: it runs now, untimed, each job
// whose target holds none, and waits for the target to get them all.
func (b *bench) inFlight(ctx context.Context, keys []jobs.Key, paths []string) error {
	return b.inFlightBy(ctx, func(i int) error {
		return b.api.Do(ctx, http.MethodPost, keys[i].JobID()+"/run", nil, nil, http.StatusOK, http.StatusAccepted)
	}, paths...)
}

// inFlightBy is inFlight, run(i) starting an action that posts to
// paths[i].
func (b *bench) inFlightBy(ctx context.Context, run func(i int) error, paths ...string) error {
	arrived, held := b.tg.counts(paths)
	var waiting []string
	var before []int
	for i, p := range paths {
		if held[i] > 0 {
			continue
		}
		if err := run(i); err != nil {
			return err
		}
		waiting = append(waiting, p)
		before = append(before, arrived[i])
	}
	if len(waiting) == 0 {
		return nil
	}
	err := b.tg.await(ctx, waiting, 30*time.Second, func(arrived, _ []int) bool {
		for i := range arrived {
			if arrived[i] == before[i] {
				return false
			}
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("%d runs now did not all reach the target: %w", len(waiting), err)
	}
	return nil
}

func (b *bench) time(ctx context.Context, name, method, path string, body any) error {
	return b.timeCall(name, func() error {
		status, _, err := b.send(ctx, method, path, body, http.StatusOK, http.StatusCreated, http.StatusAccepted, http.StatusNoContent)
		if status == http.StatusAccepted {
			b.accepted[name]++
		}
		return err
	})
}

// timeOperation times a collection's operation to its answer, as time
// does, and apart to its end, when every job shows it: its 200, or the 200
// of the Location its 202 names (whose GET waits up to 2 s for the end).
func (b *bench) timeOperation(ctx context.Context, name, method, path string, body any) error {
	started := time.Now()
	var location string
	if err := b.timeCall(name, func() error {
		status, header, err := b.send(ctx, method, path, body, http.StatusOK, http.StatusAccepted)
		if status == http.StatusAccepted {
			b.accepted[name]++
			location = header.Get("Location")
		}
		return err
	}); err != nil {
		return err
	}
	if location != "" {
		op, _, _ := strings.Cut(strings.TrimPrefix(location, b.base), "?")
		for {
			status, _, err := b.send(ctx, http.MethodGet, op, nil, http.StatusOK, http.StatusAccepted)
			if err != nil {
				return fmt.Errorf("%s, its Location: %w", name, err)
			}
			if status == http.StatusOK {
				break
			}
		}
	}
	b.record(name+", until every job shows it", time.Since(started))
	return nil
}

// send sends body (nil for none) as JSON to path of the API and returns
// the answer's status and headers; a status other than want is an error
// that carries the answer, as recurproc.Client.Do does.
func (b *bench) send(ctx context.Context, method, path string, body any, want ...int) (int, http.Header, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.base+path+"?api-version=2016-03-01", rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if !slices.Contains(want, resp.StatusCode) {
		return resp.StatusCode, resp.Header, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, data)
	}
	return resp.StatusCode, resp.Header, nil
}

// timeCall times one write, write, under name.
func (b *bench) timeCall(name string, write func() error) error {
	begun := b.expected()
	started := time.Now()
	if err := write(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	b.record(name, time.Since(started))
	if !begun {
		b.idle[name]++
	}
	return nil
}

// record adds d to the times of name.
func (b *bench) record(name string, d time.Duration) {
	if _, ok := b.times[name]; !ok {
		b.order = append(b.order, name)
	}
	b.times[name] = append(b.times[name], d)
}

func (b *bench) print(answers, bin, what string) {
	fmt.Printf("\nwrites to %s (%s), %s, %s, load average %s\n",
		what, answers, bin, time.Now().Format("2006-01-02 15:04"), recurproc.LoadAverage())
	fmt.Printf("| write | n | p50 | p99 | max | begun with no action in flight |\n|---|---:|---:|---:|---:|---:|\n")
	for _, name := range b.order {
		d := slices.Clone(b.times[name])
		slices.Sort(d)
		fmt.Printf("| %s | %d | %s | %s | %s | %d |\n", name, len(d), round(pct(d, 50)), round(pct(d, 99)), round(d[len(d)-1]), b.idle[name])
	}
	for _, name := range b.absent {
		fmt.Printf("| %s | - | no counterpart | - | - | - |\n", name)
	}
	var accepted []string
	for _, name := range b.order {
		if n := b.accepted[name]; n > 0 {
			accepted = append(accepted, fmt.Sprintf("%s %d of %d", name, n, len(b.times[name])))
		}
	}
	if len(accepted) > 0 {
		fmt.Printf("\nanswered 202 with a Location, the operation running on: %s\n", strings.Join(accepted, ", "))
	}
}

// pct is the nearest-rank percentile of sorted d.
func pct(d []time.Duration, p int) time.Duration {
	i := (p*len(d) + 99) / 100
	return d[max(i, 1)-1]
}

func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Millisecond)
}
