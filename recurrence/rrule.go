package recurrence

import (
	"math/bits"
	"slices"
	"sync/atomic"
	"time"
)

// rruleGen expands one RRULE of RFC 5545 from its DTSTART into instances:
// wall-clock seconds in the rule's zone, in order. Which of them exist,
// and at which instants, is the zone's business (rruleSource).
//
// The expansion is RFC 5545's table read as dateutil reads it: a period
// (a year, month, week, day, hour, minute or second, every INTERVAL-th
// from DTSTART's) holds every day of the period that passes the day parts
// (BYMONTH, BYWEEKNO, BYYEARDAY, BYMONTHDAY, BYDAY) at every time the time
// parts give, and BYSETPOS picks among them. A day part that expands a
// frequency (BYDAY of a week) and one that limits it (BYMONTH of a day)
// are both a filter on the period's days, so one year mask per kind of
// year answers every frequency.
type rruleGen struct {
	spec *rruleSpec
	zone zone
	// skipGaps: wall times the zone skips are no instances (RFC 5545,
	// or the DST policy's skip).
	skipGaps bool
	freq     rfreq
	every    int64
	dtWall   int64 // DTSTART, wall-clock seconds
	dtDay    int64
	wkst     int

	// Day-based frequencies: the seconds of the day (BYHOUR x BYMINUTE x
	// BYSECOND, DTSTART's where absent), sorted.
	times []int32
	// Sub-daily frequencies: the offsets within a period (HOURLY: minutes
	// x seconds; MINUTELY: seconds; SECONDLY: 0) and the filters on the
	// period's hour, minute and second (all bits set where absent).
	rel        []int32
	hourOK     uint32
	minuteOK   uint64
	secondOK   uint64
	monthDays  []int // BYMONTHDAY, or DTSTART's day by default
	byMonth    uint16
	plainDays  uint8 // BYDAY without ordinal, bit 0 = Monday
	ordinals   []weekdayNum
	byYearDay  []int
	byWeekNo   []int
	hasDayPart bool
	// empty: no period can hold an instance (no time of the day, or
	// BYSETPOS only past the most a period holds).
	empty bool

	// lastWall bounds instances (COUNT, or a floating or date UNTIL);
	// untilUTC bounds instants (a UTC UNTIL).
	lastWall int64
	untilUTC int64

	// masks caches the days a year selects, by kind of year
	// (yearKind): bit i of a mask is day i of the year.
	masks [56]atomic.Pointer[yearMask]
	// gaps caches gapsOf by year (slot y mod 4).
	gaps [4]atomic.Pointer[yearGaps]
}

// yearMask is a set of days of a year, bit i for day i (0 = January 1st).
type yearMask [6]uint64

// rruleBudget bounds the candidates one search looks at: a rule whose
// alignment of INTERVAL and filters makes matches rarer than that within
// reach is treated as having none (Compile refuses it as never occurring).
const rruleBudget = 1 << 17

func newRRuleGen(spec *rruleSpec, z zone, dtWall int64) *rruleGen {
	g := &rruleGen{spec: spec, zone: z, skipGaps: z.gap == DSTSkip, freq: spec.freq, every: int64(spec.interval), dtWall: dtWall,
		wkst: spec.wkst, lastWall: rruleUntilNone, untilUTC: rruleUntilNone}
	g.dtDay = floorDiv(dtWall, secondsPerDay)
	sod := dtWall - g.dtDay*secondsPerDay
	dtH, dtM, dtS := int(sod/secondsPerHour), int(sod/secondsPerMinute%60), int(sod%60)
	_, dtMonth, dtMD := civilDate(g.dtDay)

	g.setTimes(spec, maskValues(uint64(spec.byHour), dtH, 24), maskValues(spec.byMinute, dtM, 60), maskValues(spec.bySecond, dtS, 60))
	g.setDays(spec, dtMonth, dtMD)
	g.empty = len(g.times)+len(g.rel) == 0 || !g.positionsFit()
	return g
}

// setTimes sets the times of the day (day-based frequencies), or the
// offsets within a period and the filters (sub-daily ones).
func (g *rruleGen) setTimes(spec *rruleSpec, hours, minutes, seconds []int) {
	g.hourOK, g.minuteOK, g.secondOK = 1<<24-1, 1<<60-1, 1<<60-1
	switch g.freq {
	case hourly:
		g.rel = product(nil, minutes, seconds, 60)
		if spec.byHour != 0 {
			g.hourOK = spec.byHour
		}
	case minutely:
		g.rel = product(nil, []int{0}, seconds, 0)
		if spec.byHour != 0 {
			g.hourOK = spec.byHour
		}
		if spec.byMinute != 0 {
			g.minuteOK = spec.byMinute
		}
	case secondly:
		g.rel = []int32{0}
		if spec.byHour != 0 {
			g.hourOK = spec.byHour
		}
		if spec.byMinute != 0 {
			g.minuteOK = spec.byMinute
		}
		if spec.bySecond != 0 {
			g.secondOK = spec.bySecond & (1<<60 - 1)
		}
	default:
		for _, h := range hours {
			g.times = product(g.times, minutes, seconds, 60)
			for i := len(g.times) - len(minutes)*len(seconds); i < len(g.times); i++ {
				g.times[i] += int32(h * secondsPerHour)
			}
		}
		slices.Sort(g.times)
	}

}

