package recurrence

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LoadLocation resolves a recurrence timeZone: an IANA name
// ("Europe/Berlin"), "UTC", or a Windows name ("W. Europe Standard Time")
// through CLDR's mapping to its IANA zone. The empty name is UTC.
func LoadLocation(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	if name == "" || strings.EqualFold(name, "UTC") {
		return time.UTC, nil
	}
	if iana, ok := windowsZonesFolded[strings.ToLower(name)]; ok {
		name = iana
	}
	// time.LoadLocation reads files; "Local" and paths are no zones of ours.
	if name == "Local" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
		return nil, unknownZone(name)
	}
	if loc, ok := locations.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, unknownZone(name)
	}
	locations.Store(name, loc)
	return loc, nil
}

// locations caches loaded zones: time.LoadLocation reads and parses the
// zone database on every call, and the job workflow compiles its rule for
// every occurrence it plans. Zones are few, so the cache stays small.
var locations sync.Map // IANA name -> *time.Location

// unknownZone is LoadLocation's error: a *ValidationError without a path.
func unknownZone(name string) error {
	return invalid("", CodeUnknownTimeZone, strconv.Quote(name)+
		` is not a time zone: use an IANA name such as "Europe/Berlin" or a Windows name such as "W. Europe Standard Time"`)
}

// windowsZonesFolded is windowsZones keyed by lower-case name: Windows
// names are matched in any letter case.
var windowsZonesFolded = func() map[string]string {
	m := make(map[string]string, len(windowsZones))
	for win, iana := range windowsZones {
		m[strings.ToLower(win)] = iana
	}
	return m
}()

// zone places wall-clock times of a location on the time line with the
// rules of docs/recurrence.md: a time in a spring-forward gap runs at the same
// offset past the gap's end, a time that exists twice runs at the first.
type zone struct {
	loc   *time.Location
	fixed bool  // the location never changes its offset
	off   int64 // the offset when fixed
	// gap and repeat are the recurrence's DST policy (DSTPolicy): how a
	// wall-clock time a transition skips or repeats maps to instants;
	// empty is the default, shiftForward and first.
	gap, repeat string
}

func newZone(loc *time.Location) zone {
	if loc == nil || loc == time.UTC {
		return zone{loc: time.UTC, fixed: true}
	}
	t := time.Unix(0, 0).In(loc)
	if start, end := t.ZoneBounds(); start.IsZero() && end.IsZero() {
		_, off := t.Zone()
		return zone{loc: loc, fixed: true, off: int64(off)}
	}
	return zone{loc: loc}
}

// span is a stretch of instants (Unix seconds) with one offset, up to end.
type span struct {
	end int64
	off int64
}

// span returns the stretch with the offset in effect at unix. An end may be
// a pseudo-boundary with the same offset on both sides.
func (z zone) span(unix int64) span {
	if z.fixed {
		return span{end: math.MaxInt64, off: z.off}
	}
	t := time.Unix(unix, 0).In(z.loc)
	_, off := t.Zone()
	s := span{end: math.MaxInt64, off: int64(off)}
	if _, end := t.ZoneBounds(); !end.IsZero() {
		s.end = end.Unix()
	}
	if s.end <= unix {
		s.end = z.probeEnd(unix, s.off)
	}
	return s
}

// probeEnd finds the end of the stretch with offset off that contains
// unix when ZoneBounds cannot tell: past a zone's last listed transition,
// Go reports for some instants near a year's end a zone period that ended
// before the instant itself (every DST zone, go1.26). Offsets are right
// there, so look a day ahead: the same offset there with sane bounds gives
// the end; a different one brackets the transition, found by bisection.
func (z zone) probeEnd(unix, off int64) int64 {
	lo, hi := unix, unix+secondsPerDay
	t := time.Unix(hi, 0).In(z.loc)
	if _, o := t.Zone(); int64(o) == off {
		if _, end := t.ZoneBounds(); end.IsZero() || end.Unix() > hi {
			if end.IsZero() {
				return math.MaxInt64
			}
			return end.Unix()
		}
		return hi // a pseudo-boundary: callers look again from there
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if z.offset(mid) == off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

func (z zone) offset(unix int64) int64 {
	if z.fixed {
		return z.off
	}
	_, off := time.Unix(unix, 0).In(z.loc).Zone()
	return int64(off)
}

// wall returns the wall-clock seconds of an instant.
func (z zone) wall(unix int64) int64 { return unix + z.offset(unix) }

// piece is a stretch of wall-clock seconds [from, to) that maps to
// instants by one offset: instant = wall - off; or, when atTransition, to
// the one instant at (the DST policy's atTransition for a gap).
type piece struct {
	from, to     int64
	off          int64
	at           int64
	atTransition bool
}

// dayPieces returns the pieces covering the wall-clock day starting at
// wall second l0. With one transition from offset ob to oa at instant t
// and the default policy, walls before t + max(ob, oa) use ob (that
// covers both the gap rule and the first instant of an overlap) and later
// walls use oa; the DST policy moves these bounds (transition). Pieces
// may overlap (repeat both): a wall then has two instants. buf avoids
// allocation.
func (z zone) dayPieces(l0 int64, buf []piece) []piece {
	buf = buf[:0]
	if z.fixed {
		return append(buf, piece{from: math.MinInt64, to: math.MaxInt64, off: z.off})
	}
	// Every instant of the day's walls lies within a day either side.
	s := z.span(l0 - secondsPerDay)
	cur := piece{from: math.MinInt64, off: s.off}
	for s.end <= l0+2*secondsPerDay {
		next := z.span(s.end)
		if next.off != s.off {
			buf, cur = z.transition(buf, cur, s.end, s.off, next.off)
		}
		s = next
	}
	cur.to = math.MaxInt64
	return append(buf, cur)
}

// transition ends the piece cur at a transition at instant t from offset
// ob to oa, as the DST policy says, and returns the piece after it.
func (z zone) transition(buf []piece, cur piece, t, ob, oa int64) ([]piece, piece) {
	after := piece{from: t + max(ob, oa), off: oa}
	switch {
	case ob < oa && z.gap == DSTSkip:
		// The walls of the gap, [t+ob, t+oa), have no instant.
		cur.to = t + ob
		buf = append(buf, cur)
	case ob < oa && z.gap == DSTAtTransition:
		cur.to = t + ob
		buf = append(buf, cur, piece{from: t + ob, to: t + oa, at: t, atTransition: true})
	case ob > oa && z.repeat == DSTLast:
		// The walls repeated, [t+oa, t+ob), take their second instant.
		cur.to = t + oa
		buf = append(buf, cur)
		after.from = t + oa
	case ob > oa && z.repeat == DSTBoth:
		cur.to = t + ob
		buf = append(buf, cur, piece{from: t + oa, to: t + ob, off: oa})
	default:
		cur.to = t + max(ob, oa)
		buf = append(buf, cur)
	}
	return buf, after
}

// instant returns the instant of wall-clock second w.
func (z zone) instant(w int64) int64 {
	var buf [4]piece
	// A date's midnight (endTime, exclusions) follows the default rule,
	// whatever the schedule's DST policy.
	z.gap, z.repeat = "", ""
	for _, p := range z.dayPieces(floorDiv(w, secondsPerDay)*secondsPerDay, buf[:0]) {
		if w >= p.from && w < p.to {
			return w - p.off
		}
	}
	return w - z.offset(w)
}
