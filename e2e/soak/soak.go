package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
	"github.com/recurhq/recur/recurrence"
)

// soak is one run of the soak test.
type soak struct {
	cfg  config
	proc *recurproc.Process
	sink *sink
	api  *restClient

	jobs     []*soakJob
	rssStart int
	rssPeak  int
	cpuAt    time.Time     // when cpuUsed was read
	cpuUsed  time.Duration // recur's CPU time then
	started  time.Time     // when the first job was created
	base     time.Time     // the first job's startTime; the soak lasts -for from here
}

// soakJob is one job and what its schedule promises.
type soakJob struct {
	name  string
	rule  *recurrence.Rule
	first time.Time // its first occurrence, as recur planned it
}

// creators is how many jobs are created at once.
const creators = 8

func (s *soak) run(ctx context.Context) (bool, error) {
	if err := s.create(ctx); err != nil {
		return false, err
	}
	end := s.base.Add(s.cfg.duration)
	log.Printf("%d jobs run every minute until %s; progress every %s", len(s.jobs), end.Format(time.TimeOnly), s.cfg.progress)
	tick := time.NewTicker(s.cfg.progress)
	defer tick.Stop()
	for running := true; running; {
		select {
		case <-ctx.Done():
			log.Printf("interrupted: running the final checks now")
			running = false
		case <-time.After(time.Until(end)):
			running = false
		case <-tick.C:
			if !s.proc.Alive() {
				return false, errors.New("recur dev died during the soak")
			}
			s.progress()
		}
	}
	return s.finish()
}

// create makes the collection and the jobs. Their start times are spread
// over a minute, so that as many runs fall due in every second.
func (s *soak) create(ctx context.Context) error {
	if err := s.api.putCollection(ctx, s.cfg.jobs); err != nil {
		return err
	}
	// Creating takes time; start far enough ahead that most jobs exist
	// before their start (those that do not start at their next slot).
	base := time.Now().UTC().Add(5*time.Second + time.Duration(s.cfg.jobs)*50*time.Millisecond).Truncate(time.Second)
	s.jobs = make([]*soakJob, s.cfg.jobs)
	started := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, s.cfg.jobs)
	next := make(chan int)
	for range creators {
		wg.Go(func() {
			for i := range next {
				j, err := s.createJob(ctx, i, base.Add(time.Duration(i)*time.Minute/time.Duration(s.cfg.jobs)).Truncate(time.Second))
				if err != nil {
					errs <- err
					continue
				}
				s.jobs[i] = j
			}
		})
	}
	for i := range s.cfg.jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("create jobs: %w", err)
	}
	s.started, s.base = started, base
	s.cpuShare()
	late := 0
	for i, j := range s.jobs {
		if !j.first.Equal(base.Add(time.Duration(i) * time.Minute / time.Duration(s.cfg.jobs)).Truncate(time.Second)) {
			late++
		}
	}
	log.Printf("created collection %s (P20Premium) and %d jobs in %s; first start %s; %d jobs were created after their startTime and begin at their next minute",
		key.Collection, len(s.jobs), time.Since(started).Round(time.Millisecond), base.Format(time.TimeOnly), late)
	return nil
}

// createJob creates job i starting at start and reads back its first
// occurrence.
func (s *soak) createJob(ctx context.Context, i int, start time.Time) (*soakJob, error) {
	name := fmt.Sprintf("soak-%04d", i)
	schedule := map[string]any{
		"startTime":  start.Format(time.RFC3339),
		"recurrence": map[string]any{"frequency": "Minute", "interval": 1},
	}
	props := map[string]any{
		"action": map[string]any{"type": "Http", "request": map[string]any{
			"uri": s.sink.Target(name), "method": "POST",
			"headers": map[string]string{"Content-Type": "application/json"},
			"body":    fmt.Sprintf(`{"job":%q}`, name),
		}},
	}
	for k, v := range schedule {
		props[k] = v
	}
	created := time.Now()
	v, err := s.api.putJob(ctx, name, props)
	if err != nil {
		return nil, err
	}
	rule, err := compileSchedule(schedule, created)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", name, err)
	}
	first := v.Properties.Status.NextExecutionTime
	if first == nil {
		return nil, fmt.Errorf("job %s: created without a nextExecutionTime", name)
	}
	if t, ok := rule.First(*first); !ok || !t.Equal(*first) {
		return nil, fmt.Errorf("job %s: nextExecutionTime %s is not an occurrence of its schedule", name, first.Format(time.RFC3339))
	}
	return &soakJob{name: name, rule: rule, first: first.UTC()}, nil
}