// setDays sets the day parts, DTSTART's month and day standing in where
// a rule has none.
func (g *rruleGen) setDays(spec *rruleSpec, dtMonth time.Month, dtMD int) {
	g.byMonth, g.monthDays = spec.byMonth, spec.byMonthDay
	g.byYearDay, g.byWeekNo = spec.byYearDay, spec.byWeekNo
	for _, d := range spec.byDay {
		if d.n == 0 {
			g.plainDays |= 1 << d.wd
		} else {
			g.ordinals = append(g.ordinals, d)
		}
	}
	// RFC 5545 leaves the days of a rule without day parts to DTSTART;
	// dateutil and its ports fill them in so.
	if len(spec.byWeekNo)+len(spec.byYearDay)+len(spec.byMonthDay)+len(spec.byDay) == 0 {
		switch g.freq {
		case yearly:
			if g.byMonth == 0 {
				g.byMonth = 1 << dtMonth
			}
			g.monthDays = []int{dtMD}
		case monthly:
			g.monthDays = []int{dtMD}
		case weekly:
			g.plainDays = 1 << mondayIndex(g.dtDay)
		}
	}
	g.hasDayPart = g.byMonth != 0 || len(g.monthDays) > 0 || g.plainDays != 0 || len(g.ordinals) > 0 ||
		len(g.byYearDay) > 0 || len(g.byWeekNo) > 0
}

// maskValues returns the values 0..n-1 set in mask (60 is never one), or
// def alone when mask is empty.
func maskValues(mask uint64, def, n int) []int {
	if mask == 0 {
		return []int{def}
	}
	var out []int
	for v := range n {
		if mask&(1<<v) != 0 {
			out = append(out, v)
		}
	}
	return out
}

// product appends a*unit + b for every a, b (both sorted: so is the result).
func product(out []int32, as, bs []int, unit int) []int32 {
	for _, a := range as {
		for _, b := range bs {
			out = append(out, int32(a*unit+b))
		}
	}
	return out
}

// nextLocal returns the first instance at or after wall second w, and
// false when none is left before lastWall or within the search's bounds.
// *budget counts the candidates looked at.
func (g *rruleGen) nextLocal(w int64, budget *int) (int64, bool) {
	w = max(w, g.dtWall)
	if w > g.lastWall || w > maxWall || g.empty {
		return 0, false
	}
	var s int64
	var ok bool
	if g.freq >= daily {
		s, ok = g.nextDayBased(w, budget)
	} else {
		s, ok = g.nextSubDaily(w, budget)
	}
	if !ok || s > g.lastWall {
		return 0, false
	}
	return s, true
}

// maxWall is the last wall-clock second the search reaches: no instance
// after the year 9999 is made.
var maxWall = maxUnix + secondsPerDay

// periodOf returns the period of a day-based frequency that holds day d:
// its first and last day, and the first day of the next aligned period
// when this one is not aligned (0 when it is).
func (g *rruleGen) periodOf(d int64) (first, last, nextAligned int64) {
	switch g.freq {
	case daily:
		if k := d - g.dtDay; floorMod(k, g.every) != 0 {
			return d, d, g.dtDay + ceilDiv(k, g.every)*g.every
		}
		return d, d, 0
	case weekly:
		start := d - int64((mondayIndex(d)-g.wkst+7)%7)
		dtStart := g.dtDay - int64((mondayIndex(g.dtDay)-g.wkst+7)%7)
		if k := (start - dtStart) / 7; floorMod(k, g.every) != 0 {
			return start, start + 6, dtStart + 7*ceilDiv(k, g.every)*g.every
		}
		return start, start + 6, 0
	case monthly:
		y, m, _ := civilDate(d)
		dy, dm, _ := civilDate(g.dtDay)
		i, di := monthIndex(y, m), monthIndex(dy, dm)
		first, last = civilDays(y, m, 1), civilDays(y, m, daysIn(y, m))
		if k := i - di; floorMod(k, g.every) != 0 {
			ny, nm := monthOf(di + ceilDiv(k, g.every)*g.every)
			return first, last, civilDays(ny, nm, 1)
		}
		return first, last, 0
	default:
		y, _, _ := civilDate(d)
		dy, _, _ := civilDate(g.dtDay)
		first, last = civilDays(y, 1, 1), civilDays(y+1, 1, 1)-1
		if k := int64(y - dy); floorMod(k, g.every) != 0 {
			return first, last, civilDays(dy+int(ceilDiv(k, g.every)*g.every), 1, 1)
		}
		return first, last, 0
	}
}

