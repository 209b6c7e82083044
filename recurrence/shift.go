package recurrence

import (
	"fmt"
	"slices"
	"time"
)

// Shift says how a DST transition placed an occurrence of a schedule that
// names wall-clock times (Day, Week, Month, Year, cron): the time it names
// did not exist that day, or existed twice. Preview shows it so that a
// user sees, before it happens, which runs a transition moves or doubles.
type Shift struct {
	// Wall is the wall-clock time the schedule names, in its zone, as
	// "2006-01-02T15:04:05": a time that may not exist there.
	Wall string `json:"wallClock"`
	// Kind is ShiftMoved, ShiftRepeated or ShiftDoubled.
	Kind string `json:"change"`
}

// Shift kinds.
const (
	// ShiftMoved: the clocks skipped the wall-clock time; the occurrence
	// runs where the policy's gap rule put it (shifted forward, or at the
	// transition).
	ShiftMoved = "moved"
	// ShiftRepeated: the clocks showed the wall-clock time twice; the
	// occurrence runs at one of the two (repeat first or last).
	ShiftRepeated = "repeated"
	// ShiftDoubled: the clocks showed it twice and it runs at both
	// (repeat both); this is one of the two.
	ShiftDoubled = "doubled"
)

// Shift reports how a DST transition placed t, an occurrence of the rule,
// and false when none touched it: a fixed zone, a schedule stepping in
// absolute time (Second, Minute, Hour) or a wall-clock time that existed once.
// When a skipped time lands on one the schedule also names, the occurrence
// is reported moved: it stands for both.
func (r *Rule) Shift(t time.Time) (Shift, bool) {
	if r.once {
		return Shift{}, false
	}
	return r.gen.shift(t)
}

// shift is Rule.Shift for the occurrences of g.
func (g *generator) shift(t time.Time) (Shift, bool) {
	if g.zone.fixed || g.freq == Second || g.freq == Minute || g.freq == Hour {
		return Shift{}, false
	}
	// A wall-clock time of the day before or after may map to t across a
	// transition, as in nextCalendar.
	scheduled := func(d int64) bool {
		if d < g.aDay {
			return false
		}
		next, ok := g.days.next(d)
		return ok && next == d
	}
	return g.zone.shiftOf(t.Unix(), scheduled, g.wallsIn)
}

// wallsIn appends the schedule's wall-clock times in [lo, hi), which lie
// in one day.
func (g *generator) wallsIn(out []int64, lo, hi int64) []int64 {
	l0 := lo - floorMod(lo, secondsPerDay)
	for t, ok := g.timeAtOrAfter(lo - l0); ok && l0+t < hi; t, ok = g.timeAtOrAfter(t + 1) {
		out = append(out, l0+t)
	}
	return out
}

// shiftOf reports how a DST transition placed instant s of a schedule
// whose days (of days day-1 to day+1 around s's, which scheduled keeps)
// hold the wall-clock times walls lists: moved before repeated.
func (z zone) shiftOf(s int64, scheduled func(day int64) bool, walls func(out []int64, lo, hi int64) []int64) (Shift, bool) {
	var buf [4]piece
	var found Shift
	day := floorDiv(z.wall(s), secondsPerDay)
	for d := day - 1; d <= day+1; d++ {
		if !scheduled(d) {
			continue
		}
		ps := z.dayPieces(d*secondsPerDay, buf[:0])
		for _, w := range wallsAt(d, s, ps, walls) {
			kind := z.kindOf(w, ps)
			switch {
			case kind == "":
			case kind == ShiftMoved || found.Kind == "":
				found = Shift{Wall: wallString(w), Kind: kind}
			}
		}
	}
	return found, found.Kind != ""
}

// wallsAt returns the wall-clock times of day, as walls lists them, that
// the pieces ps map to instant s: every one of a transition at s, or the
// one its offset gives.
func wallsAt(day, s int64, ps []piece, walls func(out []int64, lo, hi int64) []int64) []int64 {
	l0 := day * secondsPerDay
	var out []int64
	for _, p := range ps {
		lo, hi := max(p.from, l0), min(p.to, l0+secondsPerDay)
		if lo >= hi {
			continue
		}
		if p.atTransition {
			if p.at == s {
				out = walls(out, lo, hi)
			}
			continue
		}
		if w := s + p.off; w >= lo && w < hi {
			out = walls(out, w, w+1)
		}
	}
	return out
}

// kindOf says whether the wall-clock second w of a day with pieces ps
// exists there once (""), never (ShiftMoved) or twice (ShiftRepeated, or
// ShiftDoubled when the policy runs both).
func (z zone) kindOf(w int64, ps []piece) string {
	n := 0
	for i, p := range ps {
		if p.atTransition || slices.ContainsFunc(ps[:i], func(q piece) bool { return !q.atTransition && q.off == p.off }) {
			continue
		}
		if z.offset(w-p.off) == p.off {
			n++
		}
	}
	switch {
	case n == 0:
		return ShiftMoved
	case n == 1:
		return ""
	case z.repeat == DSTBoth:
		return ShiftDoubled
	}
	return ShiftRepeated
}

// wallString formats wall-clock seconds as "2006-01-02T15:04:05".
func wallString(w int64) string {
	y, m, d := civilDate(floorDiv(w, secondsPerDay))
	sec := floorMod(w, secondsPerDay)
	return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d", y, m, d, sec/secondsPerHour, sec/secondsPerMinute%60, sec%60)
}

// String says in words what the transition did, for people.
func (s Shift) String() string {
	switch s.Kind {
	case ShiftMoved:
		return "DST moved it: " + s.Wall + " did not exist"
	case ShiftDoubled:
		return "DST doubled it: " + s.Wall + " came twice and runs at both"
	}
	return "DST: " + s.Wall + " came twice and runs once"
}

// Shifted is an occurrence that a DST transition moved or repeated.
type Shifted struct {
	Time time.Time `json:"time"`
	Shift
}

// Shifts returns those of times, occurrences of r, that a DST transition
// moved or repeated, in their order.
func (r *Rule) Shifts(times []time.Time) []Shifted {
	var out []Shifted
	for _, t := range times {
		if s, ok := r.Shift(t); ok {
			out = append(out, Shifted{Time: t, Shift: s})
		}
	}
	return out
}
