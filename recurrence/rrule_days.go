package recurrence

import (
	"math/bits"
	"slices"
	"time"
)

// The days an RRULE selects: its day parts (BYMONTH, BYWEEKNO,
// BYYEARDAY, BYMONTHDAY, BYDAY) applied to every day of a year once per
// kind of year, then read as bit masks.

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

// window returns the selected days of [d0, d1] as bits from d0, and
// false when the range is longer than 64 days or spans two years.
func (g *rruleGen) window(d0, d1 int64) (uint64, bool) {
	n := d1 - d0 + 1
	if n > 64 {
		return 0, false
	}
	if !g.hasDayPart {
		return ^uint64(0) >> (64 - n), true
	}
	y, _, _ := civilDate(d0)
	jan1 := civilDays(y, 1, 1)
	if d1 >= civilDays(y+1, 1, 1) {
		return 0, false
	}
	m := g.mask(y)
	i := d0 - jan1
	w := m[i/64] >> (i % 64)
	if i%64 != 0 && i/64+1 < int64(len(m)) {
		w |= m[i/64+1] << (64 - i%64)
	}
	if n < 64 {
		w &= 1<<n - 1
	}
	return w, true
}
