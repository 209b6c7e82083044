package recurrence

import (
	"math"
	"math/bits"
	"sort"
	"time"
)

// generator enumerates the occurrence set of a recurrence: every instant of
// the rule that is at or after the anchor A. Instants are whole Unix seconds
// plus A's fraction of a second, which every occurrence shares.
type generator struct {
	freq     Frequency
	interval int64
	zone     zone
	aSec     int64 // A in Unix seconds
	nanos    int   // A's fraction of a second
	aDay     int64 // A's wall-clock day number in the zone

	// Minute: allowed minutes of the day (filters) as a distance table:
	// minuteDist[q] is how many steps from minute-of-day q reach an
	// allowed one, -1 for never. Second: the same table in minutes. Nil
	// when nothing is filtered.
	minuteDist []int16

	// Hour: the first hour's start, the occurrence offsets within an hour
	// (MINUTES*60 + SECOND, sorted), and the hours filter (bit h).
	hourStart   int64
	hourOffsets []int32
	hourFilter  uint32

	// Day, Week, Month, Year: the wall-clock seconds of the day to run at
	// (HOURS x MINUTES x SECOND, sorted) and the day selection.
	times []int32
	days  daySelector
	// secs, for a cron with a second field, are the seconds of each
	// minute it runs at (bit s); times are then its minutes' starts, so a
	// day's times stay at most 1440 entries, not 86400. Zero: times are
	// the times.
	secs uint64
	// anchorRuns is set when A's own wall-clock time is on the schedule: A
	// is then an occurrence even if A is the later instant of a repeated
	// hour, which the DST rule alone would place before A (rule 4).
	anchorRuns bool
}

// maxUnix bounds the search: occurrences after year 9999 are never made.
var maxUnix = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()

// after returns the first occurrence strictly after t.
func (g *generator) after(t time.Time) (time.Time, bool) { return g.from(t, true) }

// atOrAfter returns the first occurrence at or after t.
func (g *generator) atOrAfter(t time.Time) (time.Time, bool) { return g.from(t, false) }

func (g *generator) from(t time.Time, strict bool) (time.Time, bool) {
	// An occurrence (s, g.nanos) comes at or after (after) t when s > t's
	// second, or s equals it and the fraction compares so.
	minSec, n := t.Unix(), t.Nanosecond()
	if g.nanos < n || (strict && g.nanos == n) {
		minSec++
	}
	minSec = max(minSec, g.aSec)
	if minSec == g.aSec && g.anchorRuns {
		return time.Unix(g.aSec, int64(g.nanos)).UTC(), true
	}
	if minSec > maxUnix {
		return time.Time{}, false
	}
	var s int64
	var ok bool
	switch g.freq {
	case Second:
		s, ok = g.nextSecond(minSec)
	case Minute:
		s, ok = g.nextMinute(minSec)
	case Hour:
		s, ok = g.nextHour(minSec)
	default:
		s, ok = g.nextCalendar(minSec)
	}
	if !ok || s > maxUnix {
		return time.Time{}, false
	}
	return time.Unix(s, int64(g.nanos)).UTC(), true
}

// maxSpans bounds walks over a zone's offset changes: two a year for a
// whole calendar cycle, and then some.
const maxSpans = 4 * cycleYears

// nextMinute: the instants A + k*interval minutes whose wall-clock hour
// and minute pass the filters.
func (g *generator) nextMinute(minSec int64) (int64, bool) {
	step := g.interval * secondsPerMinute
	k := ceilDiv(minSec-g.aSec, step)
	if g.minuteDist == nil {
		return g.aSec + k*step, true
	}
	for range maxSpans {
		s := g.aSec + k*step
		if s > maxUnix {
			return 0, false
		}
		sp := g.zone.span(s)
		q := floorMod(floorDiv(s+sp.off, secondsPerMinute), 24*60)
		if j := g.minuteDist[q]; j >= 0 {
			if c := s + int64(j)*step; c < sp.end {
				return c, true
			}
		}
		if sp.end == math.MaxInt64 {
			return 0, false
		}
		k = ceilDiv(sp.end-g.aSec, step)
	}
	return 0, false
}

