// Command writes measures how long a job's writes take while its action
// runs against a slow target (issue 35, goal 1). It starts `recur dev`
// (fresh data directory, free ports) and a local HTTP target that answers
// each request after -delay, creates one job that never fires on its own,
// runs it now, and while an action is in flight times -rounds rounds of
// PATCH state Disabled, PATCH state Enabled, POST run, GET and a PUT that
// redefines the job, then one DELETE; each write begins with an action in
// flight (it runs the job now, untimed, when none is, and waits for the
// target to get it). Then, on the same server, it times the same writes
// of a native Schedule whose workflow makes the same POST (pause,
// unpause, trigger, describe, update, delete), each begun with one of its
// actions in flight. It prints p50, p99 and max of each write, and how
// many began while no action was in flight.
//
// It is a bench command, not a test; run it from the repository root:
//
//	go run ./e2e/writes
//	go run ./e2e/writes -bin /tmp/recur-la -rounds 20 -delay 50s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/internal/peer"
	"github.com/recurhq/recur/internal/recurproc"
	"github.com/recurhq/recur/jobs"
)

type config struct {
	bin    string
	rounds int
	delay  time.Duration
	keep   bool
}

func main() {
	var c config
	flag.StringVar(&c.bin, "bin", "", recurproc.BinUsage)
	flag.IntVar(&c.rounds, "rounds", 20, "rounds of writes, each PATCH Disabled, PATCH Enabled, POST run, GET and PUT")
	flag.DurationVar(&c.delay, "delay", 50*time.Second, "how long the target takes to answer each request")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (binary, data, recur.log)")
	flag.Parse()
	if c.rounds < 1 || c.delay <= 0 {
		fmt.Fprintln(os.Stderr, "writes: -rounds and -delay must be positive")
		os.Exit(2)
	}
	recurproc.Main("writes", func(ctx context.Context) error { return run(ctx, c) })
}

// target answers every request after its delay and counts those in
// flight.
type target struct {
	url      string
	delay    time.Duration
	inFlight atomic.Int64
	arrived  chan struct{}
	close    func()
}

func startTarget(delay time.Duration) (*target, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &target{url: "http://" + ln.Addr().String() + "/slow", delay: delay, arrived: make(chan struct{}, 1024)}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.inFlight.Add(1)
		defer t.inFlight.Add(-1)
		t.arrived <- struct{}{}
		select {
		case <-time.After(t.delay):
			w.WriteHeader(http.StatusOK)
		case <-r.Context().Done():
		}
	})}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("target stopped: %v", err)
		}
	}()
	t.close = func() { _ = srv.Close() }
	return t, nil
}

var key = jobs.Key{Subscription: "writes", ResourceGroup: "writes", Collection: "writes", Job: "slow"}

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
	tg, err := startTarget(c.delay)
	if err != nil {
		return err
	}
	defer tg.close()
	d, err := recurproc.Deploy(ctx, bin, work, false, false)
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
	if err := api.Do(ctx, http.MethodPut, key.JobID(), definition(tg.url, 0), nil, http.StatusCreated); err != nil {
		return err
	}
	b := &bench{api: api, tg: tg, times: map[string][]time.Duration{}, idle: map[string]int{}}
	log.Printf("created the job; %d rounds of writes, the target answering after %s", c.rounds, c.delay)
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
			{"PUT redefinition", http.MethodPut, key.JobID(), definition(tg.url, r+1)},
		} {
			if err := b.inFlight(ctx); err != nil {
				return err
			}
			if err := b.time(ctx, w.name, w.method, w.path, w.body); err != nil {
				return err
			}
		}
		log.Printf("round %d done after %s, %d actions in flight", r+1, time.Since(started).Round(time.Second), tg.inFlight.Load())
	}
	if err := b.inFlight(ctx); err != nil {
		return err
	}
	if err := b.time(ctx, "DELETE", http.MethodDelete, key.JobID(), nil); err != nil {
		return err
	}
	b.print(c, bin, "a job")
	if err := schedules(ctx, c, d, tg); err != nil {
		return err
	}
	return d.Stop()
}

