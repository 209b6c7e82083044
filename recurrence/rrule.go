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

	hours := maskValues(uint64(spec.byHour), dtH, 24)
	minutes := maskValues(spec.byMinute, dtM, 60)
	seconds := maskValues(spec.bySecond, dtS, 60)
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
	g.empty = len(g.times)+len(g.rel) == 0 || !g.positionsFit()
	g.hasDayPart = g.byMonth != 0 || len(g.monthDays) > 0 || g.plainDays != 0 || len(g.ordinals) > 0 ||
		len(g.byYearDay) > 0 || len(g.byWeekNo) > 0
	return g
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

// yearKind names the kind of year y for the masks: the weekday of its
// January 1st, and whether it, the year before and the year after are
// leap years (week numbers look at both neighbours).
func yearKind(y int) int {
	k := mondayIndex(civilDays(y, 1, 1)) * 8
	if isLeap(y) {
		k += 4
	}
	if isLeap(y - 1) {
		k += 2
	}
	if isLeap(y + 1) {
		k++
	}
	return k
}

// mask returns the days year y selects.
func (g *rruleGen) mask(y int) *yearMask {
	k := yearKind(y)
	if m := g.masks[k].Load(); m != nil {
		return m
	}
	m := g.computeMask(y)
	g.masks[k].Store(m)
	return m
}

// computeMask applies the day parts to every day of year y.
func (g *rruleGen) computeMask(y int) *yearMask {
	m := &yearMask{}
	jan1 := civilDays(y, 1, 1)
	ylen := 365
	if isLeap(y) {
		ylen = 366
	}
	var ws, wsPrev, wsNext, wsNext2 int64
	if len(g.byWeekNo) > 0 {
		ws, wsPrev, wsNext, wsNext2 = g.week1(y), g.week1(y-1), g.week1(y+1), g.week1(y+2)
	}
	i := 0
	for month := 1; month <= 12; month++ {
		dim := daysIn(y, time.Month(month))
		if g.byMonth != 0 && g.byMonth&(1<<month) == 0 {
			i += dim
			continue
		}
		for md := 1; md <= dim; md, i = md+1, i+1 {
			d := jan1 + int64(i)
			if len(g.monthDays) > 0 && !slices.Contains(g.monthDays, md) && !slices.Contains(g.monthDays, md-dim-1) {
				continue
			}
			if len(g.byYearDay) > 0 && !slices.Contains(g.byYearDay, i+1) && !slices.Contains(g.byYearDay, i-ylen) {
				continue
			}
			if len(g.byWeekNo) > 0 && !g.weekNoMatches(d, ws, wsPrev, wsNext, wsNext2) {
				continue
			}
			if (g.plainDays != 0 || len(g.ordinals) > 0) && !g.dayMatches(d, i, ylen, md, dim) {
				continue
			}
			m[i/64] |= 1 << (i % 64)
		}
	}
	return m
}

// week1 returns the first day of week 1 of year y: the first week,
// starting on WKST, with at least four days in y.
func (g *rruleGen) week1(y int) int64 {
	jan1 := civilDays(y, 1, 1)
	off := int64((mondayIndex(jan1) - g.wkst + 7) % 7)
	if off <= 3 {
		return jan1 - off
	}
	return jan1 + 7 - off
}

// weekNoMatches reports whether day d's week number (in the week-year it
// belongs to), or its count from that year's end, is in BYWEEKNO.
func (g *rruleGen) weekNoMatches(d, ws, wsPrev, wsNext, wsNext2 int64) bool {
	var n, total int64
	switch {
	case d < ws:
		n, total = (d-wsPrev)/7+1, (ws-wsPrev)/7
	case d >= wsNext:
		n, total = 1, (wsNext2-wsNext)/7
	default:
		n, total = (d-ws)/7+1, (wsNext-ws)/7
	}
	return slices.Contains(g.byWeekNo, int(n)) || slices.Contains(g.byWeekNo, int(n-total-1))
}

// dayMatches applies BYDAY to day d, day i of a year of ylen days and day
// md of a month of dim days: a plain weekday matches every such day; an
// ordinal counts within the month (MONTHLY, or YEARLY with BYMONTH) or
// the year.
func (g *rruleGen) dayMatches(d int64, i, ylen, md, dim int) bool {
	wd := mondayIndex(d)
	if g.plainDays&(1<<wd) != 0 {
		return true
	}
	pos, size := i, ylen
	if g.freq == monthly || g.spec.byMonth != 0 {
		pos, size = md-1, dim
	}
	first, last := pos/7+1, -((size-1-pos)/7 + 1)
	for _, o := range g.ordinals {
		if o.wd == wd && (o.n == first || o.n == last) {
			return true
		}
	}
	return false
}

// selected reports whether day d passes the day parts.
func (g *rruleGen) selected(d int64) bool {
	if !g.hasDayPart {
		return true
	}
	y, _, _ := civilDate(d)
	i := d - civilDays(y, 1, 1)
	return g.mask(y)[i/64]&(1<<(i%64)) != 0
}

// nextSelected returns the first selected day in [d, limit], and false
// when there is none.
func (g *rruleGen) nextSelected(d, limit int64) (int64, bool) {
	if !g.hasDayPart {
		return d, d <= limit
	}
	for d <= limit {
		y, _, _ := civilDate(d)
		jan1 := civilDays(y, 1, 1)
		m := g.mask(y)
		for i := d - jan1; i < 366; i = (i/64 + 1) * 64 {
			if word := m[i/64] >> (i % 64); word != 0 {
				day := jan1 + i + int64(bits.TrailingZeros64(word))
				return day, day <= limit
			}
		}
		d = civilDays(y+1, 1, 1)
	}
	return 0, false
}

// countSelected returns how many days of [d0, d1] are selected.
func (g *rruleGen) countSelected(d0, d1 int64) int {
	if d1 < d0 {
		return 0
	}
	if !g.hasDayPart {
		return int(d1 - d0 + 1)
	}
	n := 0
	for d0 <= d1 {
		y, _, _ := civilDate(d0)
		jan1 := civilDays(y, 1, 1)
		end := min(d1, civilDays(y+1, 1, 1)-1)
		m := g.mask(y)
		for i := d0 - jan1; i <= end-jan1; {
			word := m[i/64] >> (i % 64)
			span := min(64-i%64, end-jan1-i+1)
			if span < 64 {
				word &= 1<<span - 1
			}
			n += bits.OnesCount64(word)
			i += span
		}
		d0 = end + 1
	}
	return n
}

// kthSelected returns the k-th (0-based) selected day of [d0, d1]; k is
// below countSelected.
func (g *rruleGen) kthSelected(d0, d1 int64, k int) int64 {
	if !g.hasDayPart {
		return d0 + int64(k)
	}
	d := d0
	for {
		d, _ = g.nextSelected(d, d1)
		if k == 0 {
			return d
		}
		k--
		d++
	}
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
	nDays := g.countSelected(d0, d1)
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
		day := g.kthSelected(d0, d1, idx/len(times))
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
	end := (d1 + 2) * secondsPerDay
	sp := g.zone.span((d0 - 2) * secondsPerDay)
	for sp.end <= end {
		t := sp.end
		next := g.zone.span(t)
		if next.off > sp.off {
			out = g.gapIndexes(out, d0, d1, base, times, t+sp.off, t+next.off)
		}
		sp = next
	}
	slices.Sort(out)
	return out
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