// nextDayBased is nextLocal for DAILY to YEARLY.
func (g *rruleGen) nextDayBased(w int64, budget *int) (int64, bool) {
	d := floorDiv(w, secondsPerDay)
	tod := w - d*secondsPerDay
	var buf [16]int64
	for ; *budget > 0; *budget-- {
		dd, ok := g.nextSelected(d, min(maxWall, g.lastWall)/secondsPerDay)
		if !ok {
			return 0, false
		}
		if dd != d {
			d, tod = dd, 0
		}
		first, last, next := g.periodOf(d)
		if next != 0 {
			d, tod = next, 0
			continue
		}
		if len(g.spec.bySetPos) == 0 {
			if j := searchOffsets(g.times, tod); j < len(g.times) {
				return d*secondsPerDay + int64(g.times[j]), true
			}
			d, tod = d+1, 0
			continue
		}
		for _, c := range g.setPositions(first, last, 0, g.times, buf[:0]) {
			if c >= d*secondsPerDay+tod {
				return c, true
			}
		}
		d, tod = last+1, 0
	}
	return 0, false
}

// nextSubDaily is nextLocal for SECONDLY, MINUTELY and HOURLY: periods
// of one unit, every INTERVAL-th from DTSTART's, counted on the wall
// clock as dateutil counts them.
func (g *rruleGen) nextSubDaily(w int64, budget *int) (int64, bool) {
	unit := int64([]int{1, secondsPerMinute, secondsPerHour}[g.freq])
	q0 := floorDiv(g.dtWall, unit)
	q := floorDiv(w, unit)
	within := w - q*unit
	var buf [16]int64
	for ; *budget > 0; *budget-- {
		if k := q - q0; floorMod(k, g.every) != 0 {
			q, within = q0+ceilDiv(k, g.every)*g.every, 0
		}
		start := q * unit
		if start > maxWall {
			return 0, false
		}
		day := floorDiv(start, secondsPerDay)
		if !g.selected(day) {
			nd, ok := g.nextSelected(day+1, min(maxWall, g.lastWall)/secondsPerDay)
			if !ok {
				return 0, false
			}
			q, within = ceilDiv(nd*secondsPerDay, unit), 0
			continue
		}
		if slot := g.nextSlot(start, day); slot != start {
			q, within = ceilDiv(slot, unit), 0
			continue
		}
		if len(g.spec.bySetPos) == 0 {
			if j := searchOffsets(g.rel, within); j < len(g.rel) {
				return start + int64(g.rel[j]), true
			}
		} else {
			base := start - day*secondsPerDay
			for _, c := range g.setPositions(day, day, base, g.rel, buf[:0]) {
				if c >= start+within {
					return c, true
				}
			}
		}
		q, within = q+1, 0
	}
	return 0, false
}

// nextSlot returns the first wall second at or after start (a period's
// start on day) whose hour, minute and second pass the filters the
// frequency has; the next day's start when none is left on day.
func (g *rruleGen) nextSlot(start, day int64) int64 {
	l0 := day * secondsPerDay
	sod := start - l0
	h, m, s := int(sod/secondsPerHour), int(sod/secondsPerMinute%60), int(sod%60)
	if g.hourOK&(1<<h) == 0 {
		nh, ok := nextBit(uint64(g.hourOK), h+1, 24)
		if !ok {
			return l0 + secondsPerDay
		}
		return l0 + int64(nh)*secondsPerHour
	}
	if g.freq <= minutely && g.minuteOK&(1<<m) == 0 {
		nm, ok := nextBit(g.minuteOK, m+1, 60)
		if !ok {
			return l0 + int64(h+1)*secondsPerHour
		}
		return l0 + int64(h)*secondsPerHour + int64(nm)*secondsPerMinute
	}
	if g.freq == secondly && g.secondOK&(1<<s) == 0 {
		ns, ok := nextBit(g.secondOK, s+1, 60)
		if !ok {
			return l0 + int64(h)*secondsPerHour + int64(m+1)*secondsPerMinute
		}
		return l0 + int64(h)*secondsPerHour + int64(m)*secondsPerMinute + int64(ns)
	}
	return start
}