// nextHour: in the hours starting at hourStart + k*interval hours, the
// instants hour start + offset whose wall-clock hour passes the filter.
func (g *generator) nextHour(minSec int64) (int64, bool) {
	step := g.interval * secondsPerHour
	k := max(0, floorDiv(minSec-g.hourStart, step))
	if g.hourFilter == 0 {
		base := g.hourStart + k*step
		if i := searchOffsets(g.hourOffsets, minSec-base); i < len(g.hourOffsets) {
			return base + int64(g.hourOffsets[i]), true
		}
		return base + step + int64(g.hourOffsets[0]), true
	}
	// While the offset holds, the filter's pattern repeats within 24
	// periods: a walk of 25 finds a match or proves there is none before
	// the offset changes.
	for range maxSpans {
		base := g.hourStart + k*step
		if base > maxUnix {
			return 0, false
		}
		sp := g.zone.span(base)
		for range 25 {
			if s, ok := g.hourMatch(base, minSec, sp); ok {
				return s, true
			}
			k++
			if base = g.hourStart + k*step; base >= sp.end {
				break
			}
		}
		if base < sp.end {
			if sp.end == math.MaxInt64 {
				return 0, false
			}
			k = max(k, floorDiv(sp.end-g.hourStart, step))
		}
	}
	return 0, false
}

// hourMatch returns the first occurrence of the hour starting at base that
// is at or after minSec and whose wall-clock hour is allowed.
func (g *generator) hourMatch(base, minSec int64, sp span) (int64, bool) {
	lo := searchOffsets(g.hourOffsets, minSec-base)
	for _, o := range g.hourOffsets[lo:] {
		s := base + int64(o)
		off := sp.off
		if s >= sp.end {
			off = g.zone.offset(s)
		}
		h := floorMod(floorDiv(s+off, secondsPerHour), 24)
		if g.hourFilter&(1<<h) != 0 {
			return s, true
		}
	}
	return 0, false
}

// searchOffsets returns the index of the first offset >= x.
func searchOffsets(offsets []int32, x int64) int {
	if x <= int64(offsets[0]) {
		return 0
	}
	return sort.Search(len(offsets), func(i int) bool { return int64(offsets[i]) >= x })
}

// nextCalendar: Day, Week, Month and Year place g.times on selected days.
func (g *generator) nextCalendar(minSec int64) (int64, bool) {
	var buf [4]piece
	// A time of the day before minSec's may land after it across a gap.
	d := floorDiv(g.zone.wall(minSec), secondsPerDay) - 1
	for range 4 {
		cd, ok := g.days.next(max(d, g.aDay))
		if !ok {
			return 0, false
		}
		ps := g.zone.dayPieces(cd*secondsPerDay, buf[:0])
		s, found := g.dayFirst(cd, minSec, ps)
		if found {
			if len(ps) > 1 {
				// Across a transition a later day's time can map before
				// this one's (a gap at midnight): look at the next day too.
				if nd, ok := g.days.next(cd + 1); ok {
					ps = g.zone.dayPieces(nd*secondsPerDay, buf[:0])
					if s2, ok := g.dayFirst(nd, minSec, ps); ok && s2 < s {
						s = s2
					}
				}
			}
			return s, true
		}
		d = cd + 1
	}
	return 0, false
}

// dayFirst returns the earliest instant >= minSec among the day's times.
func (g *generator) dayFirst(day, minSec int64, ps []piece) (int64, bool) {
	l0 := day * secondsPerDay
	best, found := int64(math.MaxInt64), false
	for _, p := range ps {
		lo, hi := max(p.from, l0), min(p.to, l0+secondsPerDay)
		if lo >= hi {
			continue
		}
		if p.atTransition {
			// Any of the day's times in the gap runs at the transition.
			if tt, ok := g.timeAtOrAfter(lo - l0); ok && l0+tt < hi && p.at >= minSec && p.at < best {
				best, found = p.at, true
			}
			continue
		}
		// wall - off >= minSec and wall >= lo, wall < hi.
		tt, ok := g.timeAtOrAfter(max(lo, minSec+p.off) - l0)
		if !ok {
			continue
		}
		w := l0 + tt
		if w >= hi {
			continue
		}
		if s := w - p.off; s < best {
			best, found = s, true
		}
	}
	return best, found
}

// timeAtOrAfter returns the first of the day's times (a second of the
// day) at or after x, and false when none is.
func (g *generator) timeAtOrAfter(x int64) (int64, bool) {
	if g.secs == 0 {
		if j := searchOffsets(g.times, x); j < len(g.times) {
			return int64(g.times[j]), true
		}
		return 0, false
	}
	// The minute that holds x, or the first after it.
	j := searchOffsets(g.times, x-secondsPerMinute+1)
	if j == len(g.times) {
		return 0, false
	}
	if m := int64(g.times[j]); m < x {
		if later := g.secs >> (x - m); later != 0 {
			return x + int64(bits.TrailingZeros64(later)), true
		}
		if j++; j == len(g.times) {
			return 0, false
		}
	}
	return int64(g.times[j]) + int64(bits.TrailingZeros64(g.secs)), true
}

// hasTime reports whether x is one of the day's times.
func (g *generator) hasTime(x int64) bool {
	t, ok := g.timeAtOrAfter(x)
	return ok && t == x
}
