package bench

import (
	"testing"
	"time"

	"github.com/recurhq/recur/recurrence"
	"github.com/robfig/cron/v3"
	"github.com/teambition/rrule-go"
)

// sink keeps the compiler from discarding benchmarked results.
var sink time.Time

// Benchmark<Rule>/<peer>/<start> measures the first occurrence after now
// of a rule built outside the timer; <peer>+new builds it inside the timer
// too (recur: Compile of a decoded definition; rrule-go: NewRRule from
// options; cron: ParseStandard of the spec, its only constructor).

func BenchmarkEveryMinute(b *testing.B)         { benchRule(b, "EveryMinute") }
func BenchmarkEvery15Minutes(b *testing.B)      { benchRule(b, "Every15Minutes") }
func BenchmarkEvery7Minutes(b *testing.B)       { benchRule(b, "Every7Minutes") }
func BenchmarkHourlyAt30(b *testing.B)          { benchRule(b, "HourlyAt30") }
func BenchmarkDaily0900(b *testing.B)           { benchRule(b, "Daily0900") }
func BenchmarkWeekdays0900And1700(b *testing.B) { benchRule(b, "Weekdays0900And1700") }
func BenchmarkWeeklyMonWedFri1000(b *testing.B) { benchRule(b, "WeeklyMonWedFri1000") }
func BenchmarkMonthly1stAnd15th(b *testing.B)   { benchRule(b, "Monthly1stAnd15th") }
func BenchmarkMonthlyLastFriday(b *testing.B)   { benchRule(b, "MonthlyLastFriday") }
func BenchmarkYearlyFeb29(b *testing.B)         { benchRule(b, "YearlyFeb29") }

func ruleNamed(tb testing.TB, name string) engineRule {
	tb.Helper()
	for _, r := range engineRules {
		if r.name == name {
			return r
		}
	}
	tb.Fatalf("no rule %q", name)
	return engineRule{}
}

func benchRule(b *testing.B, name string) {
	r := ruleNamed(b, name)
	now := r.nowOf()
	for _, s := range starts {
		from := r.startOf(s)
		b.Run("recur/"+s.name, func(b *testing.B) { benchRecur(b, r, from, now, false) })
		b.Run("rrule/"+s.name, func(b *testing.B) { benchRRule(b, r, from, now, false) })
		if r.cron != "" {
			b.Run("cron/"+s.name, func(b *testing.B) { benchCron(b, r, now, false) })
		}
	}
	for _, s := range starts {
		from := r.startOf(s)
		b.Run("recur+new/"+s.name, func(b *testing.B) { benchRecur(b, r, from, now, true) })
		b.Run("rrule+new/"+s.name, func(b *testing.B) { benchRRule(b, r, from, now, true) })
		if r.cron != "" {
			b.Run("cron+new/"+s.name, func(b *testing.B) { benchCron(b, r, now, true) })
		}
	}
}

func benchRecur(b *testing.B, r engineRule, from, now time.Time, build bool) {
	def, err := r.recurDef(from)
	if err != nil {
		b.Fatal(err)
	}
	rule, err := recurrence.Compile(def, now)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if build {
			if rule, err = recurrence.Compile(def, now); err != nil {
				b.Fatal(err)
			}
		}
		t, ok := rule.Next(now)
		if !ok {
			b.Fatal("no next occurrence")
		}
		sink = t
	}
}

func benchRRule(b *testing.B, r engineRule, from, now time.Time, build bool) {
	opts := r.rruleOpts(from)
	rule, err := rrule.NewRRule(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if build {
			if rule, err = rrule.NewRRule(opts); err != nil {
				b.Fatal(err)
			}
		}
		t := rule.After(now, false)
		if t.IsZero() {
			b.Fatal("no next occurrence")
		}
		sink = t
	}
}

func benchCron(b *testing.B, r engineRule, now time.Time, build bool) {
	sched, err := r.cronSchedule()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if build {
			if sched, err = cron.ParseStandard(r.cron); err != nil {
				b.Fatal(err)
			}
		}
		t := sched.Next(now)
		if t.IsZero() {
			b.Fatal("no next occurrence")
		}
		sink = t
	}
}

// TestPeersAgree checks that, for every rule and start, every peer that can
// express the rule yields the same next 20 occurrences after now as recur,
// so that the benchmarks compare equal work.
func TestPeersAgree(t *testing.T) {
	const n = 20
	for _, r := range engineRules {
		for _, s := range starts {
			t.Run(r.name+"/"+s.name, func(t *testing.T) {
				now, from := r.nowOf(), r.startOf(s)
				want := recurNext(t, r, from, now, n)

				rr, err := rrule.NewRRule(r.rruleOpts(from))
				if err != nil {
					t.Fatal(err)
				}
				assertSame(t, "rrule-go", want, rruleNext(rr, now, n))
				if got := rr.After(now, false); !got.Equal(want[0]) {
					t.Errorf("rrule-go After(now) = %v, want %v", got, want[0])
				}

				if r.cron == "" {
					t.Logf("cron: not expressible (%s)", r.why)
					return
				}
				sched, err := r.cronSchedule()
				if err != nil {
					t.Fatal(err)
				}
				cronWant := want
				if r.cronN > 0 {
					cronWant = want[:r.cronN]
				}
				assertSame(t, "cron", cronWant, cronNext(sched, now, n))
			})
		}
	}
}

func recurNext(t *testing.T, r engineRule, from, now time.Time, n int) []time.Time {
	t.Helper()
	rule, err := r.recurRule(from)
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Time
	for at := now; len(out) < n; {
		next, ok := rule.Next(at)
		if !ok {
			t.Fatalf("recur: only %d occurrences after %v", len(out), now)
		}
		out = append(out, next)
		at = next
	}
	return out
}

// rruleNext walks one iterator from DTSTART instead of calling After n
// times, which would walk from DTSTART n times.
func rruleNext(rr *rrule.RRule, now time.Time, n int) []time.Time {
	var out []time.Time
	next := rr.Iterator()
	for len(out) < n {
		v, ok := next()
		if !ok {
			break
		}
		if v.After(now) {
			out = append(out, v)
		}
	}
	return out
}

func cronNext(sched cron.Schedule, now time.Time, n int) []time.Time {
	var out []time.Time
	for at := now; len(out) < n; {
		at = sched.Next(at)
		if at.IsZero() {
			break
		}
		out = append(out, at)
	}
	return out
}

func assertSame(t *testing.T, peer string, want, got []time.Time) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d occurrences, want %d", peer, len(got), len(want))
	}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Fatalf("%s: occurrence %d = %v, want %v (recur)", peer, i, got[i], want[i])
		}
	}
}

// TestNotFromTheFuture guards the benchmark's premise: every start is
// before now, so "first occurrence after now" is the question asked.
func TestNotFromTheFuture(t *testing.T) {
	for _, r := range engineRules {
		for _, s := range starts {
			if from := r.startOf(s); !from.Before(r.nowOf()) {
				t.Errorf("%s/%s: start %v not before now %v", r.name, s.name, from, r.nowOf())
			}
		}
	}
}
