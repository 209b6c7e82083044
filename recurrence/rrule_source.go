package recurrence

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// rruleSource is the occurrence set of an rrule text: the instants of
// its RRULE lines' instances and of its RDATE values, less its EXDATE
// values, at or after the anchor, at whole seconds.
type rruleSource struct {
	zone    zone
	gens    []*rruleGen
	rdates  []int64 // instants, sorted
	exdates []int64 // instants, sorted
	exdays  []int64 // wall-clock day numbers (EXDATE;VALUE=DATE), sorted
	aSec    int64   // the first whole second at or after the anchor
}

// rruleAnchor is what an rrule text's DTSTART, or its absence, makes of
// the rule's anchor and zone.
type rruleAnchor struct {
	dtWall int64
	anchor time.Time
}

// anchorOf returns the DTSTART of text read in zone z, or, without one,
// anchor a's wall clock in z.
func anchorOf(text *rruleText, z zone, a time.Time) rruleAnchor {
	dt := text.dtstart
	if dt == nil {
		return rruleAnchor{dtWall: z.wall(a.Unix()), anchor: a}
	}
	if dt.utc {
		return rruleAnchor{dtWall: z.wall(dt.wall), anchor: time.Unix(dt.wall, 0).UTC()}
	}
	return rruleAnchor{dtWall: dt.wall, anchor: time.Unix(z.instant(dt.wall), 0).UTC()}
}

// newRRuleSource builds the source of a parsed rrule text read in zone z
// (its DST policy set: RFC 5545's skip of nonexistent times unless the
// job chose otherwise) from anchor a (the job's startTime or creation,
// when the text has no DTSTART).
func newRRuleSource(text *rruleText, z zone, a time.Time) *rruleSource {
	at := anchorOf(text, z, a)
	src := &rruleSource{zone: z, aSec: at.anchor.Unix()}
	if at.anchor.Nanosecond() != 0 {
		src.aSec++
	}
	for _, spec := range text.rules {
		g := newRRuleGen(spec, z, at.dtWall)
		if u := spec.until; u != nil {
			switch {
			case u.utc:
				// A wall bound a day past the instant: nextLocal stops there,
				// and instants are compared with untilUTC exactly.
				g.untilUTC, g.lastWall = u.wall, u.wall+2*secondsPerDay
			case u.date:
				g.lastWall = u.wall + secondsPerDay - 1
			default:
				g.lastWall = u.wall
			}
		}
		if spec.count > 0 {
			g.lastWall = countBound(g, spec.count)
		}
		src.gens = append(src.gens, g)
	}
	for _, t := range text.rdates {
		src.rdates = append(src.rdates, icalInstant(t, z))
	}
	for _, t := range text.exdates {
		if t.date {
			src.exdays = append(src.exdays, floorDiv(t.wall, secondsPerDay))
			continue
		}
		src.exdates = append(src.exdates, icalInstant(t, z))
	}
	for _, l := range []*[]int64{&src.rdates, &src.exdates, &src.exdays} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return src
}

// icalInstant is the instant a DATE-TIME value names (RFC 5545 3.3.5: a
// local time that exists twice is its first instant, one that does not
// exist is read with the offset before the gap); a DATE is midnight.
func icalInstant(t icalTime, z zone) int64 {
	switch {
	case t.utc:
		return t.wall
	case t.loc != nil:
		return newZone(t.loc).instant(t.wall)
	}
	return z.instant(t.wall)
}

// countCache keeps the last instance of an RRULE with COUNT by rule,
// zone, DST policy and DTSTART: finding it walks every instance, and the
// job workflow compiles its rule for every occurrence it plans.
var (
	countCache sync.Map // string -> int64
	countSize  atomic.Int64
)

const countCacheMax = 4096

// countBound returns the wall second of the count-th instance of g that
// exists (RFC 5545: instances at a nonexistent local time are not
// counted), or of the last one found when a search ends first (there are
// fewer, or they are beyond a search's bounds): never more than count.
func countBound(g *rruleGen, count int) int64 {
	key := fmt.Sprintf("%s|%s|%s|%d|%s", g.zone.loc, g.zone.gap, g.zone.repeat, g.dtWall, specKey(g.spec))
	if v, ok := countCache.Load(key); ok {
		return v.(int64)
	}
	bound := g.dtWall - 1 // no instance at all
	w, n := g.dtWall, 0
	for n < count {
		budget := rruleBudget
		c, ok := g.nextLocal(w, &budget)
		if !ok {
			break
		}
		if !g.skipGaps || g.zone.exists(c) {
			n++
			bound = c
		}
		w = c + 1
	}
	if countSize.Add(1) > countCacheMax {
		countCache.Clear()
		countSize.Store(0)
	}
	countCache.Store(key, bound)
	return bound
}

// specKey identifies a parsed RRULE by its parts.
func specKey(s *rruleSpec) string {
	return fmt.Sprint(s.freq, s.interval, s.count, s.until, s.bySecond, s.byMinute, s.byHour, s.byMonth,
		s.byDay, s.byMonthDay, s.byYearDay, s.byWeekNo, s.bySetPos, s.wkst)
}

// exists reports whether wall-clock second w is shown by the zone's
// clocks at some instant.
func (z zone) exists(w int64) bool {
	if z.fixed {
		return true
	}
	for _, probe := range [2]int64{w - secondsPerDay, w + secondsPerDay} {
		if off := z.offset(probe); z.offset(w-off) == off {
			return true
		}
	}
	return false
}

func (r *rruleSource) after(t time.Time) (time.Time, bool)     { return r.from(t, true) }
func (r *rruleSource) atOrAfter(t time.Time) (time.Time, bool) { return r.from(t, false) }

