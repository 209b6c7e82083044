package recurrence

import (
	"cmp"
	"slices"
	"sort"
	"time"
)

// Rule is a compiled, validated Definition: the occurrence set of
// docs/recurrence.md together with its start-time and ending rules. A Rule is
// immutable and safe for concurrent use.
type Rule struct {
	created time.Time // C, whole seconds
	anchor  time.Time // A = startTime, else C
	// once is a job without recurrence: one run, then completed.
	once bool
	// immediate is rule 2: recurrence without startTime runs at C first.
	immediate bool
	count     int       // 0 = unlimited
	end       time.Time // zero = no endTime
	zone      zone
	gen       source
	excluded  []dayRange // sorted, disjoint
}

// dayRange is an inclusive range of wall-clock day numbers.
type dayRange struct{ from, to int64 }

// Compile validates def and returns its Rule for a job created (or last
// redefined) at created. created is truncated to whole seconds; it is the
// anchor when def has no startTime. Errors are *ValidationError.
func Compile(def Definition, created time.Time) (*Rule, error) {
	// Validate normalizes in place; the caller's definition stays theirs.
	def = def.Clone()
	if err := def.Validate(); err != nil {
		return nil, err
	}
	r, err := compile(def, created.Truncate(time.Second))
	if err != nil {
		return nil, err
	}
	if !r.once {
		if _, ok := r.gen.atOrAfter(r.anchor); !ok {
			return nil, invalid(pathSchedule(def), CodeNeverOccurs,
				"this recurrence never occurs: no time in a whole 400-year calendar cycle matches it")
		}
	}
	return r, nil
}

// Location returns the zone the schedule is read in (UTC by default).
func (r *Rule) Location() *time.Location { return r.zone.loc }

// Count returns the recurrence's count, 0 when it has none. Counting runs
// is the caller's business: Next does not know how many have run.
func (r *Rule) Count() int { return r.count }

// First returns the nominal time of the job's first run when it is planned
// at now, applying the four start-time rules of docs/recurrence.md, and false
// when the job will never run (its endTime has passed). A first run "at
// once" is at C, so it may be before now: the caller runs it immediately.
func (r *Rule) First(now time.Time) (time.Time, bool) {
	switch {
	case r.once:
		if r.anchor.Before(r.created) {
			return r.created, true
		}
		return r.anchor, true
	case r.immediate:
		return r.within(r.created, true)
	}
	from := r.anchor
	if now.After(from) {
		from = now
	}
	return r.within(r.gen.atOrAfter(from))
}

// Next returns the first nominal occurrence strictly after after, and false
// when there is none before endTime (or the job has no recurrence). Later
// runs are always computed from the previous nominal time, never from when
// it actually ran. Next honours endTime but not count; see Count.
func (r *Rule) Next(after time.Time) (time.Time, bool) {
	if r.once {
		return time.Time{}, false
	}
	return r.within(r.gen.after(after))
}

func (r *Rule) within(t time.Time, ok bool) (time.Time, bool) {
	t, ok = r.skipExcluded(t, ok)
	if !ok || (!r.end.IsZero() && t.After(r.end)) {
		return time.Time{}, false
	}
	return t, true
}

// Preview returns up to n nominal run times of the job def created at
// created, as planned at from: the first run by the start-time rules, then
// the following occurrences, stopping at count and endTime. Times are in
// UTC.
func Preview(def Definition, created, from time.Time, n int) ([]time.Time, error) {
	r, err := Compile(def, created)
	if err != nil {
		return nil, err
	}
	return r.Preview(from, n), nil
}

// Preview is the package-level Preview for a compiled rule.
func (r *Rule) Preview(from time.Time, n int) []time.Time {
	if r.count > 0 && n > r.count {
		n = r.count
	}
	var out []time.Time
	t, ok := r.First(from)
	for ok && len(out) < n {
		out = append(out, t.UTC())
		t, ok = r.Next(t)
	}
	return out
}

// ShortestGap returns the shortest time between two consecutive
// occurrences among the first n at or after from (and after the anchor),
// and false when there are fewer than two. Schedules expand a frequency
// (a daily job at 5:15 and 5:45 runs 30 minutes apart), so quotas on how
// often a job may run look at this, not at frequency x interval.
func (r *Rule) ShortestGap(from time.Time, n int) (time.Duration, bool) {
	if r.once {
		return 0, false
	}
	if from.Before(r.anchor) {
		from = r.anchor
	}
	prev, ok := r.within(r.gen.atOrAfter(from))
	shortest, found := time.Duration(0), false
	for i := 1; ok && i < n; i++ {
		var next time.Time
		if next, ok = r.Next(prev); ok {
			if gap := next.Sub(prev); !found || gap < shortest {
				shortest, found = gap, true
			}
			prev = next
		}
	}
	return shortest, found
}

// skipExcluded returns t, or, when t falls on an excluded day of the
// rule's zone, the first occurrence after the days excluded.
func (r *Rule) skipExcluded(t time.Time, ok bool) (time.Time, bool) {
	for ok && len(r.excluded) > 0 {
		day := floorDiv(r.zone.wall(t.Unix()), secondsPerDay)
		i := sort.Search(len(r.excluded), func(i int) bool { return r.excluded[i].to >= day })
		if i == len(r.excluded) || r.excluded[i].from > day {
			return t, true
		}
		next := r.zone.instant((r.excluded[i].to + 1) * secondsPerDay)
		t, ok = r.gen.atOrAfter(time.Unix(next, 0))
	}
	return t, ok
}

// excludedDays returns the day ranges of valid exclusions, sorted and
// merged.
func excludedDays(list []Exclusion) []dayRange {
	var out []dayRange
	for _, e := range list {
		from, to := e.From, e.To
		if e.Date != "" {
			from, to = e.Date, e.Date
		}
		f, _ := time.Parse(time.DateOnly, from)
		l, _ := time.Parse(time.DateOnly, to)
		out = append(out, dayRange{civilDays(f.Date()), civilDays(l.Date())})
	}
	slices.SortFunc(out, func(a, b dayRange) int { return cmp.Compare(a.from, b.from) })
	merged := out[:0]
	for _, d := range out {
		if n := len(merged); n > 0 && d.from <= merged[n-1].to+1 {
			merged[n-1].to = max(merged[n-1].to, d.to)
			continue
		}
		merged = append(merged, d)
	}
	return merged
}