// compileSchedule compiles a job's startTime and recurrence with the
// engine recur itself uses.
func compileSchedule(schedule map[string]any, created time.Time) (*recurrence.Rule, error) {
	data, err := json.Marshal(schedule)
	if err != nil {
		return nil, err
	}
	var def recurrence.Definition
	if err := json.Unmarshal(data, &def); err != nil {
		return nil, err
	}
	return recurrence.Compile(def, created)
}

// progress prints what is known so far: occurrences due more than a
// minute ago that have not arrived are counted as missing for now.
func (s *soak) progress() {
	now := time.Now()
	r := analyze(s.jobs, s.sink.snapshot(), now.Add(-time.Minute))
	rss := s.sample()
	log.Printf("progress %s: %d deliveries; due up to a minute ago %d, missing %d, doubled %d, redelivered %d, unexpected %d; lateness %s; RSS %s; data %s; %s",
		now.Sub(s.started).Round(time.Second), r.deliveries, r.expected, len(r.missed), len(r.doubled), len(r.redelivered), len(r.unexpected),
		r.lateness(), kb(rss), mb(s.proc.DataSize()), s.cpuShare())
}

// cpuShare tells how much CPU recur used since the last call, beside the
// machine's load: lateness on a busy machine is not recur's alone.
func (s *soak) cpuShare() string {
	now, used := time.Now(), s.proc.CPU()
	share := "?"
	if used >= 0 && !s.cpuAt.IsZero() && s.cpuUsed >= 0 {
		share = fmt.Sprintf("%.0f%%", 100*float64(used-s.cpuUsed)/float64(now.Sub(s.cpuAt)))
	}
	s.cpuAt, s.cpuUsed = now, used
	return fmt.Sprintf("recur CPU %s of a core, load average %s", share, recurproc.LoadAverage())
}

// sample reads the RSS and keeps its peak.
func (s *soak) sample() int {
	rss := s.proc.RSS()
	s.rssPeak = max(s.rssPeak, rss)
	return rss
}

// finish waits for the occurrences due by now, stops the schedules,
// checks every job's status and prints the report.
func (s *soak) finish() (bool, error) {
	cutoff := time.Now()
	s.waitForDue(cutoff)
	rssEnd := s.sample()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Disabled jobs stop adding runs, so their counters settle; if that
	// fails the counters are still compared, against moving targets.
	disableErr := s.api.disableCollection(ctx)
	if disableErr != nil {
		log.Printf("could not disable the collection: %v", disableErr)
	} else {
		s.waitQuiet(5 * time.Second)
	}
	r := analyze(s.jobs, s.sink.snapshot(), cutoff)
	bad := s.checkStatus(ctx, disableErr == nil)
	if disableErr != nil {
		bad = append(bad, "collection: disable failed: "+disableErr.Error())
	}
	r.print(s, cutoff, bad)
	if len(r.missed) > 0 {
		why, err := s.diagnose(ctx, r.missed)
		if err != nil {
			log.Printf("could not look the missed occurrences up: %v", err)
		} else {
			printDiagnosis(len(r.missed), why)
		}
	}
	log.Printf("recur RSS: %s at start, %s at the end, %s peak of the samples; data directory %s; CPU time %s",
		kb(s.rssStart), kb(rssEnd), kb(s.rssPeak), mb(s.proc.DataSize()), s.proc.CPU().Round(time.Second))
	return r.passed() && len(bad) == 0, nil
}

// waitForDue waits until every occurrence due by cutoff has arrived, at
// most the grace period.
func (s *soak) waitForDue(cutoff time.Time) {
	deadline := time.Now().Add(s.cfg.grace)
	for time.Now().Before(deadline) {
		if r := analyze(s.jobs, s.sink.snapshot(), cutoff); len(r.missed) == 0 {
			return
		}
		time.Sleep(2 * time.Second)
	}
}

// waitQuiet waits until the sink has received nothing for quiet (runs
// started before the collection was disabled end), at most a minute.
func (s *soak) waitQuiet(quiet time.Duration) {
	deadline := time.Now().Add(time.Minute)
	last, since := s.sink.count(), time.Now()
	for time.Now().Before(deadline) && time.Since(since) < quiet {
		time.Sleep(500 * time.Millisecond)
		if n := s.sink.count(); n != last {
			last, since = n, time.Now()
		}
	}
}

// printProcess prints what recur's log says went wrong.
func (s *soak) printProcess() {
	warn, errs := s.proc.LogLevels()
	fmt.Printf("recur log %s: %d WARN and %d ERROR lines\n", s.proc.LogPath, total(warn), total(errs))
	printCounts("  WARN", warn)
	printCounts("  ERROR", errs)
}

func kb(v int) string {
	if v < 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f MiB", float64(v)/1024)
}

func mb(v int64) string { return fmt.Sprintf("%.1f MiB", float64(v)/(1<<20)) }