// schedules times the same writes on a native Schedule of the same
// server, whose workflow makes the same POST to the target: pause,
// unpause, trigger, describe, an update of its action, and a delete.
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
	h, err := tc.ScheduleClient().Create(ctx, client.ScheduleOptions{ID: id,
		Spec:   client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: 24 * time.Hour}}},
		Action: peer.Action(id, tg.url), Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL})
	if err != nil {
		return fmt.Errorf("create the schedule: %w", err)
	}
	for tg.inFlight.Load() > 0 { // the job's last actions
		time.Sleep(time.Second)
	}
	b := &bench{tg: tg, times: map[string][]time.Duration{}, idle: map[string]int{}}
	trigger := func() error { return h.Trigger(ctx, client.ScheduleTriggerOptions{}) }
	update := func() error {
		return h.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			in.Description.Schedule.Action = peer.Action(id, tg.url)
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
			if err := b.inFlightBy(ctx, trigger); err != nil {
				return err
			}
			if err := b.timeCall(write.name, write.f); err != nil {
				return err
			}
		}
	}
	if err := b.inFlightBy(ctx, trigger); err != nil {
		return err
	}
	if err := b.timeCall("Delete", func() error { return h.Delete(ctx) }); err != nil {
		return err
	}
	b.print(c, "native Schedule", "a Schedule")
	return nil
}

// definition is the job: an HTTP POST to the target, one attempt, a
// daily recurrence starting tomorrow, so that it runs only when asked;
// rev changes its body, so that each PUT redefines it.
func definition(url string, rev int) map[string]any {
	return map[string]any{"properties": map[string]any{
		"startTime":  time.Now().UTC().Add(24 * time.Hour).Truncate(time.Hour).Format(time.RFC3339),
		"recurrence": map[string]any{"frequency": "Day", "interval": 1},
		"action": map[string]any{"type": "Http",
			"retryPolicy": map[string]any{"retryType": "None"},
			"request": map[string]any{"uri": url, "method": "POST",
				"headers": map[string]string{"Content-Type": "application/json"},
				"body":    fmt.Sprintf(`{"revision":%d}`, rev)}},
	}}
}

type bench struct {
	api   *recurproc.Client
	tg    *target
	order []string
	times map[string][]time.Duration
	idle  map[string]int // writes that began with no action in flight
}

// inFlight makes sure an action of the job is in flight: it runs the job
// now, untimed, when none is, and waits for the target to get it.
func (b *bench) inFlight(ctx context.Context) error {
	return b.inFlightBy(ctx, func() error {
		return b.api.Do(ctx, http.MethodPost, key.JobID()+"/run", nil, nil, http.StatusOK, http.StatusAccepted)
	})
}

// inFlightBy is inFlight, run starting an action when none is in flight.
func (b *bench) inFlightBy(ctx context.Context, run func() error) error {
	if b.tg.inFlight.Load() > 0 {
		return nil
	}
	for len(b.tg.arrived) > 0 {
		<-b.tg.arrived
	}
	if err := run(); err != nil {
		return err
	}
	select {
	case <-b.tg.arrived:
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("the run now did not reach the target within 30s")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *bench) time(ctx context.Context, name, method, path string, body any) error {
	return b.timeCall(name, func() error {
		return b.api.Do(ctx, method, path, body, nil, http.StatusOK, http.StatusCreated, http.StatusAccepted, http.StatusNoContent)
	})
}

// timeCall times one write, write, under name.
func (b *bench) timeCall(name string, write func() error) error {
	if _, ok := b.times[name]; !ok {
		b.order = append(b.order, name)
	}
	if b.tg.inFlight.Load() == 0 {
		b.idle[name]++
	}
	started := time.Now()
	if err := write(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	b.times[name] = append(b.times[name], time.Since(started))
	return nil
}

func (b *bench) print(c config, bin, what string) {
	fmt.Printf("\nwrites to %s whose action is in flight (target answers after %s), %s, %s, load average %s\n",
		what, c.delay, bin, time.Now().Format("2006-01-02 15:04"), recurproc.LoadAverage())
	fmt.Printf("| write | n | p50 | p99 | max | begun with no action in flight |\n|---|---:|---:|---:|---:|---:|\n")
	for _, name := range b.order {
		d := slices.Clone(b.times[name])
		slices.Sort(d)
		fmt.Printf("| %s | %d | %s | %s | %s | %d |\n", name, len(d), round(pct(d, 50)), round(pct(d, 99)), round(d[len(d)-1]), b.idle[name])
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
