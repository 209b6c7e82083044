package recurrence_test

// A differential test of recurrence.rrule and recurrence.rules against
// github.com/teambition/rrule-go, a port of python-dateutil's rrule, on
// seeded random rules in eight zones, anchored around every DST
// transition of 2024-2027 and elsewhere.
//
// rrule-go expands each RRULE on a floating wall clock (its DTSTART and
// UNTIL given in UTC, which has no gaps), which is how dateutil reads a
// rule; this harness then places each wall-clock time in the zone by RFC
// 5545 with the time package alone. rrule-go expanding in the zone
// itself would let time.Date normalise a wall-clock time the clocks skip
// (02:30 becomes 03:30) instead of ignoring it, and choose an instant of
// a repeated one on its own: the places where rrule-go and RFC 5545
// disagree are reconciled below, each in its own function naming the
// RFC's sentence that decides, and counted by kind.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	rrulego "github.com/teambition/rrule-go"

	"github.com/recurhq/recur/recurrence"
)

var rZones = []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata",
	"Pacific/Chatham", "America/Sao_Paulo", "UTC", "Europe/London"}

// rCounts are the test's tallies, reported at its end.
type rCounts struct {
	rules, unions, occurrences, nextChains int
	reconciled                             map[string]int
}

func (c *rCounts) reconcile(kind string, n int) {
	if n > 0 {
		c.reconciled[kind] += n
	}
}

// rMember is one RRULE of a case: its text and how the harness reads it.
type rMember struct {
	text string // the RRULE value, FREQ=...
	opt  rrulego.ROption
	// untilUTC is an UNTIL given in UTC: the harness compares instants
	// with it. untilWall is a floating or DATE UNTIL, a wall-clock bound.
	untilUTC, untilWall time.Time
	untilDate           bool
	count               int
	rdates, exdates     []time.Time // walls (UTC numbers), read in the zone
}

// rCase is one job: its zone, DTSTART and DST policy, and its rules.
type rCase struct {
	zone     string
	loc      *time.Location
	start    time.Time // the anchor instant; its wall clock in loc is DTSTART
	policy   *recurrence.DSTPolicy
	dtLine   bool // DTSTART given in the rrule text instead of startTime
	omitZone bool // with dtLine: no timeZone, the DTSTART's TZID says it
	members  []rMember
	horizon  time.Time // the end of the span compared
	jsonText string
}

func rWall(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), 0, time.UTC)
}