// nextBit returns the first bit at or after from, below n, set in mask.
func nextBit(mask uint64, from, n int) (int, bool) {
	if from >= n {
		return 0, false
	}
	rest := mask >> from << from & (1<<n - 1)
	if rest == 0 {
		return 0, false
	}
	return bits.TrailingZeros64(rest), true
}

// setPositions returns, sorted, the instances BYSETPOS picks from a
// period: the selected days of [d0, d1] at base + each of times. Wall
// times the zone skips are no instances of the set (RFC 5545 ignores
// them) when the rule's DST policy skips them: gapped lists those.
func (g *rruleGen) setPositions(d0, d1, base int64, times []int32, buf []int64) []int64 {
	// A period of up to 64 days in one year (a month, a week, a day) is
	// read as one word of its year's mask.
	win, small := g.window(d0, d1)
	nDays := bits.OnesCount64(win)
	if !small {
		nDays = g.countSelected(d0, d1)
	}
	total := nDays * len(times)
	if total == 0 {
		return buf
	}
	removed := g.gapped(d0, d1, base, times)
	kept := total - len(removed)
	for _, p := range g.spec.bySetPos {
		idx := p - 1
		if p < 0 {
			idx = kept + p
		}
		if idx < 0 || idx >= kept {
			continue
		}
		for _, r := range removed {
			if r > idx {
				break
			}
			idx++
		}
		var day int64
		if small {
			w := win
			for range idx / len(times) {
				w &= w - 1
			}
			day = d0 + int64(bits.TrailingZeros64(w))
		} else {
			day = g.kthSelected(d0, d1, idx/len(times))
		}
		c := day*secondsPerDay + base + int64(times[idx%len(times)])
		if !slices.Contains(buf, c) {
			buf = append(buf, c)
		}
	}
	slices.Sort(buf)
	return buf
}

// gapped returns, sorted, the indexes among the candidates of a period
// (selected days of [d0, d1] x base + times) of the wall times the zone
// skips, when the rule skips them.
func (g *rruleGen) gapped(d0, d1, base int64, times []int32) []int {
	if !g.skipGaps || g.zone.fixed {
		return nil
	}
	var out []int
	y0, _, _ := civilDate(d0)
	y1, _, _ := civilDate(d1)
	for y := y0; y <= y1; y++ {
		for _, gap := range g.gapsOf(y) {
			out = g.gapIndexes(out, d0, d1, base, times, gap[0], gap[1])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// yearGaps are the wall-clock ranges [from, to) a zone skips around a
// year (from two days before it to two days after).
type yearGaps struct {
	year int
	gaps [][2]int64
}

// gapsOf returns the wall-clock ranges the zone skips around year y,
// cached: walking the zone's offsets is most of what a BYSETPOS period
// costs otherwise.
func (g *rruleGen) gapsOf(y int) [][2]int64 {
	slot := &g.gaps[y&3]
	if c := slot.Load(); c != nil && c.year == y {
		return c.gaps
	}
	c := &yearGaps{year: y}
	end := (civilDays(y+1, 1, 1) + 2) * secondsPerDay
	sp := g.zone.span((civilDays(y, 1, 1) - 2) * secondsPerDay)
	for sp.end <= end {
		t := sp.end
		next := g.zone.span(t)
		if next.off > sp.off {
			c.gaps = append(c.gaps, [2]int64{t + sp.off, t + next.off})
		}
		sp = next
	}
	slot.Store(c)
	return c.gaps
}

// gapIndexes appends the indexes of the candidates whose wall is in
// [g0, g1).
func (g *rruleGen) gapIndexes(out []int, d0, d1, base int64, times []int32, g0, g1 int64) []int {
	for dd := max(d0, floorDiv(g0, secondsPerDay)); dd <= min(d1, floorDiv(g1-1, secondsPerDay)); dd++ {
		if !g.selected(dd) {
			continue
		}
		rank := g.countSelected(d0, dd-1)
		for i, t := range times {
			if w := dd*secondsPerDay + base + int64(t); w >= g0 && w < g1 {
				out = append(out, rank*len(times)+i)
			}
		}
	}
	return out
}

// positionsFit reports whether some BYSETPOS position is within the most
// instances a period can hold (true without BYSETPOS).
func (g *rruleGen) positionsFit() bool {
	if len(g.spec.bySetPos) == 0 {
		return true
	}
	most := len(g.rel)
	if g.freq >= daily {
		most = len(g.times) * map[rfreq]int{daily: 1, weekly: 7, monthly: 31, yearly: 366}[g.freq]
	}
	for _, p := range g.spec.bySetPos {
		if p <= most && -p <= most {
			return true
		}
	}
	return false
}
