package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/recurhq/recur/jobs"
)

// occurrence names one nominal run of one job.
type occurrence struct {
	job     string
	nominal time.Time
}

func (o occurrence) String() string { return o.job + "@" + o.nominal.Format(time.RFC3339) }

// result compares the deliveries with the schedules up to a cutoff.
type result struct {
	deliveries  int
	expected    int                        // occurrences due by the cutoff
	missed      []occurrence               // due, never delivered
	doubled     []occurrence               // delivered under two or more Idempotency-Keys
	redelivered []string                   // one Idempotency-Key delivered more than once
	unexpected  []string                   // deliveries no schedule asked for, or inconsistent
	late        []time.Duration            // first arrival minus nominal, of each delivered occurrence due by the cutoff
	keys        map[string]map[string]bool // job -> Idempotency-Keys delivered (all, not only by the cutoff)
}

// analyze compares the deliveries with the schedules of js: occurrences due
// by cutoff must have arrived once; later ones are checked only for being
// occurrences at all.
func analyze(js []*soakJob, ds []delivery, cutoff time.Time) *result {
	r := &result{deliveries: len(ds), keys: map[string]map[string]bool{}}
	byName := map[string]*soakJob{}
	for _, j := range js {
		byName[j.name] = j
	}
	byOcc := map[occurrence]map[string]time.Time{} // occurrence -> key -> first arrival
	byKey := map[string]int{}
	for _, d := range ds {
		if why := r.check(byName[d.job], d); why != "" {
			r.unexpected = append(r.unexpected, fmt.Sprintf("%s key=%q expected=%q at %s: %s",
				d.job, d.key, d.expected, d.arrived.Format(time.StampMilli), why))
			continue
		}
		byKey[d.key]++
		if r.keys[d.job] == nil {
			r.keys[d.job] = map[string]bool{}
		}
		r.keys[d.job][d.key] = true
		o := occurrence{d.job, d.nominal}
		if byOcc[o] == nil {
			byOcc[o] = map[string]time.Time{}
		}
		if at, ok := byOcc[o][d.key]; !ok || d.arrived.Before(at) {
			byOcc[o][d.key] = d.arrived
		}
	}
	for k, n := range byKey {
		if n > 1 {
			r.redelivered = append(r.redelivered, fmt.Sprintf("%s (%d times)", k, n))
		}
	}
	slices.Sort(r.redelivered)
	for _, j := range js {
		r.expect(j, byOcc, cutoff)
	}
	for o, keys := range byOcc {
		if len(keys) > 1 {
			r.doubled = append(r.doubled, o)
		}
	}
	slices.SortFunc(r.doubled, func(a, b occurrence) int { return cmp.Compare(a.String(), b.String()) })
	return r
}

// check returns why d is not a delivery of one of j's occurrences, "" when
// it is.
func (r *result) check(j *soakJob, d delivery) string {
	switch {
	case j == nil:
		return "no such job"
	case d.nominal.IsZero():
		return "no valid x-ms-scheduler-expected-execution-time"
	case d.jobID != j.name:
		return "x-ms-scheduler-jobid names another job"
	case !strings.HasPrefix(d.key, jobs.OccurrenceID(jobKey(j.name).JobWorkflowID(), d.nominal)):
		return "the Idempotency-Key is not the occurrence ID of the expected execution time"
	case d.nominal.Before(j.first):
		return "before the job's first occurrence"
	}
	if t, ok := j.rule.First(d.nominal); !ok || !t.Equal(d.nominal) {
		return "not an occurrence of the job's schedule"
	}
	return ""
}

// expect walks j's occurrences due by cutoff and checks each arrived.
func (r *result) expect(j *soakJob, byOcc map[occurrence]map[string]time.Time, cutoff time.Time) {
	for t, ok := j.first, true; ok && !t.After(cutoff); t, ok = j.rule.Next(t) {
		r.expected++
		keys := byOcc[occurrence{j.name, t}]
		if len(keys) == 0 {
			r.missed = append(r.missed, occurrence{j.name, t})
			continue
		}
		first := slices.MinFunc(slices.Collect(maps.Values(keys)), func(a, b time.Time) int { return a.Compare(b) })
		r.late = append(r.late, first.Sub(t))
	}
}

// passed tells whether nothing was missed, doubled or unexpected.
func (r *result) passed() bool {
	return len(r.missed) == 0 && len(r.doubled) == 0 && len(r.redelivered) == 0 && len(r.unexpected) == 0
}