// rPlace returns the instants of wall-clock time w (UTC numbers) in loc
// under the policy: RFC 5545 by default (3.3.10: an instance at a
// nonexistent local time is ignored; 3.3.5: a local time that occurs
// twice is the first), or the job's DST policy. kind says which case w
// was: "" (once), "gap" or "repeat".
func rPlace(w time.Time, loc *time.Location, p *recurrence.DSTPolicy) ([]time.Time, string) {
	var found []time.Time
	for _, h := range []int{-30, -15, 0, 15, 30} {
		_, off := w.Add(time.Duration(h) * time.Hour).In(loc).Zone()
		t := w.Add(-time.Duration(off) * time.Second)
		if rWall(t, loc).Equal(w) && !slices.ContainsFunc(found, t.Equal) {
			found = append(found, t)
		}
	}
	slices.SortFunc(found, func(a, b time.Time) int { return a.Compare(b) })
	gap, repeat := "skip", "first"
	if p != nil {
		gap, repeat = cmpOr(p.Gap, "shiftForward"), cmpOr(p.Repeat, "first")
	}
	switch len(found) {
	case 1:
		return found, ""
	case 2:
		switch repeat {
		case "last":
			return found[1:], "repeat"
		case "both":
			return found, "repeat"
		}
		return found[:1], "repeat"
	case 0:
		_, before := w.Add(-30 * time.Hour).In(loc).Zone()
		shifted := w.Add(-time.Duration(before) * time.Second)
		switch gap {
		case "shiftForward":
			return []time.Time{shifted}, "gap"
		case "atTransition":
			start, _ := shifted.In(loc).ZoneBounds()
			return []time.Time{start}, "gap"
		}
		return nil, "gap"
	}
	panic(fmt.Sprintf("%v has %d instants in %v", w, len(found), loc))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// rRandomMember draws one RRULE valid by RFC 5545 for the case.
func rRandomMember(rng *rand.Rand, c *rCase) rMember {
	freqs := []string{"YEARLY", "YEARLY", "MONTHLY", "MONTHLY", "MONTHLY", "WEEKLY", "WEEKLY", "DAILY", "DAILY", "HOURLY", "MINUTELY", "SECONDLY"}
	freq := freqs[rng.Intn(len(freqs))]
	sub := freq == "HOURLY" || freq == "MINUTELY" || freq == "SECONDLY"
	var parts []string
	add := func(name string, values []string) {
		if len(values) > 0 {
			parts = append(parts, name+"="+strings.Join(values, ","))
		}
	}
	ints := func(n, lo, hi int, signed bool) []string {
		var out []string
		for range n {
			v := lo + rng.Intn(hi-lo+1)
			if signed && rng.Intn(3) == 0 {
				v = -v
			}
			if s := fmt.Sprint(v); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	}
	parts = append(parts, "FREQ="+freq)
	if rng.Intn(2) == 0 {
		every := map[string]int{"YEARLY": 3, "MONTHLY": 4, "WEEKLY": 3, "DAILY": 5, "HOURLY": 7, "MINUTELY": 45, "SECONDLY": 90}[freq]
		parts = append(parts, fmt.Sprintf("INTERVAL=%d", 1+rng.Intn(every)))
	}
	weekno := freq == "YEARLY" && rng.Intn(6) == 0
	if weekno {
		add("BYWEEKNO", ints(1+rng.Intn(3), 1, 53, true))
	}
	if freq == "YEARLY" && !weekno && rng.Intn(7) == 0 {
		add("BYYEARDAY", ints(1+rng.Intn(3), 1, 366, true))
	}
	byMonth := rng.Intn(5) == 0 && !weekno
	if byMonth {
		add("BYMONTH", ints(1+rng.Intn(4), 1, 12, false))
	}
	if freq != "WEEKLY" && !weekno && rng.Intn(4) == 0 {
		add("BYMONTHDAY", ints(1+rng.Intn(4), 1, 31, true))
	}
	if rng.Intn(5) < 2 || (freq == "WEEKLY" && rng.Intn(2) == 0) {
		var days []string
		for range 1 + rng.Intn(5) {
			d := []string{"MO", "TU", "WE", "TH", "FR", "SA", "SU"}[rng.Intn(7)]
			if (freq == "MONTHLY" || (freq == "YEARLY" && !weekno)) && rng.Intn(5) < 2 {
				limit := 5
				if freq == "YEARLY" && !byMonth {
					limit = 53
				}
				n := 1 + rng.Intn(limit)
				if rng.Intn(3) == 0 {
					n = -n
				}
				d = fmt.Sprint(n) + d
			}
			if !slices.Contains(days, d) {
				days = append(days, d)
			}
		}
		add("BYDAY", days)
	}
	// Hours around the transitions of the zones drawn (0-3 at night) come
	// often, so that the gaps and repeats are met.
	hourPick := func() []string {
		var out []string
		for range 1 + rng.Intn(3) {
			h := rng.Intn(24)
			if rng.Intn(2) == 0 {
				h = rng.Intn(4)
			}
			if s := fmt.Sprint(h); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	}
	if (!sub && rng.Intn(5) < 2) || (sub && rng.Intn(4) == 0) {
		add("BYHOUR", hourPick())
	}
	if rng.Intn(4) == 0 || (freq == "MINUTELY" && rng.Intn(3) == 0) {
		add("BYMINUTE", ints(1+rng.Intn(3), 0, 59, false))
	}
	if rng.Intn(7) == 0 || (freq == "SECONDLY" && rng.Intn(2) == 0) {
		add("BYSECOND", ints(1+rng.Intn(3), 0, 59, false))
	}
	if len(parts) > 1 && rng.Intn(4) == 0 && slices.ContainsFunc(parts, func(p string) bool { return strings.HasPrefix(p, "BY") }) {
		add("BYSETPOS", ints(1+rng.Intn(2), 1, 4, true))
	}
	if rng.Intn(3) == 0 {
		add("WKST", []string{[]string{"MO", "TU", "WE", "TH", "FR", "SA", "SU"}[rng.Intn(7)]})
	}
	if rng.Intn(3) == 0 {
		parts = append(parts, fmt.Sprintf("COUNT=%d", 1+rng.Intn(40)))
	} else if rng.Intn(3) == 0 {
		// UNTIL, drawn when the case's span is known (rBound).
		parts = append(parts, []string{"UNTIL=utc", "UNTIL=utc", "UNTIL=floating", "UNTIL=date"}[rng.Intn(4)])
	}
	rng.Shuffle(len(parts)-1, func(i, j int) { parts[i+1], parts[j+1] = parts[j+1], parts[i+1] })
	return rMember{text: strings.Join(parts, ";")}
}

// rBound draws the member's UNTIL within the case's span, and reads the
// rule with rrule-go.
func rBound(rng *rand.Rand, c *rCase, m *rMember) {
	parts := strings.Split(m.text, ";")
	for i, p := range parts {
		u := c.start.Add(time.Duration(rng.Int63n(int64(c.horizon.Sub(c.start)) + 1))).Truncate(time.Second)
		switch p {
		case "UNTIL=utc":
			m.untilUTC = u.UTC()
			parts[i] = "UNTIL=" + u.UTC().Format("20060102T150405Z")
		case "UNTIL=floating":
			m.untilWall = rWall(u, c.loc)
			parts[i] = "UNTIL=" + m.untilWall.Format("20060102T150405")
		case "UNTIL=date":
			m.untilWall, m.untilDate = rWall(u, c.loc).Truncate(24*time.Hour), true
			parts[i] = "UNTIL=" + m.untilWall.Format("20060102")
		default:
			if n, ok := strings.CutPrefix(p, "COUNT="); ok {
				fmt.Sscan(n, &m.count)
			}
		}
	}
	m.text = strings.Join(parts, ";")
	opt, err := rrulego.StrToROption(m.text)
	if err != nil {
		panic(fmt.Sprintf("rrule-go refuses %s: %v", m.text, err))
	}
	// The harness bounds the set itself (COUNT and UNTIL below), and
	// checks its COUNT against rrule-go's (rCheckCount).
	opt.Count, opt.Until = 0, time.Time{}
	m.opt = *opt
}

// rHorizon is how far a case's occurrences are compared: far enough for
// dozens of instances, near enough that rrule-go's walk stays quick.
func rHorizon(members []rMember) time.Duration {
	d := 40 * 365 * 24 * time.Hour
	for _, m := range members {
		freq, _, _ := strings.Cut(strings.TrimPrefix(m.text, "FREQ="), ";")
		d = min(d, map[string]time.Duration{
			"YEARLY": 40 * 365 * 24 * time.Hour, "MONTHLY": 8 * 365 * 24 * time.Hour,
			"WEEKLY": 3 * 365 * 24 * time.Hour, "DAILY": 2 * 365 * 24 * time.Hour,
			"HOURLY": 60 * 24 * time.Hour, "MINUTELY": 3 * 24 * time.Hour, "SECONDLY": 4 * time.Hour,
		}[freq])
	}
	return d
}

// rExpected is the case's occurrences from its start to its horizon, at
// most limit of them: each member's by rrule-go and the harness, the
// union sorted without duplicates.
func rExpected(c *rCase, counts *rCounts, limit int) []time.Time {
	var all []time.Time
	for _, m := range c.members {
		all = append(all, rMemberInstants(c, m, counts, limit)...)
	}
	slices.SortFunc(all, func(a, b time.Time) int { return a.Compare(b) })
	all = slices.CompactFunc(all, func(a, b time.Time) bool { return a.Equal(b) })
	var out []time.Time
	for _, t := range all {
		if !t.Before(c.start) && !t.After(c.horizon) && len(out) < limit {
			out = append(out, t)
		}
	}
	return out
}

// rWalls runs rrule-go on the floating wall clock from DTSTART dt to the
// horizon: instances as UTC numbers.
func rWalls(opt rrulego.ROption, dt, horizon time.Time, limit int) []time.Time {
	var out []time.Time
	next := rIter(opt, dt, horizon)
	for len(out) < limit {
		v, ok := next()
		if !ok || v.After(horizon) {
			break
		}
		out = append(out, v)
	}
	return out
}

// rIter iterates rrule-go's instances of opt from dt. It reconciles one
// place where rrule-go, as dateutil, and RFC 5545 part: BYDAY with both
// plain weekdays and ordinals (BYDAY=MO,-1FR). RFC 5545 3.3.10 makes
// BYDAY "a COMMA-separated list of days of the week", each value a
// weekday or its nth occurrence, so the days are the union of the
// values'; rrule-go keeps only days that pass both kinds. The harness
// runs rrule-go once with each kind and merges the two.
func rIter(opt rrulego.ROption, dt, horizon time.Time) func() (time.Time, bool) {
	return rIterWith(opt, dt, horizon, true)
}

// rIterWith is rIter; fixWeekNo says whether BYWEEKNO is reconciled.
func rIterWith(opt rrulego.ROption, dt, horizon time.Time, fixWeekNo bool) func() (time.Time, bool) {
	// rrule-go walks period by period until it finds an instance: a rule
	// with none (BYSETPOS past a period's size) would walk to 9999. A
	// period past the horizon is as far as the harness reads.
	opt.Until = horizon.AddDate(1, 0, 2)
	var plain, nth []rrulego.Weekday
	for _, d := range opt.Byweekday {
		if d.N() == 0 {
			plain = append(plain, d)
		} else {
			nth = append(nth, d)
		}
	}
	one := func(o rrulego.ROption) func() (time.Time, bool) {
		o.Dtstart = dt
		r, err := rrulego.NewRRule(o)
		if err != nil {
			panic(err)
		}
		return r.Iterator()
	}
	if fixWeekNo && rWeekNoAcrossYears(opt) {
		// rrule-go, as dateutil ("TODO: Check -numweeks for next year"),
		// never matches a negative BYWEEKNO against the days of a year
		// that are in the next year's week 1 (BYWEEKNO=-52 when the next
		// year has 52 weeks, 30 December 2029, say). RFC 5545 3.3.10
		// counts BYWEEKNO's negative values from the end of the year's
		// weeks, and those days are in that week: rrule-go runs again for
		// week 1, keeping those days.
		b := opt
		b.Byweekno = []int{1}
		wkst := (int(opt.Wkst.Day()) + 1) % 7
		return rMerge(rIterWith(opt, dt, horizon, false), rFilter(rIter(b, dt, horizon), func(w time.Time) bool {
			y := w.Year()
			next := rWeek1(y+1, wkst)
			total := int(rWeek1(y+2, wkst).Sub(next).Hours() / 24 / 7)
			return !w.Before(next) && slices.Contains(opt.Byweekno, -total)
		}))
	}
	if len(plain) == 0 || len(nth) == 0 {
		return one(opt)
	}
	a, b := opt, opt
	a.Byweekday, b.Byweekday = plain, nth
	return rMerge(one(a), one(b))
}

// rWeekNoAcrossYears reports whether BYWEEKNO has -52 or -53, which may
// name the next year's week 1, and not 1 itself.
func rWeekNoAcrossYears(opt rrulego.ROption) bool {
	return opt.Freq == rrulego.YEARLY && !slices.Contains(opt.Byweekno, 1) &&
		(slices.Contains(opt.Byweekno, -52) || slices.Contains(opt.Byweekno, -53))
}

// rWeek1 is the first day of week 1 of year y for weeks starting on
// wkst (Sunday = 0): the first such week with four days in y.
func rWeek1(y, wkst int) time.Time {
	jan1 := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
	off := (int(jan1.Weekday()) - wkst + 7) % 7
	if off <= 3 {
		return jan1.AddDate(0, 0, -off)
	}
	return jan1.AddDate(0, 0, 7-off)
}

// rFilter keeps the values of next that keep says.
func rFilter(next func() (time.Time, bool), keep func(time.Time) bool) func() (time.Time, bool) {
	return func() (time.Time, bool) {
		for {
			v, ok := next()
			if !ok || keep(v) {
				return v, ok
			}
		}
	}
}

// rMerge merges two increasing iterators, without duplicates.
func rMerge(na, nb func() (time.Time, bool)) func() (time.Time, bool) {
	va, oka := na()
	vb, okb := nb()
	return func() (time.Time, bool) {
		switch {
		case !oka && !okb:
			return time.Time{}, false
		case oka && (!okb || va.Before(vb)):
			v := va
			va, oka = na()
			return v, true
		case okb && (!oka || vb.Before(va)):
			v := vb
			vb, okb = nb()
			return v, true
		}
		v := va
		va, oka = na()
		vb, okb = nb()
		return v, true
	}
}

// rReachable reports whether a SECONDLY, MINUTELY or HOURLY rule's
// steps from DTSTART dt ever meet its BYHOUR, BYMINUTE and BYSECOND:
// rrule-go, as dateutil, loops for ever on one whose steps never do
// (MINUTELY;INTERVAL=30;BYMINUTE=15 from a whole hour). The steps reach
// the seconds of the day dt + k*gcd(step, 1 day).
func rReachable(opt rrulego.ROption, dt time.Time) bool {
	unit := map[rrulego.Frequency]int{rrulego.HOURLY: 3600, rrulego.MINUTELY: 60, rrulego.SECONDLY: 1}[opt.Freq]
	if unit == 0 {
		return true
	}
	step := gcdInt(max(1, opt.Interval)*unit, 86400) // rrule-go's Interval 0 is 1
	sod := dt.Hour()*3600 + dt.Minute()*60 + dt.Second()
	ok := func(list []int, v int) bool { return len(list) == 0 || slices.Contains(list, v) }
	for s := sod % step; s < 86400; s += step {
		h, m, sec := s/3600, s/60%60, s%60
		if ok(opt.Byhour, h) && (opt.Freq < rrulego.MINUTELY || ok(opt.Byminute, m)) && (opt.Freq < rrulego.SECONDLY || ok(opt.Bysecond, sec)) {
			return true
		}
	}
	return false
}

// rPositionsFit reports whether some BYSETPOS position of a SECONDLY,
// MINUTELY or HOURLY rule is within the instances one of its periods
// holds: rrule-go, finding none in any period, walks them to the year
// 9999, past any UNTIL.
func rPositionsFit(opt rrulego.ROption) bool {
	if len(opt.Bysetpos) == 0 || opt.Freq < rrulego.HOURLY {
		return true
	}
	most := 1
	if opt.Freq == rrulego.HOURLY {
		most = max(1, len(opt.Byminute))
	}
	if opt.Freq <= rrulego.MINUTELY {
		most *= max(1, len(opt.Bysecond))
	}
	return slices.ContainsFunc(opt.Bysetpos, func(p int) bool { return p <= most && -p <= most })
}

func gcdInt(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// rMemberInstants is one member's instants.
func rMemberInstants(c *rCase, m rMember, counts *rCounts, limit int) []time.Time {
	dt := rWall(c.start, c.loc)
	if rWeekNoAcrossYears(m.opt) {
		counts.reconcile("negative BYWEEKNO naming the next year's week 1 (dateutil's TODO), rules", 1)
	}
	if rMixedByDay(m.opt) {
		counts.reconcile("BYDAY's weekdays and ordinals are a union (RFC 5545 3.3.10's list), rules", 1)
	}
	// Walls run a day past the horizon: UTC UNTIL and zone offsets move
	// instants by up to a day.
	horizon := rWall(c.horizon, c.loc).Add(48 * time.Hour)
	var walls []time.Time
	switch {
	case !rReachable(m.opt, dt):
		counts.reconcile("rules whose steps never meet their filters (rrule-go loops; recur finds none)", 1)
	case !rPositionsFit(m.opt):
		counts.reconcile("BYSETPOS past what a period holds (rrule-go walks to 9999; recur finds none)", 1)
	default:
		walls = rSetPos(c, m, dt, horizon, rWalls(m.opt, dt, horizon, 4*limit+400), counts, limit)
	}
	if !m.untilWall.IsZero() {
		bound := m.untilWall
		if m.untilDate {
			bound = rUntilDate(m, walls, counts)
		}
		walls = slices.DeleteFunc(walls, func(w time.Time) bool { return w.After(bound) })
	}
	var out []time.Time
	kept := 0
	for _, w := range walls {
		ts, kind := rPlace(w, c.loc, c.policy)
		switch {
		case kind == "gap" && len(ts) == 0:
			// RFC 5545 3.3.10: "Such recurrence instances MUST be ignored
			// and MUST NOT be counted as part of the recurrence set."
			// rrule-go in the zone would have normalised it instead.
			counts.reconcile("nonexistent local time ignored, not counted (RFC 5545 3.3.10)", btoi(len(out) < limit))
			continue
		case kind == "repeat" && c.policy == nil:
			// RFC 5545 3.3.5: a local time that occurs twice "refers to
			// the first occurrence of the referenced time".
			counts.reconcile("repeated local time at its first instant (RFC 5545 3.3.5)", btoi(len(out) < limit))
		}
		if m.count > 0 && kept == m.count {
			break
		}
		kept++
		for _, t := range ts {
			if m.untilUTC.IsZero() || !t.After(m.untilUTC) {
				out = append(out, t)
			}
		}
	}
	if m.count > 0 {
		rCheckCount(c, m, dt, horizon, walls, kept)
	}
	for _, w := range m.rdates {
		ts, _ := rPlace(w, c.loc, &recurrence.DSTPolicy{Gap: "shiftForward", Repeat: "first"})
		out = append(out, ts...)
	}
	for _, w := range m.exdates {
		ts, _ := rPlace(w, c.loc, &recurrence.DSTPolicy{Gap: "shiftForward", Repeat: "first"})
		out = slices.DeleteFunc(out, func(t time.Time) bool { return t.Equal(ts[0]) })
	}
	return out
}

// rCheckCount checks the harness's COUNT against rrule-go's own where
// they mean the same: when no instance was ignored before the last one
// counted, rrule-go with COUNT gives the same instances.
func rCheckCount(c *rCase, m rMember, dt, horizon time.Time, walls []time.Time, kept int) {
	if kept < m.count {
		return
	}
	opt := m.opt
	opt.Count = m.count
	own := rWalls(opt, dt, horizon.Add(400*24*time.Hour), m.count)
	if len(own) > 0 && len(walls) >= len(own) && slices.EqualFunc(own, walls[:len(own)], time.Time.Equal) {
		return
	}
	// They differ only where the harness's walls were reshaped (first
	// week, gaps) or an instance was ignored: those are counted apart.
	for _, w := range walls[:min(len(walls), kept)] {
		if ts, kind := rPlace(w, c.loc, c.policy); kind == "gap" && len(ts) == 0 {
			return
		}
	}
	if len(m.opt.Bysetpos) > 0 {
		return
	}
	panic(fmt.Sprintf("harness COUNT differs from rrule-go's for %s from %v:\n harness %v\n rrule-go %v", m.text, dt, walls[:min(len(walls), kept)], own))
}

// rUntilDate reconciles UNTIL given as a DATE with a DATE-TIME DTSTART:
// RFC 5545 3.3.10 says their value types "MUST" match, so the RFC does
// not decide; recur reads the date as the whole day (every instance on
// it runs), where rrule-go reads midnight.
func rUntilDate(m rMember, walls []time.Time, counts *rCounts) time.Time {
	end := m.untilWall.Add(24*time.Hour - time.Second)
	for _, w := range walls {
		if w.After(m.untilWall) && !w.After(end) {
			counts.reconcile("UNTIL date means its whole day (recur's decision; RFC 5545 3.3.10 requires a date-time)", 1)
		}
	}
	return end
}

// rSetPos gives the instances of a rule with BYSETPOS, reconciling two
// places where rrule-go, as dateutil, and RFC 5545 3.3.10 part:
//
//   - The first week of a WEEKLY rule: rrule-go picks among the days
//     from DTSTART to the week's end; the RFC's BYSETPOS "specifies a
//     set of values ... within the set of recurrence instances ... within
//     the interval of the recurrence", the whole week. rrule-go runs
//     from the first period's start, its defaults made explicit, and the
//     instances before DTSTART are dropped.
//   - A period with a wall-clock time the clocks skip: the RFC ignores
//     such an instance, so it is none of the set BYSETPOS counts in;
//     rrule-go counts it. The harness takes rrule-go's instances without
//     BYSETPOS, period by period, and picks the positions itself, after
//     dropping the skipped ones where the rule skips them; in every
//     period the picking of all of them is checked to be rrule-go's own.
func rSetPos(c *rCase, m rMember, dt, horizon time.Time, own []time.Time, counts *rCounts, limit int) []time.Time {
	if len(m.opt.Bysetpos) == 0 {
		return own
	}
	opt := rExplicit(m.opt, dt)
	from := rPeriodStart(opt, dt)
	whole := slices.DeleteFunc(rWalls(opt, from, horizon, 4*limit+400), func(w time.Time) bool { return w.Before(dt) })
	// Both walks stop after as many instances: compare what both have.
	n := min(len(whole), len(own))
	switch {
	case slices.EqualFunc(whole[:n], own[:n], time.Time.Equal):
	case opt.Freq == rrulego.WEEKLY:
		counts.reconcile("WEEKLY BYSETPOS picks in DTSTART's whole week (RFC 5545 3.3.10, the interval)", 1)
	default:
		panic(fmt.Sprintf("harness: rrule-go from the first period's start differs for %s from %v:\n %v\n %v", m.text, dt, whole, own))
	}
	skipGaps := c.policy == nil || c.policy.Gap == "skip"
	skipped := func(w time.Time) bool {
		ts, kind := rPlace(w, c.loc, nil)
		return skipGaps && kind == "gap" && len(ts) == 0
	}
	noPos := opt
	noPos.Bysetpos = nil
	next := rIter(noPos, from, horizon)
	var plain, out, set []time.Time
	flush := func() {
		picked := rPick(set, opt.Bysetpos)
		plain = append(plain, picked...)
		if slices.ContainsFunc(set, skipped) {
			fixed := rPick(slices.DeleteFunc(slices.Clone(set), skipped), opt.Bysetpos)
			if !slices.EqualFunc(fixed, picked, time.Time.Equal) {
				counts.reconcile("BYSETPOS counts no ignored nonexistent time (RFC 5545 3.3.10)", 1)
			}
			picked = fixed
		}
		out = append(out, picked...)
		set = set[:0]
	}
	for len(out) < 4*limit+400+len(opt.Bysetpos) {
		w, ok := next()
		newPeriod := ok && len(set) > 0 && rPeriodKey(opt, w) != rPeriodKey(opt, set[0])
		// The period the horizon cuts is read whole: its positions count
		// in all of it.
		if !ok || (w.After(horizon) && (newPeriod || len(set) == 0)) {
			flush()
			break
		}
		if newPeriod {
			flush()
		}
		set = append(set, w)
	}
	plain = slices.DeleteFunc(plain, func(w time.Time) bool { return w.Before(dt) })
	out = slices.DeleteFunc(out, func(w time.Time) bool { return w.Before(dt) })
	// rrule-go's own BYSETPOS is the harness's, except where rIter
	// reconciles its BYDAY or BYWEEKNO (then rrule-go picked among other
	// days).
	n = min(len(plain), len(whole))
	if !rMixedByDay(opt) && !rWeekNoAcrossYears(opt) && !slices.EqualFunc(plain[:n], whole[:n], time.Time.Equal) {
		panic(fmt.Sprintf("harness BYSETPOS differs from rrule-go's for %s from %v:\n %v\n %v", m.text, dt, plain[:n], whole[:n]))
	}
	return out
}

// rExplicit writes out the parts rrule-go takes from DTSTART dt when
// they are absent, so that the rule means the same from another start.
func rExplicit(opt rrulego.ROption, dt time.Time) rrulego.ROption {
	if opt.Freq < rrulego.HOURLY && len(opt.Byhour) == 0 {
		opt.Byhour = []int{dt.Hour()}
	}
	if opt.Freq < rrulego.MINUTELY && len(opt.Byminute) == 0 {
		opt.Byminute = []int{dt.Minute()}
	}
	if opt.Freq < rrulego.SECONDLY && len(opt.Bysecond) == 0 {
		opt.Bysecond = []int{dt.Second()}
	}
	if len(opt.Byweekno)+len(opt.Byyearday)+len(opt.Bymonthday)+len(opt.Byweekday) == 0 {
		switch opt.Freq {
		case rrulego.YEARLY:
			if len(opt.Bymonth) == 0 {
				opt.Bymonth = []int{int(dt.Month())}
			}
			opt.Bymonthday = []int{dt.Day()}
		case rrulego.MONTHLY:
			opt.Bymonthday = []int{dt.Day()}
		case rrulego.WEEKLY:
			opt.Byweekday = []rrulego.Weekday{[]rrulego.Weekday{rrulego.SU, rrulego.MO, rrulego.TU, rrulego.WE, rrulego.TH, rrulego.FR, rrulego.SA}[dt.Weekday()]}
		}
	}
	return opt
}

// rPeriodStart is the start of the period of the rule that holds dt.
func rPeriodStart(opt rrulego.ROption, dt time.Time) time.Time {
	day := dt.Truncate(24 * time.Hour)
	switch opt.Freq {
	case rrulego.YEARLY:
		return time.Date(dt.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	case rrulego.MONTHLY:
		return time.Date(dt.Year(), dt.Month(), 1, 0, 0, 0, 0, time.UTC)
	case rrulego.WEEKLY:
		wkst := (int(opt.Wkst.Day()) + 1) % 7
		return day.AddDate(0, 0, -((int(dt.Weekday()) - wkst + 7) % 7))
	case rrulego.DAILY:
		return day
	case rrulego.HOURLY:
		return dt.Truncate(time.Hour)
	case rrulego.MINUTELY:
		return dt.Truncate(time.Minute)
	}
	return dt
}

// rMixedByDay reports whether BYDAY has both plain weekdays and
// ordinals, which rIter reconciles.
func rMixedByDay(opt rrulego.ROption) bool {
	return slices.ContainsFunc(opt.Byweekday, func(d rrulego.Weekday) bool { return d.N() == 0 }) &&
		slices.ContainsFunc(opt.Byweekday, func(d rrulego.Weekday) bool { return d.N() != 0 })
}

// rPeriodKey names the period of a rule that holds wall w.
func rPeriodKey(opt rrulego.ROption, w time.Time) int64 {
	days := w.Unix() / 86400
	switch opt.Freq {
	case rrulego.YEARLY:
		return int64(w.Year())
	case rrulego.MONTHLY:
		return int64(w.Year())*12 + int64(w.Month())
	case rrulego.WEEKLY:
		wkst := (int(opt.Wkst.Day()) + 1) % 7
		return days - int64((int(w.Weekday())-wkst+7)%7)
	case rrulego.DAILY:
		return days
	case rrulego.HOURLY:
		return w.Unix() / 3600
	case rrulego.MINUTELY:
		return w.Unix() / 60
	}
	return w.Unix()
}

// rPick applies BYSETPOS to one period's sorted instances.
func rPick(set []time.Time, pos []int) []time.Time {
	var out []time.Time
	for _, p := range pos {
		i := p - 1
		if p < 0 {
			i = len(set) + p
		}
		if i >= 0 && i < len(set) && !slices.ContainsFunc(out, set[i].Equal) {
			out = append(out, set[i])
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

// rJSON is the job properties of a case, as a client sends them.
func rJSON(c *rCase) string {
	rec := map[string]any{}
	if !c.dtLine || (c.zone != "UTC" && !c.omitZone) {
		rec["timeZone"] = c.zone
	}
	if c.policy != nil {
		rec["dst"] = c.policy
	}
	texts := make([]string, len(c.members))
	for i, m := range c.members {
		var lines []string
		if c.dtLine {
			dt := rWall(c.start, c.loc).Format("20060102T150405")
			if c.zone == "UTC" {
				lines = append(lines, "DTSTART:"+dt+"Z")
			} else {
				lines = append(lines, "DTSTART;TZID="+c.zone+":"+dt)
			}
		}
		lines = append(lines, "RRULE:"+m.text)
		for _, l := range []struct {
			name  string
			walls []time.Time
		}{{"RDATE", m.rdates}, {"EXDATE", m.exdates}} {
			if len(l.walls) == 0 {
				continue
			}
			var vs []string
			for _, w := range l.walls {
				vs = append(vs, w.Format("20060102T150405"))
			}
			lines = append(lines, l.name+";TZID="+c.zone+":"+strings.Join(vs, ","))
		}
		texts[i] = strings.Join(lines, "\n")
		if len(lines) == 1 {
			texts[i] = m.text
		}
	}
	if len(texts) == 1 {
		rec["rrule"] = texts[0]
	} else {
		var rules []map[string]string
		for _, t := range texts {
			rules = append(rules, map[string]string{"rrule": t})
		}
		rec["rules"] = rules
	}
	props := map[string]any{"recurrence": rec}
	if !c.dtLine {
		props["startTime"] = c.start.UTC().Format(time.RFC3339)
	}
	b, err := json.Marshal(props)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// rRandomStart draws the anchor: before a transition of the zone in
// 2024-2027 (transition given), within half the span compared, or
// anywhere in those years.
func rRandomStart(rng *rand.Rand, transition time.Time, span time.Duration) time.Time {
	if transition.IsZero() {
		return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int63n(int64(4 * 365 * 24 * time.Hour)))).Truncate(time.Second)
	}
	before := []time.Duration{time.Hour, 3 * time.Hour, 26 * time.Hour, 8 * 24 * time.Hour, 40 * 24 * time.Hour}[rng.Intn(5)]
	before = min(before, span/2)
	return transition.Add(-time.Duration(rng.Int63n(int64(before)))).Truncate(time.Second)
}

func rNewCase(rng *rand.Rand, zone string, loc *time.Location, transition time.Time, members int) *rCase {
	c := &rCase{zone: zone, loc: loc}
	for range members {
		c.members = append(c.members, rRandomMember(rng, c))
	}
	span := rHorizon(c.members)
	c.start = rRandomStart(rng, transition, span)
	if rng.Intn(4) == 0 {
		c.policy = &recurrence.DSTPolicy{
			Gap:    []string{"shiftForward", "skip", "atTransition"}[rng.Intn(3)],
			Repeat: []string{"first", "last", "both"}[rng.Intn(3)],
		}
	}
	c.dtLine = rng.Intn(3) == 0
	if c.dtLine {
		// A DTSTART line names a wall clock: its instant is the first of
		// a repeated one, and a skipped one is not drawn.
		if ts, kind := rPlace(rWall(c.start, loc), loc, nil); kind == "" || kind == "repeat" {
			c.start = ts[0]
			c.omitZone = zone != "UTC" && rng.Intn(2) == 0
		} else {
			c.dtLine = false
		}
	}
	c.horizon = c.start.Add(span)
	for i := range c.members {
		rBound(rng, c, &c.members[i])
	}
	if members == 1 && rng.Intn(6) == 0 {
		rAddDates(rng, c)
	}
	c.jsonText = rJSON(c)
	return c
}

// rAddDates adds RDATE and EXDATE values: EXDATE on instances the rule
// has, RDATE anywhere in its span.
func rAddDates(rng *rand.Rand, c *rCase) {
	m := &c.members[0]
	var scratch rCounts
	scratch.reconciled = map[string]int{}
	inst := rMemberInstants(c, *m, &scratch, 20)
	span := c.horizon.Sub(c.start)
	for range 1 + rng.Intn(3) {
		w := rWall(c.start.Add(time.Duration(rng.Int63n(int64(span)))), c.loc).Truncate(time.Second)
		if ts, kind := rPlace(w, c.loc, nil); kind == "" && len(ts) == 1 {
			m.rdates = append(m.rdates, w)
		}
	}
	for range rng.Intn(3) {
		if len(inst) > 0 {
			t := inst[rng.Intn(len(inst))]
			if _, kind := rPlace(rWall(t, c.loc), c.loc, nil); kind == "" {
				m.exdates = append(m.exdates, rWall(t, c.loc))
			}
		}
	}
}

// rCompare checks the engine against the expected occurrences: the
// first ones from the start, and Next chains from around every
// transition within the horizon.
func rCompare(t *testing.T, c *rCase, counts *rCounts) {
	t.Helper()
	const firstN = 40
	def, err := recurrence.Parse([]byte(c.jsonText))
	if err != nil {
		t.Fatalf("%s: %v", c.jsonText, err)
	}
	rule, err := recurrence.Compile(def, c.start.Add(-time.Hour))
	var scratch rCounts
	scratch.reconciled = map[string]int{}
	want := rExpected(c, &scratch, 400)
	if err != nil {
		// A rule of a list that never occurs is refused at its path: the
		// rule's own instances must be none.
		var ve *recurrence.ValidationError
		var i int
		if errors.As(err, &ve) && ve.Code == recurrence.CodeNeverOccurs {
			if _, scanErr := fmt.Sscanf(ve.Path, "recurrence.rules[%d]", &i); scanErr == nil {
				one := *c
				one.members = c.members[i : i+1]
				want = rExpected(&one, &scratch, 400)
			}
		}
		if len(want) > 0 {
			t.Errorf("%s: engine refuses it (%v), rrule-go finds %v", c.jsonText, err, want[:min(3, len(want))])
		}
		return
	}
	// The reconciliations are counted on the compared occurrences only.
	_ = rExpected(c, counts, firstN)
	var got []time.Time
	oGuard(func() string { return c.jsonText }, func() {
		for next, ok := rule.First(c.start); ok && !next.After(c.horizon) && len(got) < firstN; next, ok = rule.Next(next) {
			got = append(got, next)
		}
	})
	counts.occurrences += len(got)
	if !oEqualTimes(t, want[:min(firstN, len(want))], got, "%s (DTSTART %s in %s)", c.jsonText, rWall(c.start, c.loc).Format(time.DateTime), c.zone) {
		return
	}
	complete := len(want) < 400
	for _, tr := range oTransitions(c.loc, c.start, c.horizon) {
		for _, d := range []time.Duration{-2 * time.Hour, -time.Second, 0, time.Second, time.Hour} {
			after := tr.Add(d)
			var exp []time.Time
			for _, w := range want {
				if w.After(after) && len(exp) < 5 {
					exp = append(exp, w)
				}
			}
			if len(exp) < 5 && !complete {
				continue
			}
			var chain []time.Time
			oGuard(func() string { return c.jsonText }, func() {
				chain = oNextChain(rule, after, 5)
			})
			chain = slices.DeleteFunc(chain, func(x time.Time) bool { return x.After(c.horizon) })
			counts.nextChains++
			counts.occurrences += len(chain)
			if !oEqualTimes(t, exp, chain, "%s: Next chain after %s", c.jsonText, after.UTC().Format(time.RFC3339)) {
				return
			}
		}
	}
}

// TestRRuleMatchesRRuleGo compares recurrence.rrule and recurrence.rules
// with rrule-go on seeded random rules: in each of eight zones, rules
// anchored before every DST transition of 2024-2027, rules anchored
// anywhere in those years, and unions of two or three rules.
func TestRRuleMatchesRRuleGo(t *testing.T) {
	counts := &rCounts{reconciled: map[string]int{}}
	perTransition, anywhere, unions := 5**oracleScale, 120**oracleScale, 40**oracleScale
	if testing.Short() {
		perTransition, anywhere, unions = 1, 10, 5
	}
	for zi, zone := range rZones {
		t.Run(strings.ReplaceAll(zone, "/", "_"), func(t *testing.T) {
			loc := oLoad(t, zone)
			rng := rand.New(rand.NewSource(oracleSeed(int64(5500 + zi))))
			transitions := oTransitions(loc, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC))
			var cases []*rCase
			for _, tr := range transitions {
				for range perTransition {
					cases = append(cases, rNewCase(rng, zone, loc, tr, 1))
				}
			}
			for range anywhere {
				cases = append(cases, rNewCase(rng, zone, loc, time.Time{}, 1))
			}
			for i := range unions {
				var tr time.Time
				if len(transitions) > 0 && i%2 == 0 {
					tr = transitions[rng.Intn(len(transitions))]
				}
				cases = append(cases, rNewCase(rng, zone, loc, tr, 2+rng.Intn(2)))
			}
			for _, c := range cases {
				if len(c.members) > 1 {
					counts.unions++
				}
				counts.rules += len(c.members)
				rCompare(t, c, counts)
				if t.Failed() {
					return
				}
			}
		})
	}
	t.Logf("rules %d (in %d unions of 2-3), occurrences compared %d, Next chains from around transitions %d",
		counts.rules, counts.unions, counts.occurrences, counts.nextChains)
	for _, k := range slices.Sorted(mapsKeys(counts.reconciled)) {
		t.Logf("reconciled: %s: %d", k, counts.reconciled[k])
	}
}

func mapsKeys(m map[string]int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