// maxExclusionSteps bounds the steps over EXDATE values: each is passed
// once.
const maxExclusionSteps = 2*maxRRuleDates + 2

func (r *rruleSource) from(t time.Time, strict bool) (time.Time, bool) {
	minSec := t.Unix()
	if strict || t.Nanosecond() != 0 {
		minSec++
	}
	minSec = max(minSec, r.aSec)
	for range maxExclusionSteps {
		if minSec > maxUnix {
			return time.Time{}, false
		}
		s, ok := r.first(minSec)
		if !ok || s > maxUnix {
			return time.Time{}, false
		}
		if i, found := slices.BinarySearch(r.exdates, s); found {
			minSec = r.exdates[i] + 1
			continue
		}
		if len(r.exdays) > 0 {
			day := floorDiv(r.zone.wall(s), secondsPerDay)
			if _, found := slices.BinarySearch(r.exdays, day); found {
				minSec = max(s+1, r.zone.instant((day+1)*secondsPerDay))
				continue
			}
		}
		return time.Unix(s, 0).UTC(), true
	}
	return time.Time{}, false
}

// first returns the earliest instant at or after minSec of the RRULE
// lines and the RDATE values.
func (r *rruleSource) first(minSec int64) (int64, bool) {
	best, found := int64(math.MaxInt64), false
	if i := sort.Search(len(r.rdates), func(i int) bool { return r.rdates[i] >= minSec }); i < len(r.rdates) {
		best, found = r.rdates[i], true
	}
	for _, g := range r.gens {
		if s, ok := g.instantAtOrAfter(minSec); ok && s < best {
			best, found = s, true
		}
	}
	return best, found
}

// offsetRange returns the least and greatest offsets of the zone at the
// instants [a, b], and, when there is one offset, the end of its stretch.
func (z zone) offsetRange(a, b int64) (lo, hi, end int64) {
	sp := z.span(a)
	lo, hi = sp.off, sp.off
	for range 16 {
		if sp.end > b {
			break
		}
		sp = z.span(sp.end)
		lo, hi = min(lo, sp.off), max(hi, sp.off)
	}
	return lo, hi, sp.end
}

// instantAtOrAfter returns the earliest instant at or after minSec of the
// rule's instances. Instances come in wall-clock order; instants mostly
// do, but not across a transition (a shifted or doubled time), so the
// search goes on until no later instance can map before the best one.
func (g *rruleGen) instantAtOrAfter(minSec int64) (int64, bool) {
	z := g.zone
	// Every wall that maps at or after minSec is at least minSec plus the
	// least offset nearby (an instant's wall takes an offset of the day
	// before it at most).
	lo, hi, quietEnd := z.offsetRange(minSec-2*secondsPerDay, minSec+2*secondsPerDay)
	quiet := lo == hi
	budget := rruleBudget
	best, bestOK := int64(0), false
	var stopOff int64
	stopKnown := false
	var buf [4]piece
	var ps []piece
	psDay := int64(math.MinInt64)
	for w := minSec + lo; ; {
		if stopKnown && w-stopOff > best {
			return best, true
		}
		c, ok := g.nextLocal(w, &budget)
		if !ok {
			return best, bestOK
		}
		w = c + 1
		// A wall a day or more before the stretch's end has one instant;
		// nearer, the clocks may show it again after the transition.
		if quiet && c-lo < quietEnd-secondsPerDay {
			if s := c - lo; s >= minSec && s <= g.untilUTC && (!bestOK || s < best) {
				best, bestOK = s, true
			}
		} else {
			if day := floorDiv(c, secondsPerDay); day != psDay {
				ps, psDay = z.dayPieces(day*secondsPerDay, buf[:0]), day
			}
			for _, p := range ps {
				if c < p.from || c >= p.to {
					continue
				}
				s := c - p.off
				if p.atTransition {
					s = p.at
				}
				if s >= minSec && s <= g.untilUTC && (!bestOK || s < best) {
					best, bestOK = s, true
				}
			}
		}
		if bestOK && !stopKnown {
			// No wall above best plus the greatest offset near best maps
			// at or before best.
			stopOff, stopKnown = hi, true
			if !quiet || best+2*secondsPerDay >= quietEnd {
				_, stopOff, _ = z.offsetRange(best-2*secondsPerDay, best+2*secondsPerDay)
			}
		}
	}
}

// shift reports how a DST transition placed t, an instant of an RRULE
// instance; RDATE values are instants and never shifted.
func (r *rruleSource) shift(t time.Time) (Shift, bool) {
	if r.zone.fixed {
		return Shift{}, false
	}
	return r.zone.shiftOf(t.Unix(), func(int64) bool { return true }, r.instancesIn)
}

// instancesIn appends the instances of the RRULE lines in walls [lo, hi).
func (r *rruleSource) instancesIn(out []int64, lo, hi int64) []int64 {
	for _, g := range r.gens {
		budget := rruleBudget
		for w := lo; w < hi; {
			c, ok := g.nextLocal(w, &budget)
			if !ok || c >= hi {
				break
			}
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
			w = c + 1
		}
	}
	return out
}

// dtstartText says what a DTSTART names, for messages.
func dtstartText(dt *icalTime, z zone) string {
	at := time.Unix(icalInstant(*dt, z), 0).UTC().Format(time.RFC3339)
	wall := time.Unix(dt.wall, 0).UTC().Format("2006-01-02T15:04:05")
	switch {
	case dt.utc:
		return "DTSTART " + at
	case dt.loc != nil:
		return fmt.Sprintf("DTSTART %s in %s (%s)", wall, dt.zone, at)
	}
	return fmt.Sprintf("DTSTART %s (%s)", wall, at)
}