// lateness summarizes the lateness distribution.
func (r *result) lateness() string {
	if len(r.late) == 0 {
		return "n/a"
	}
	l := slices.Clone(r.late)
	slices.Sort(l)
	q := func(p float64) time.Duration { return l[min(len(l)-1, int(p*float64(len(l))))].Round(time.Millisecond) }
	return fmt.Sprintf("min %s p50 %s p99 %s max %s", l[0].Round(time.Millisecond), q(0.50), q(0.99), l[len(l)-1].Round(time.Millisecond))
}

// checkStatus reads every job back and returns the jobs whose status does
// not match the deliveries: executionCount must equal the occurrences
// delivered, failureCount and faultedCount must be 0. Counts may trail the
// deliveries by the end of a run, so it retries for half a minute. A job
// of a disabled collection must be disabled.
func (s *soak) checkStatus(ctx context.Context, disabled bool) []string {
	var bad []string
	for try := 0; try < 15; try++ {
		if try > 0 {
			time.Sleep(2 * time.Second)
		}
		bad = bad[:0]
		keys := analyze(s.jobs, s.sink.snapshot(), time.Time{}).keys
		for _, j := range s.jobs {
			if why := s.checkJob(ctx, j, len(keys[j.name]), disabled); why != "" {
				bad = append(bad, j.name+": "+why)
			}
		}
		if len(bad) == 0 {
			break
		}
	}
	return bad
}

func (s *soak) checkJob(ctx context.Context, j *soakJob, delivered int, disabled bool) string {
	v, err := s.api.getJob(ctx, j.name)
	if err != nil {
		return err.Error()
	}
	st, p := v.Properties.Status, v.Properties
	var why []string
	if st.ExecutionCount != delivered {
		why = append(why, fmt.Sprintf("executionCount %d, but %d occurrences were delivered", st.ExecutionCount, delivered))
	}
	if st.FailureCount != 0 || st.FaultedCount != 0 {
		why = append(why, fmt.Sprintf("failureCount %d, faultedCount %d", st.FailureCount, st.FaultedCount))
	}
	if disabled && !strings.EqualFold(p.State, "disabled") {
		why = append(why, fmt.Sprintf("state %q after the collection was disabled", p.State))
	}
	return strings.Join(why, "; ")
}

// examples bounds the examples printed of each problem.
const examples = 20

// print writes the final report to stdout.
func (r *result) print(s *soak, cutoff time.Time, bad []string) {
	fmt.Println("==== recur soak report ====")
	fmt.Printf("jobs %d, every minute, start times spread over %s-%s; checked the occurrences due by %s (%s after the first start)\n",
		len(s.jobs), s.base.Format(time.TimeOnly), s.base.Add(time.Minute-time.Second).Format(time.TimeOnly),
		cutoff.Format(time.TimeOnly), cutoff.Sub(s.base).Round(time.Second))
	fmt.Printf("expected %d, delivered %d requests in all\n", r.expected, r.deliveries)
	fmt.Printf("missed      %d\n", len(r.missed))
	printList(r.missed)
	fmt.Printf("doubled     %d (one occurrence under two or more Idempotency-Keys)\n", len(r.doubled))
	printList(r.doubled)
	fmt.Printf("redelivered %d (one Idempotency-Key delivered more than once)\n", len(r.redelivered))
	printList(r.redelivered)
	fmt.Printf("unexpected  %d\n", len(r.unexpected))
	printList(r.unexpected)
	fmt.Printf("lateness (arrival - nominal): %s\n", r.lateness())
	fmt.Printf("status mismatches %d (executionCount = deliveries, failureCount = faultedCount = 0)\n", len(bad))
	printList(bad)
	verdict := "PASS"
	if !r.passed() || len(bad) > 0 {
		verdict = "FAIL"
	}
	fmt.Println("verdict:", verdict)
}

func printList[T any](items []T) {
	for i, it := range items {
		if i == examples {
			fmt.Printf("    ... and %d more\n", len(items)-examples)
			return
		}
		fmt.Printf("    %v\n", it)
	}
}

func printCounts(prefix string, counts map[string]int) {
	names := slices.SortedFunc(maps.Keys(counts), func(a, b string) int { return cmp.Compare(counts[b], counts[a]) })
	for i, name := range names {
		if i == examples {
			fmt.Printf("%s ... and %d other messages\n", prefix, len(names)-examples)
			return
		}
		fmt.Printf("%s %6d  %s\n", prefix, counts[name], name)
	}
}

func total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
