package recurrence_test

// A brute-force oracle for docs/recurrence.md, written from the contract alone
// (not from the engine), and differential tests that compare the engine's
// Rule.First / Rule.Next / Preview with it on seeded random rules.
//
// The oracle is deliberately naive: it walks the periods of a rule one by
// one, lists every wall-clock time of each period with time.Date, places
// each of them in the zone with an explicit gap/overlap search, and then
// sorts, dedups and filters the union. The only shortcut it takes is to
// start the walk a period or two before the one containing "after",
// computed with plain calendar arithmetic.

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/recurrence"
)

// oracleScale multiplies the number of random rules the differential tests
// draw, and shifts their seeds, for longer hunts than plain go test:
//
//	go test -run MatchesOracle -oracle.scale=50 ./recurrence/
var oracleScale = flag.Int("oracle.scale", 1, "multiply the number of random rules of the oracle tests (and vary their seeds)")

// oracleSeed is a test's base seed, varied when -oracle.scale is given.
func oracleSeed(seed int64) int64 { return seed + 1000*int64(*oracleScale-1) }

// ---------------------------------------------------------------------------
// The oracle
// ---------------------------------------------------------------------------

// oracleOccurrence is one monthlyOccurrences entry; occ 0 = no occurrence.
type oracleOccurrence struct {
	day time.Weekday
	occ int
}

// oracleRule is a rule as docs/recurrence.md describes it, already resolved:
// the anchor A, the zone Z and the schedule.
type oracleRule struct {
	freq      recurrence.Frequency
	interval  int
	minutes   []int
	hours     []int
	weekDays  []time.Weekday
	monthDays []int
	occs      []oracleOccurrence
	loc       *time.Location
	anchor    time.Time // A
}

// oracleWall is a wall-clock time in Z.
type oracleWall struct {
	y               int
	mo              time.Month
	d, h, mi, s, ns int
}

func (w oracleWall) String() string {
	return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%09d", w.y, w.mo, w.d, w.h, w.mi, w.s, w.ns)
}

// asUTC is w's numbers read as if they were UTC: the "local seconds" of w.
func (w oracleWall) asUTC() time.Time {
	return time.Date(w.y, w.mo, w.d, w.h, w.mi, w.s, w.ns, time.UTC)
}

// oReadsAs reports whether instant t shows wall clock w in loc.
func oReadsAs(t time.Time, loc *time.Location, w oracleWall) bool {
	l := t.In(loc)
	return l.Year() == w.y && l.Month() == w.mo && l.Day() == w.d &&
		l.Hour() == w.h && l.Minute() == w.mi && l.Second() == w.s && l.Nanosecond() == w.ns
}

func oOffsetAt(t time.Time, loc *time.Location) int {
	_, off := t.In(loc).Zone()
	return off
}

// oPlaceWall is docs/recurrence.md's DST rule: the instant at which wall-clock
// time w in loc runs.
//   - w exists once: that instant;
//   - w exists twice (fall-back): the earlier instant;
//   - w does not exist (spring-forward gap): w interpreted with the offset in
//     effect before the gap, i.e. "the same offset past the gap's end".
//
// Every instant that reads w lies within 14 hours of w read as UTC, so its
// offset is one of the offsets in effect around there; the oracle samples
// them and assumes (and checks) that at most one transition happens in
// that 30-hour window.
func oPlaceWall(loc *time.Location, w oracleWall) time.Time {
	u := w.asUTC()
	var offsets []int
	for _, h := range []int{-15, -10, -5, 0, 5, 10, 15} {
		off := oOffsetAt(u.Add(time.Duration(h)*time.Hour), loc)
		if !slices.Contains(offsets, off) {
			offsets = append(offsets, off)
		}
	}
	if len(offsets) > 2 {
		panic(fmt.Sprintf("oracle: more than one transition around %v in %v", w, loc))
	}
	var found []time.Time
	for _, off := range offsets {
		t := u.Add(-time.Duration(off) * time.Second)
		if oReadsAs(t, loc, w) {
			found = append(found, t)
		}
	}
	if len(found) > 0 {
		return slices.MinFunc(found, func(a, b time.Time) int { return a.Compare(b) })
	}
	// A gap. The offset in effect before it is the one 15 hours "before" w.
	before := oOffsetAt(u.Add(-15*time.Hour), loc)
	after := oOffsetAt(u.Add(15*time.Hour), loc)
	if before >= after {
		panic(fmt.Sprintf("oracle: %v in %v is missing but no spring-forward transition found", w, loc))
	}
	t := u.Add(-time.Duration(before) * time.Second)
	// Sanity: it reads w shifted by the size of the gap.
	shifted := u.Add(time.Duration(after-before) * time.Second)
	if !oReadsAs(t, loc, oracleWall{shifted.Year(), shifted.Month(), shifted.Day(), shifted.Hour(), shifted.Minute(), shifted.Second(), shifted.Nanosecond()}) {
		panic(fmt.Sprintf("oracle: gap placement of %v in %v reads %v", w, loc, t.In(loc)))
	}
	return t.UTC()
}

// oCivil returns the oCivil date of t in loc as a UTC midnight (for day arithmetic).
func oCivil(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, time.UTC)
}

func oDaysBetween(a, b time.Time) int { return int(b.Sub(a).Hours()) / 24 }

func oFloorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func (r *oracleRule) wallA() oracleWall {
	l := r.anchor.In(r.loc)
	return oracleWall{l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond()}
}

// minutesSet is MINUTES, hoursSet is HOURS.
func (r *oracleRule) minutesSet() []int {
	if len(r.minutes) > 0 {
		return r.minutes
	}
	return []int{r.wallA().mi}
}

func (r *oracleRule) hoursSet() []int {
	if len(r.hours) > 0 {
		return r.hours
	}
	if len(r.minutes) > 0 {
		all := make([]int, 24)
		for i := range all {
			all[i] = i
		}
		return all
	}
	return []int{r.wallA().h}
}

// hourStart is the start of A's wall-clock hour, as an instant.
func (r *oracleRule) hourStart() time.Time {
	a := r.wallA()
	return r.anchor.Add(-time.Duration(a.mi)*time.Minute - time.Duration(a.s)*time.Second - time.Duration(a.ns))
}

// days returns the days (as UTC midnights) of period k of a calendar frequency.
func (r *oracleRule) days(k int) []time.Time {
	a := r.wallA()
	switch r.freq {
	case recurrence.Day:
		return []time.Time{time.Date(a.y, a.mo, a.d+k*r.interval, 0, 0, 0, 0, time.UTC)}
	case recurrence.Week:
		aDate := time.Date(a.y, a.mo, a.d, 0, 0, 0, 0, time.UTC)
		monday := aDate.AddDate(0, 0, -((int(aDate.Weekday()) + 6) % 7))
		want := r.weekDays
		if len(want) == 0 {
			want = []time.Weekday{aDate.Weekday()}
		}
		var out []time.Time
		for i := range 7 {
			d := monday.AddDate(0, 0, 7*k*r.interval+i)
			if slices.Contains(want, d.Weekday()) {
				out = append(out, d)
			}
		}
		return out
	case recurrence.Month:
		first := time.Date(a.y, a.mo+time.Month(k*r.interval), 1, 0, 0, 0, 0, time.UTC)
		dim := first.AddDate(0, 1, -1).Day()
		var days []int
		if len(r.monthDays) == 0 && len(r.occs) == 0 {
			days = append(days, a.d) // dropped below when > dim
		}
		for _, d := range r.monthDays {
			if d > 0 {
				days = append(days, d)
			} else {
				days = append(days, dim+1+d)
			}
		}
		for _, o := range r.occs {
			var matching []int
			for d := 1; d <= dim; d++ {
				if first.AddDate(0, 0, d-1).Weekday() == o.day {
					matching = append(matching, d)
				}
			}
			switch {
			case o.occ == 0:
				days = append(days, matching...)
			case o.occ > 0 && o.occ <= len(matching):
				days = append(days, matching[o.occ-1])
			case o.occ < 0 && -o.occ <= len(matching):
				days = append(days, matching[len(matching)+o.occ])
			}
		}
		var out []time.Time
		for _, d := range days {
			if d >= 1 && d <= dim {
				out = append(out, first.AddDate(0, 0, d-1))
			}
		}
		return out
	case recurrence.Year:
		y := a.y + k*r.interval
		d := time.Date(y, a.mo, a.d, 0, 0, 0, 0, time.UTC)
		if d.Month() != a.mo { // Feb 29 in a common year
			return nil
		}
		return []time.Time{d}
	}
	panic("oracle: not a calendar frequency")
}

// period returns the occurrences of period k (not yet filtered by ≥ A).
func (r *oracleRule) period(k int) []time.Time {
	if r.freq == recurrence.Second || r.freq == recurrence.Minute {
		unit := int64(60)
		if r.freq == recurrence.Second {
			unit = 1
		}
		t := oAddSeconds(r.anchor, int64(k)*int64(r.interval)*unit)
		h, m, _ := t.In(r.loc).Clock()
		if len(r.hours) > 0 && !slices.Contains(r.hours, h) {
			return nil
		}
		if len(r.minutes) > 0 && !slices.Contains(r.minutes, m) {
			return nil
		}
		return []time.Time{t}
	}
	a := r.wallA()
	switch r.freq {
	case recurrence.Hour:
		h := oAddSeconds(r.hourStart(), int64(k)*int64(r.interval)*3600)
		var out []time.Time
		for _, m := range r.minutesSet() {
			t := h.Add(time.Duration(m)*time.Minute + time.Duration(a.s)*time.Second + time.Duration(a.ns))
			if len(r.hours) > 0 && !slices.Contains(r.hours, t.In(r.loc).Hour()) {
				continue
			}
			out = append(out, t)
		}
		return out
	}
	var out []time.Time
	for _, d := range r.days(k) {
		for _, h := range r.hoursSet() {
			for _, m := range r.minutesSet() {
				w := oracleWall{d.Year(), d.Month(), d.Day(), h, m, a.s, a.ns}
				if w == a {
					// A's own wall-clock time runs at A, even when A is
					// the later instant of a repeated hour (rule 4).
					out = append(out, r.anchor)
					continue
				}
				out = append(out, oPlaceWall(r.loc, w))
			}
		}
	}
	return out
}

// oAddSeconds is t + s seconds without time.Duration's 292-year limit.
func oAddSeconds(t time.Time, s int64) time.Time {
	return time.Unix(t.Unix()+s, int64(t.Nanosecond())).UTC()
}

// startPeriod is a period index such that no period before it has an
// occurrence after t (a period or two of slack is harmless).
func (r *oracleRule) startPeriod(t time.Time) int {
	if !t.After(r.anchor) {
		return 0
	}
	a := r.wallA()
	aDate := time.Date(a.y, a.mo, a.d, 0, 0, 0, 0, time.UTC)
	tDate := oCivil(t, r.loc)
	var k int
	switch r.freq {
	case recurrence.Second:
		k = int(t.Sub(r.anchor) / (time.Duration(r.interval) * time.Second))
	case recurrence.Minute:
		k = int(t.Sub(r.anchor) / (time.Duration(r.interval) * time.Minute))
	case recurrence.Hour:
		k = int(t.Sub(r.hourStart()) / (time.Duration(r.interval) * time.Hour))
	case recurrence.Day:
		k = oFloorDiv(oDaysBetween(aDate, tDate), r.interval)
	case recurrence.Week:
		monday := aDate.AddDate(0, 0, -((int(aDate.Weekday()) + 6) % 7))
		k = oFloorDiv(oDaysBetween(monday, tDate), 7*r.interval)
	case recurrence.Month:
		k = oFloorDiv((tDate.Year()*12+int(tDate.Month()))-(a.y*12+int(a.mo)), r.interval)
	case recurrence.Year:
		k = oFloorDiv(tDate.Year()-a.y, r.interval)
	}
	return max(0, k-2)
}

// maxPeriods bounds the oracle's walk: two years' worth of Minute or Hour
// periods (a filter that matches at all matches within a year, whatever
// the DST rules), and generous bounds for the calendar frequencies.
// Second's walk stops at 40 days: steps of up to a minute reach every
// allowed minute within a day, longer ones are at most 1000 seconds.
func (r *oracleRule) maxPeriods() int {
	switch r.freq {
	case recurrence.Second:
		return max(5_000, min(40*86400, 2*366*86400)/r.interval)
	case recurrence.Minute:
		return max(5_000, 2*366*1440/r.interval)
	case recurrence.Hour:
		return max(5_000, 2*366*24/r.interval)
	case recurrence.Day:
		return 20_000
	case recurrence.Year:
		return 1_000
	}
	return 5_000
}

// occurrences returns the first n occurrences of the rule's occurrence
// set that are after t (or at-or-after t when inclusive), and whether the
// list is complete (false when the walk hit its bound first).
func (r *oracleRule) occurrences(t time.Time, inclusive bool, n int) ([]time.Time, bool) {
	var out []time.Time
	seen := map[int64]bool{} // "with duplicates removed"
	k := r.startPeriod(t)
	extra := -1 // periods still to walk once n were found
	for i, limit := 0, r.maxPeriods(); i < limit; i, k = i+1, k+1 {
		for _, o := range r.period(k) {
			if o.Before(r.anchor) {
				continue // "the union of all those instants that are ≥ A"
			}
			if (o.After(t) || (inclusive && o.Equal(t))) && !seen[o.UnixNano()] {
				seen[o.UnixNano()] = true
				out = append(out, o.UTC())
			}
		}
		if extra < 0 && len(out) >= n {
			extra = 3
		}
		if extra == 0 {
			break
		}
		if extra > 0 {
			extra--
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	complete := extra == 0
	if len(out) > n {
		out = out[:n]
		complete = true
	}
	return out, complete
}

// ---------------------------------------------------------------------------
// Rules under test: generation and JSON
// ---------------------------------------------------------------------------

// oracleCase is a rule together with the JSON the engine parses.
type oracleCase struct {
	rule    oracleRule
	json    string
	created time.Time
}

var oracleZones = []struct {
	iana    string
	windows string
}{
	{"UTC", "UTC"},
	{"America/New_York", "Eastern Standard Time"},
	{"Europe/Berlin", "W. Europe Standard Time"},
	{"Australia/Lord_Howe", "Lord Howe Standard Time"},
	{"America/Santiago", "Pacific SA Standard Time"},
	{"Australia/Sydney", "AUS Eastern Standard Time"},
	{"Asia/Kolkata", "India Standard Time"},
	// Beyond the brief: a two-hour DST (Troll), a 45-minute offset with DST
	// (Chatham), negative DST in the tz data (Dublin), Ramadan suspensions
	// (Casablanca) and a -03:30 zone with DST (St John's).
	{"Antarctica/Troll", ""},
	{"Pacific/Chatham", "Chatham Islands Standard Time"},
	{"Europe/Dublin", ""},
	{"Africa/Casablanca", "Morocco Standard Time"},
	{"America/St_Johns", "Newfoundland Standard Time"},
}

func oLoad(t testing.TB, name string) *time.Location {
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

var oDayNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// oRandomCase spells s in a random letter case (inputs are case-insensitive).
func oRandomCase(rng *rand.Rand, s string) string {
	switch rng.Intn(4) {
	case 0:
		return strings.ToLower(s)
	case 1:
		return strings.ToUpper(s)
	default:
		return s
	}
}

// oBuildJSON writes r as job properties the way a client could have: the
// startTime in one of the accepted ISO 8601 forms.
func oBuildJSON(rng *rand.Rand, r oracleRule, zoneName string, withStart bool, extra map[string]any) string {
	rec := map[string]any{"frequency": oRandomCase(rng, string(r.freq))}
	if r.interval != 1 || rng.Intn(2) == 0 {
		rec["interval"] = r.interval
	}
	if zoneName != "" {
		rec["timeZone"] = zoneName
	}
	sched := map[string]any{}
	if len(r.minutes) > 0 {
		sched["minutes"] = r.minutes
	}
	if len(r.hours) > 0 {
		sched["hours"] = r.hours
	}
	if len(r.weekDays) > 0 {
		var names []string
		for _, w := range r.weekDays {
			names = append(names, oRandomCase(rng, oDayNames[w]))
		}
		sched["weekDays"] = names
	}
	if len(r.monthDays) > 0 {
		sched["monthDays"] = r.monthDays
	}
	if len(r.occs) > 0 {
		var occs []map[string]any
		for _, o := range r.occs {
			m := map[string]any{"day": oRandomCase(rng, oDayNames[o.day])}
			if o.occ != 0 {
				m["occurrence"] = o.occ
			}
			occs = append(occs, m)
		}
		sched["monthlyOccurrences"] = occs
	}
	if len(sched) > 0 {
		rec["schedule"] = sched
	}
	for k, v := range extra {
		rec[k] = v
	}
	props := map[string]any{"recurrence": rec}
	if withStart {
		props["startTime"] = oFormatStart(rng, r.anchor, r.loc)
	}
	b, err := json.Marshal(props)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// oFormatStart writes A in one of the forms docs/recurrence.md accepts.
func oFormatStart(rng *rand.Rand, a time.Time, loc *time.Location) string {
	whole := a.Nanosecond() == 0
	switch rng.Intn(5) {
	case 0:
		if whole && a.Second() == 0 {
			return a.UTC().Format("2006-01-02T15:04Z") // no seconds
		}
	case 1:
		return a.In(loc).Format(time.RFC3339Nano) // numeric offset (or Z)
	case 2:
		return a.UTC().Format("2006-01-02T15:04:05.999999999") // no offset = UTC
	}
	return a.UTC().Format(time.RFC3339Nano)
}

func oPick[T any](rng *rand.Rand, xs []T) T { return xs[rng.Intn(len(xs))] }

// oRandomSubset returns 0..maxN distinct values drawn from draw.
func oRandomSubset(rng *rand.Rand, maxN int, draw func() int) []int {
	n := rng.Intn(maxN + 1)
	var out []int
	for len(out) < n {
		v := draw()
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// oTransitions returns the instants in [from, to) at which loc's offset changes.
func oTransitions(loc *time.Location, from, to time.Time) []time.Time {
	var out []time.Time
	prev := oOffsetAt(from, loc)
	for t := from; t.Before(to); t = t.Add(6 * time.Hour) {
		next := t.Add(6 * time.Hour)
		if off := oOffsetAt(next, loc); off != prev {
			lo, hi := t, next // offset(lo) = prev, offset(hi) = off
			for hi.Sub(lo) > time.Second {
				mid := lo.Add(hi.Sub(lo) / 2)
				if oOffsetAt(mid, loc) == prev {
					lo = mid
				} else {
					hi = mid
				}
			}
			out = append(out, hi)
			prev = off
		}
	}
	return out
}

// oRandomAnchor draws A: any time from 1970 to 2030, often on or near a DST
// transition of loc, sometimes with fractional seconds.
func oRandomAnchor(rng *rand.Rand, loc *time.Location) time.Time {
	y := 1970 + rng.Intn(61)
	var a time.Time
	switch rng.Intn(4) {
	case 0, 1:
		a = time.Date(y, time.Month(1+rng.Intn(12)), 1+rng.Intn(31), rng.Intn(24), rng.Intn(60), rng.Intn(60), 0, loc)
	case 2: // around a transition
		ts := oTransitions(loc, time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(y+1, 1, 1, 0, 0, 0, 0, time.UTC))
		if len(ts) == 0 {
			a = time.Date(y, time.Month(1+rng.Intn(12)), 1+rng.Intn(28), rng.Intn(24), 0, 0, 0, loc)
		} else {
			a = oPick(rng, ts).Add(time.Duration(rng.Intn(72*60)-36*60) * time.Minute)
		}
	default: // a month end / Feb 29
		a = time.Date(oPick(rng, []int{2000, 2004, 2012, 2024, 1972, y}), time.Month(1+rng.Intn(12)), oPick(rng, []int{28, 29, 30, 31}), rng.Intn(24), rng.Intn(60), 0, 0, loc)
		if rng.Intn(3) == 0 {
			a = time.Date(oPick(rng, []int{1972, 2000, 2004, 2012, 2024, 2028}), 2, 29, rng.Intn(24), rng.Intn(60), rng.Intn(60), 0, loc)
		}
	}
	if rng.Intn(5) == 0 {
		a = a.Add(time.Duration(1 + rng.Intn(999_999_999)))
	}
	return a.UTC()
}

// oRandomRule draws a valid rule of frequency f in zone loc.
func oRandomRule(rng *rand.Rand, f recurrence.Frequency, loc *time.Location) oracleRule {
	r := oracleRule{freq: f, loc: loc, anchor: oRandomAnchor(rng, loc), interval: 1}
	limit := map[recurrence.Frequency]int{
		recurrence.Second: 1000, recurrence.Minute: 1000, recurrence.Hour: 1000, recurrence.Day: 548,
		recurrence.Week: 78, recurrence.Month: 18, recurrence.Year: 10,
	}[f]
	switch rng.Intn(4) {
	case 0:
		r.interval = 1
	case 1:
		r.interval = 1 + rng.Intn(min(limit, 4))
	case 2:
		r.interval = limit
	default:
		r.interval = 1 + rng.Intn(limit)
	}
	if f == recurrence.Minute && rng.Intn(2) == 0 {
		r.interval = oPick(rng, []int{1, 5, 15, 30, 45, 60, 90, 120, 720, 1000})
	}
	if f == recurrence.Second && rng.Intn(2) == 0 {
		r.interval = oPick(rng, []int{1, 2, 5, 10, 15, 30, 45, 59, 60, 61, 90, 600, 999, 1000})
	}
	minute := func() int { return rng.Intn(60) }
	hour := func() int { return rng.Intn(24) }
	if rng.Intn(3) > 0 {
		r.minutes = oRandomSubset(rng, 3, minute)
	}
	if rng.Intn(3) > 0 {
		if f == recurrence.Second || f == recurrence.Minute || rng.Intn(2) == 0 {
			r.hours = oRandomSubset(rng, 3, hour)
		} else {
			r.hours = oRandomSubset(rng, 3, func() int { return oPick(rng, []int{0, 1, 2, 3, 23}) }) // DST-prone hours
		}
	}
	if (f == recurrence.Second || f == recurrence.Minute) && len(r.minutes) > 0 && rng.Intn(2) == 0 {
		// a minute filter that the steps can reach
		r.minutes = []int{r.anchor.In(loc).Minute()}
	}
	switch f {
	case recurrence.Week:
		for _, w := range oRandomSubset(rng, 3, func() int { return rng.Intn(7) }) {
			r.weekDays = append(r.weekDays, time.Weekday(w))
		}
	case recurrence.Month:
		if rng.Intn(3) > 0 {
			r.monthDays = oRandomSubset(rng, 3, func() int {
				d := 1 + rng.Intn(31)
				if rng.Intn(3) == 0 {
					return -d
				}
				return d
			})
		}
		if rng.Intn(2) == 0 {
			for range rng.Intn(3) {
				o := oracleOccurrence{day: time.Weekday(rng.Intn(7))}
				if rng.Intn(4) > 0 {
					o.occ = 1 + rng.Intn(5)
					if rng.Intn(2) == 0 {
						o.occ = -o.occ
					}
				}
				r.occs = append(r.occs, o)
			}
		}
	}
	return r
}

// oCompile parses and compiles c with the engine. ok is false when the
// engine says the rule never occurs, which the test then checks against
// the oracle.
func oCompile(t *testing.T, c oracleCase) (*recurrence.Rule, bool) {
	t.Helper()
	def, err := recurrence.Parse([]byte(c.json))
	require.NoError(t, err, "rule %s", c.json)
	rule, err := recurrence.Compile(def, c.created)
	if err != nil {
		var ve *recurrence.ValidationError
		require.ErrorAs(t, err, &ve, "rule %s", c.json)
		require.Equal(t, recurrence.CodeNeverOccurs, ve.Code, "rule %s: %v", c.json, err)
		got, _ := c.rule.occurrences(c.rule.anchor, true, 1)
		require.Empty(t, got, "rule %s: Compile says it never occurs, but the oracle finds %v", c.json, got)
		return nil, false
	}
	return rule, true
}

// oNextChain is n successive Rule.Next calls from after.
func oNextChain(rule *recurrence.Rule, after time.Time, n int) []time.Time {
	var out []time.Time
	t := after
	for range n {
		next, ok := rule.Next(t)
		if !ok {
			break
		}
		out = append(out, next)
		t = next
	}
	return out
}

// oEngineDeadline is how long the engine may take for one checked chain
// before the test declares it hung. An engine that hangs cannot be
// stopped, so the test binary is stopped instead, naming the rule.
const oEngineDeadline = 10 * time.Second

// oGuard is guardHang with the oracle tests' deadline.
func oGuard(what func() string, f func()) { guardHang(oEngineDeadline, what, f) }

func oFmtTimes(ts []time.Time) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.UTC().Format(time.RFC3339Nano))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// oCheckNext compares n Next calls from after with the oracle.
func oCheckNext(t *testing.T, c oracleCase, rule *recurrence.Rule, after time.Time, n int) bool {
	t.Helper()
	want, complete := c.rule.occurrences(after, false, n)
	var got []time.Time
	oGuard(func() string {
		return fmt.Sprintf("rule %s, created %s, Next chain after %s", c.json, c.created.Format(time.RFC3339Nano), after.UTC().Format(time.RFC3339Nano))
	}, func() { got = oNextChain(rule, after, n) })
	if !complete && len(got) > len(want) {
		got = got[:len(want)] // the oracle gave up; compare what it found
	}
	return oEqualTimes(t, want, got, "rule %s\ncreated %s\nNext chain after %s", c.json,
		c.created.Format(time.RFC3339Nano), after.UTC().Format(time.RFC3339Nano))
}

func oEqualTimes(t *testing.T, want, got []time.Time, format string, args ...any) bool {
	t.Helper()
	if len(want) == len(got) {
		same := true
		for i := range want {
			same = same && want[i].Equal(got[i])
		}
		if same {
			return true
		}
	}
	t.Errorf(format+"\n  oracle: %s\n  engine: %s", append(args, oFmtTimes(want), oFmtTimes(got))...)
	return false
}

// oAfterInstants draws the instants from which Next chains are compared:
// before A, at A, shortly and long after A, around DST oTransitions and in 2026.
func oAfterInstants(rng *rand.Rand, r oracleRule) []time.Time {
	a := r.anchor
	out := []time.Time{
		a.Add(-time.Duration(rng.Int63n(int64(72 * time.Hour)))),
		a,
		a.Add(time.Duration(rng.Int63n(int64(400 * 24 * time.Hour)))),
		time.Date(2026, time.Month(1+rng.Intn(12)), 1+rng.Intn(28), rng.Intn(24), rng.Intn(60), rng.Intn(60), 0, time.UTC),
	}
	ts := oTransitions(r.loc, a, a.AddDate(2, 0, 0))
	if len(ts) > 0 {
		tr := oPick(rng, ts)
		out = append(out, tr.Add(time.Duration(rng.Intn(4*3600)-3*3600)*time.Second))
		out = append(out, tr.Add(-time.Duration(rng.Intn(3*86400))*time.Second))
	}
	if rng.Intn(4) == 0 {
		out = append(out, a.Add(time.Duration(rng.Intn(3600))*time.Second+time.Duration(rng.Intn(1e9))))
	}
	return out
}

// ---------------------------------------------------------------------------
// The oracle checked against the examples docs/recurrence.md itself gives
// ---------------------------------------------------------------------------

func oUTC(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// TestOracleAgreesWithTheSpecExamples pins the oracle to the worked
// examples of docs/recurrence.md, so that the differential tests compare the
// engine with the contract and not with a second copy of the same mistake.
func TestOracleAgreesWithTheSpecExamples(t *testing.T) {
	ny := oLoad(t, "America/New_York")
	lh := oLoad(t, "Australia/Lord_Howe")
	cases := []struct {
		name  string
		rule  oracleRule
		after time.Time
		want  []string
	}{
		{
			// Rule 3's example: every 2 days from 2015-04-07T14:00Z, now 2015-04-08T13:00Z.
			name:  "rule 3 example every 2 days",
			rule:  oracleRule{freq: recurrence.Day, interval: 2, loc: time.UTC, anchor: oUTC("2015-04-07T14:00:00Z")},
			after: oUTC("2015-04-08T13:00:00Z"),
			want:  []string{"2015-04-09T14:00:00Z", "2015-04-11T14:00:00Z", "2015-04-13T14:00:00Z"},
		},
		{
			// {"minutes":[0]} with frequency Day runs every hour on the hour.
			name:  "minutes [0] daily runs hourly",
			rule:  oracleRule{freq: recurrence.Day, interval: 1, minutes: []int{0}, loc: time.UTC, anchor: oUTC("2015-04-07T14:20:00Z")},
			after: oUTC("2015-04-07T14:20:00Z"),
			want:  []string{"2015-04-07T15:00:00Z", "2015-04-07T16:00:00Z", "2015-04-07T17:00:00Z"},
		},
		{
			// {"hours":[5]} runs at 5:mm, mm = A's minute.
			name:  "hours [5] runs at 5:mm",
			rule:  oracleRule{freq: recurrence.Day, interval: 1, hours: []int{5}, loc: time.UTC, anchor: oUTC("2015-04-07T14:20:00Z")},
			after: oUTC("2015-04-07T14:20:00Z"),
			want:  []string{"2015-04-08T05:20:00Z", "2015-04-09T05:20:00Z"},
		},
		{
			// Jan 31 monthly: Mar 31, May 31, ...
			name:  "Jan 31 monthly skips short months",
			rule:  oracleRule{freq: recurrence.Month, interval: 1, loc: time.UTC, anchor: oUTC("2015-01-31T10:00:00Z")},
			after: oUTC("2015-01-31T10:00:00Z"),
			want:  []string{"2015-03-31T10:00:00Z", "2015-05-31T10:00:00Z", "2015-07-31T10:00:00Z", "2015-08-31T10:00:00Z"},
		},
		{
			name:  "Feb 29 yearly runs only in leap years",
			rule:  oracleRule{freq: recurrence.Year, interval: 1, loc: time.UTC, anchor: oUTC("2096-02-29T08:00:00Z")},
			after: oUTC("2096-02-29T08:00:00Z"),
			want:  []string{"2104-02-29T08:00:00Z", "2108-02-29T08:00:00Z"},
		},
		{
			name:  "monthDays -1 and fifth friday",
			rule:  oracleRule{freq: recurrence.Month, interval: 1, monthDays: []int{-1}, occs: []oracleOccurrence{{time.Friday, 5}}, loc: time.UTC, anchor: oUTC("2026-01-01T00:00:00Z")},
			after: oUTC("2026-01-01T00:00:00Z"),
			want:  []string{"2026-01-30T00:00:00Z", "2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-31T00:00:00Z"},
		},
		{
			name:  "week is monday to sunday",
			rule:  oracleRule{freq: recurrence.Week, interval: 2, weekDays: []time.Weekday{time.Sunday, time.Monday}, loc: time.UTC, anchor: oUTC("2026-01-07T09:00:00Z")}, // a Wednesday
			after: oUTC("2026-01-01T00:00:00Z"),
			want:  []string{"2026-01-11T09:00:00Z", "2026-01-19T09:00:00Z", "2026-01-25T09:00:00Z"},
		},
		{
			// 02:30 in the 02:00-03:00 gap runs at 03:30 (EDT).
			name:  "spring-forward gap runs past the gap",
			rule:  oracleRule{freq: recurrence.Day, interval: 1, loc: ny, anchor: oUTC("2026-03-07T07:30:00Z")}, // 02:30 EST
			after: oUTC("2026-03-07T07:30:00Z"),
			want:  []string{"2026-03-08T07:30:00Z", "2026-03-09T06:30:00Z"}, // 03:30 EDT, 02:30 EDT
		},
		{
			// 01:30 exists twice on 2026-11-01: the earlier (EDT) instant.
			name:  "fall-back overlap runs at the earlier instant",
			rule:  oracleRule{freq: recurrence.Day, interval: 1, loc: ny, anchor: oUTC("2026-10-31T05:30:00Z")}, // 01:30 EDT
			after: oUTC("2026-10-31T05:30:00Z"),
			want:  []string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"},
		},
		{
			// Lord Howe springs forward 30 minutes at 02:00 on 2026-10-04: 02:15 runs at 02:45 (+11).
			name:  "thirty-minute gap",
			rule:  oracleRule{freq: recurrence.Day, interval: 1, loc: lh, anchor: oUTC("2026-10-02T15:45:00Z")}, // 02:15 +10:30
			after: oUTC("2026-10-02T15:45:00Z"),
			want:  []string{"2026-10-03T15:45:00Z", "2026-10-04T15:15:00Z"},
		},
		{
			// Two wall-clock times, one instant: 02:30 (gap, runs 03:30) and 03:30 dedup.
			name:  "two wall times on one instant run once",
			rule:  oracleRule{freq: recurrence.Day, interval: 1, hours: []int{2, 3}, minutes: []int{30}, loc: ny, anchor: oUTC("2026-03-08T05:00:00Z")},
			after: oUTC("2026-03-08T05:00:00Z"),
			want:  []string{"2026-03-08T07:30:00Z", "2026-03-09T06:30:00Z", "2026-03-09T07:30:00Z"},
		},
		{
			// Hour steps in absolute time across the fall-back: 01:00 EDT and 01:00 EST are both hours.
			name:  "hour steps in absolute time",
			rule:  oracleRule{freq: recurrence.Hour, interval: 1, hours: []int{1}, loc: ny, anchor: oUTC("2026-11-01T04:00:00Z")},
			after: oUTC("2026-11-01T04:00:00Z"),
			want:  []string{"2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-02T06:00:00Z"},
		},
		{
			// SECOND carries A's fraction (rule 4: "A itself when there is no schedule").
			name:  "fractional second",
			rule:  oracleRule{freq: recurrence.Day, interval: 1, loc: time.UTC, anchor: oUTC("2026-01-01T10:00:00.25Z")},
			after: oUTC("2025-12-31T00:00:00Z"),
			want:  []string{"2026-01-01T10:00:00.25Z", "2026-01-02T10:00:00.25Z"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, complete := c.rule.occurrences(c.after, false, len(c.want))
			require.True(t, complete)
			require.Equal(t, c.want, strings.Fields(strings.Trim(oFmtTimes(got), "[]")))
		})
	}
}

// ---------------------------------------------------------------------------
// Differential tests
// ---------------------------------------------------------------------------

const oChainLength = 6

// oRunDifferential compares the engine with the oracle on perZone random
// rules of frequency f in every zone.
func oRunDifferential(t *testing.T, f recurrence.Frequency, seed int64, perZone int) {
	for zi, z := range oracleZones {
		t.Run(z.iana, func(t *testing.T) {
			rng := rand.New(rand.NewSource(oracleSeed(seed)*100 + int64(zi)))
			loc := oLoad(t, z.iana)
			failures := 0
			for range perZone * *oracleScale {
				r := oRandomRule(rng, f, loc)
				zoneName := ""
				switch {
				case z.iana != "UTC" || rng.Intn(3) == 0:
					zoneName = z.iana
					if rng.Intn(5) == 0 && z.windows != "" {
						zoneName = z.windows
					}
				}
				c := oracleCase{rule: r, created: r.anchor.Add(-time.Hour)}
				c.json = oBuildJSON(rng, r, zoneName, true, nil)
				rule, ok := oCompile(t, c)
				if !ok {
					continue
				}
				for _, after := range oAfterInstants(rng, r) {
					if !oCheckNext(t, c, rule, after, oChainLength) {
						failures++
						break
					}
				}
				if failures >= 5 {
					t.Fatalf("stopping after %d failing rules", failures)
				}
			}
		})
	}
}

// TestOccurrenceSetOfMinuteRulesMatchesOracle: Minute periods are A + k·interval
// minutes in absolute time, filtered by wall-clock hours and minutes.
func TestOccurrenceSetOfMinuteRulesMatchesOracle(t *testing.T) {
	oRunDifferential(t, recurrence.Minute, 1, 200)
}

// TestOccurrenceSetOfSecondRulesMatchesOracle: Second periods are A +
// k·interval seconds in absolute time, filtered by wall-clock hours and
// minutes as Minute's are.
func TestOccurrenceSetOfSecondRulesMatchesOracle(t *testing.T) {
	oRunDifferential(t, recurrence.Second, 13, 200)
}

// TestOccurrenceSetOfHourRulesMatchesOracle: Hour periods step from A's hour in
// absolute time, expand by MINUTES, filter by wall-clock hours.
func TestOccurrenceSetOfHourRulesMatchesOracle(t *testing.T) {
	oRunDifferential(t, recurrence.Hour, 2, 200)
}

// TestOccurrenceSetOfDayRulesMatchesOracle: Day periods are calendar days in Z
// with HOURS × MINUTES placed by the DST rules.
func TestOccurrenceSetOfDayRulesMatchesOracle(t *testing.T) {
	oRunDifferential(t, recurrence.Day, 3, 200)
}

// TestOccurrenceSetOfWeekRulesMatchesOracle: Week periods are the
// Monday-to-Sunday weeks containing A, every interval weeks.
func TestOccurrenceSetOfWeekRulesMatchesOracle(t *testing.T) {
	oRunDifferential(t, recurrence.Week, 4, 200)
}

// TestOccurrenceSetOfMonthRulesMatchesOracle: Month day selection, including
// negative monthDays and monthlyOccurrences with and without occurrence.
func TestOccurrenceSetOfMonthRulesMatchesOracle(t *testing.T) {
	oRunDifferential(t, recurrence.Month, 5, 200)
}

// TestOccurrenceSetOfYearRulesMatchesOracle: Year periods, including Feb 29
// in leap years only.
func TestOccurrenceSetOfYearRulesMatchesOracle(t *testing.T) {
	oRunDifferential(t, recurrence.Year, 6, 200)
}

// TestNextFarFromAnchorMatchesOracle checks correctness (not
// speed) of Next far from A: rules anchored in 1970, asked in 2026.
func TestNextFarFromAnchorMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewSource(oracleSeed(7)))
	for _, f := range []recurrence.Frequency{recurrence.Minute, recurrence.Hour, recurrence.Day, recurrence.Week, recurrence.Month, recurrence.Year, recurrence.Second} {
		for _, z := range oracleZones {
			loc := oLoad(t, z.iana)
			for range 20 * *oracleScale {
				r := oRandomRule(rng, f, loc)
				r.anchor = time.Date(1970, time.Month(1+rng.Intn(12)), 1+rng.Intn(28), rng.Intn(24), rng.Intn(60), rng.Intn(60), 0, loc).UTC()
				c := oracleCase{rule: r, created: r.anchor}
				c.json = oBuildJSON(rng, r, z.iana, true, nil)
				rule, ok := oCompile(t, c)
				if !ok {
					continue
				}
				for range 3 {
					after := time.Date(2026, time.Month(1+rng.Intn(12)), 1+rng.Intn(28), rng.Intn(24), rng.Intn(60), rng.Intn(60), rng.Intn(1e9), time.UTC)
					oCheckNext(t, c, rule, after, oChainLength)
				}
			}
		}
	}
}

// TestDSTRulesMatchOracleAroundEveryTransition walks Day rules that run every
// 15 minutes, and Week/Month/Year rules pinned to a transition's day, through
// every DST transition of 2024-2027 in each zone: gaps run past the gap,
// overlaps run once at the earlier instant, no day is skipped.
func TestDSTRulesMatchOracleAroundEveryTransition(t *testing.T) {
	rng := rand.New(rand.NewSource(oracleSeed(8)))
	for _, z := range oracleZones {
		t.Run(z.iana, func(t *testing.T) {
			loc := oLoad(t, z.iana)
			ts := oTransitions(loc, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC))
			switch z.iana {
			case "UTC", "Asia/Kolkata":
				require.Empty(t, ts, "zone %s has no DST", z.iana)
				return
			case "Africa/Casablanca": // DST suspended for Ramadan
				require.NotEmpty(t, ts)
			default:
				require.Len(t, ts, 8, "zone %s should have two DST transitions a year", z.iana)
			}
			for _, tr := range ts {
				// The wall clock at which the transition happens, read with
				// the offset before it: 02:00 for New York in both directions,
				// 24:00 (00:00 of the next day) for Santiago.
				day := tr.Add(time.Duration(oOffsetAt(tr.Add(-time.Second), loc)) * time.Second).UTC()
				second := rng.Intn(60)
				hours := []int{day.Hour(), (day.Hour() + 23) % 24}
				minutes := []int{day.Minute(), (day.Minute() + 15) % 60, 45}
				rules := []oracleRule{
					{freq: recurrence.Day, interval: 1, minutes: []int{0, 15, 30, 45}},
					{freq: recurrence.Week, interval: 1, weekDays: []time.Weekday{day.Weekday()}, hours: []int{0, 1, 2, 3, 23}, minutes: []int{0, 30}},
					{freq: recurrence.Month, interval: 1, monthDays: []int{day.Day()}, hours: hours, minutes: minutes},
					{freq: recurrence.Year, interval: 1, hours: hours, minutes: minutes},
					{freq: recurrence.Minute, interval: 7},
					{freq: recurrence.Second, interval: 10, hours: hours},
					{freq: recurrence.Second, interval: 7, minutes: minutes},
					{freq: recurrence.Hour, interval: 1, minutes: []int{0, 30, 59}},
				}
				for _, r := range rules {
					r.loc = loc
					r.anchor = time.Date(day.Year(), day.Month(), day.Day()-3, 0, 0, second, 0, loc).UTC()
					if r.freq == recurrence.Year {
						r.anchor = time.Date(day.Year()-1, day.Month(), day.Day(), 0, 0, second, 0, loc).UTC()
					}
					c := oracleCase{rule: r, created: r.anchor}
					c.json = oBuildJSON(rng, r, z.iana, true, nil)
					rule, ok := oCompile(t, c)
					require.True(t, ok, "rule %s must occur", c.json)
					from, n := tr.Add(-26*time.Hour), 200
					switch r.freq {
					case recurrence.Second:
						from = tr.Add(-10 * time.Minute)
					case recurrence.Minute, recurrence.Hour:
						from = tr.Add(-3 * time.Hour)
					case recurrence.Week, recurrence.Month, recurrence.Year:
						n = 12
					}
					oCheckNext(t, c, rule, from, n)
				}
			}
		})
	}
}

// TestFirstRule2NoStartTimeRunsAtCreationThenFollowsTheRule: rule 2 — one run
// at C, then the occurrences of the rule anchored at A = C that are > C.
func TestFirstRule2NoStartTimeRunsAtCreationThenFollowsTheRule(t *testing.T) {
	rng := rand.New(rand.NewSource(oracleSeed(9)))
	for _, f := range []recurrence.Frequency{recurrence.Minute, recurrence.Hour, recurrence.Day, recurrence.Week, recurrence.Month, recurrence.Year, recurrence.Second} {
		for _, z := range oracleZones {
			loc := oLoad(t, z.iana)
			for range 25 * *oracleScale {
				r := oRandomRule(rng, f, loc)
				created := r.anchor.Add(time.Duration(rng.Intn(1e9))) // C is truncated to whole seconds
				r.anchor = created.Truncate(time.Second)
				c := oracleCase{rule: r, created: created}
				c.json = oBuildJSON(rng, r, z.iana, false, nil)
				rule, ok := oCompile(t, c)
				if !ok {
					continue
				}
				now := created.Add(time.Duration(rng.Intn(5000)) * time.Millisecond)
				first, ok := rule.First(now)
				require.True(t, ok, "rule %s", c.json)
				require.True(t, first.Equal(r.anchor), "rule %s created %s: First = %s, want C = %s", c.json, created.Format(time.RFC3339Nano), first, r.anchor)
				oCheckNext(t, c, rule, first, oChainLength)

				preview := rule.Preview(now, oChainLength)
				want, complete := r.occurrences(r.anchor, false, oChainLength-1)
				want = append([]time.Time{r.anchor}, want...)
				if !complete && len(preview) > len(want) {
					preview = preview[:len(want)]
				}
				oEqualTimes(t, want, preview, "rule %s: Preview(now=%s)", c.json, now.Format(time.RFC3339Nano))
			}
		}
	}
}

// TestFirstRule3PastStartTimeRunsAtFirstOccurrenceAtOrAfterNow: rule 3 — past
// occurrences are discarded; the first run is the first occurrence ≥ now.
func TestFirstRule3PastStartTimeRunsAtFirstOccurrenceAtOrAfterNow(t *testing.T) {
	rng := rand.New(rand.NewSource(oracleSeed(10)))
	for _, f := range []recurrence.Frequency{recurrence.Minute, recurrence.Hour, recurrence.Day, recurrence.Week, recurrence.Month, recurrence.Year, recurrence.Second} {
		for _, z := range oracleZones {
			loc := oLoad(t, z.iana)
			for range 25 * *oracleScale {
				r := oRandomRule(rng, f, loc)
				c := oracleCase{rule: r, created: r.anchor.Add(-time.Duration(rng.Intn(86400)) * time.Second)}
				c.json = oBuildJSON(rng, r, z.iana, true, nil)
				rule, ok := oCompile(t, c)
				if !ok {
					continue
				}
				nows := []time.Time{
					r.anchor.Add(time.Duration(1+rng.Intn(1e9)) * time.Nanosecond),
					r.anchor.Add(time.Duration(1+rng.Int63n(int64(800*24*time.Hour))) * time.Nanosecond),
				}
				// now exactly on a later occurrence: that occurrence is the first run.
				if occ, _ := r.occurrences(r.anchor, false, 3); len(occ) > 0 {
					nows = append(nows, occ[len(occ)-1])
				}
				for _, now := range nows {
					want, complete := r.occurrences(now, true, oChainLength)
					if first, ok := rule.First(now); len(want) > 0 {
						require.True(t, ok && first.Equal(want[0]), "rule %s: First(now=%s) = %s %v, oracle %s", c.json, now.Format(time.RFC3339Nano), first, ok, want[0])
					}
					got := rule.Preview(now, oChainLength)
					if !complete && len(got) > len(want) {
						got = got[:len(want)]
					}
					oEqualTimes(t, want, got, "rule %s: Preview(now=%s) (rule 3)", c.json, now.Format(time.RFC3339Nano))
				}
			}
		}
	}
}

// TestFirstRule4FutureStartTimeRunsAtFirstOccurrenceAtOrAfterStart: rule 4 —
// startTime now or in the future: the first run is the first occurrence ≥ A,
// A itself when there is no schedule.
func TestFirstRule4FutureStartTimeRunsAtFirstOccurrenceAtOrAfterStart(t *testing.T) {
	rng := rand.New(rand.NewSource(oracleSeed(11)))
	for _, f := range []recurrence.Frequency{recurrence.Minute, recurrence.Hour, recurrence.Day, recurrence.Week, recurrence.Month, recurrence.Year, recurrence.Second} {
		for _, z := range oracleZones {
			loc := oLoad(t, z.iana)
			for i := range 25 * *oracleScale {
				r := oRandomRule(rng, f, loc)
				if i%2 == 0 { // no schedule: A itself is the first run
					r.minutes, r.hours, r.weekDays, r.monthDays, r.occs = nil, nil, nil, nil, nil
				}
				c := oracleCase{rule: r, created: r.anchor.Add(-time.Duration(rng.Intn(86400*30)) * time.Second)}
				c.json = oBuildJSON(rng, r, z.iana, true, nil)
				rule, ok := oCompile(t, c)
				if !ok {
					continue
				}
				// A read as a wall clock and placed back by the DST rules is A,
				// unless A is the second instant of a fall-back hour; see
				// TestRule4StartTimeInTheRepeatedHourOfAFallBack.
				aIsItsOwnWallTime := oPlaceWall(loc, r.wallA()).Equal(r.anchor)
				for _, now := range []time.Time{c.created, r.anchor} {
					want, complete := r.occurrences(r.anchor, true, oChainLength)
					if len(want) == 0 {
						require.False(t, complete)
						continue // the oracle found nothing within its bound
					}
					if i%2 == 0 && aIsItsOwnWallTime {
						require.True(t, want[0].Equal(r.anchor), "oracle: unscheduled rule %s must start at A", c.json)
					}
					first, ok := rule.First(now)
					require.True(t, ok, "rule %s", c.json)
					require.True(t, first.Equal(want[0]), "rule %s: First(now=%s) = %s, oracle %s", c.json, now.Format(time.RFC3339Nano), first, want[0])
					got := rule.Preview(now, oChainLength)
					if !complete && len(got) > len(want) {
						got = got[:len(want)]
					}
					oEqualTimes(t, want, got, "rule %s: Preview(now=%s) (rule 4)", c.json, now.Format(time.RFC3339Nano))
				}
			}
		}
	}
}

// TestEndTimeStopsRunsAfterItAndKeepsARunExactlyAtIt: no scheduled run has a
// nominal time after endTime; a run exactly at endTime runs. Count limits
// Preview, not Next.
func TestEndTimeStopsRunsAfterItAndKeepsARunExactlyAtIt(t *testing.T) {
	rng := rand.New(rand.NewSource(oracleSeed(12)))
	for _, f := range []recurrence.Frequency{recurrence.Minute, recurrence.Hour, recurrence.Day, recurrence.Week, recurrence.Month, recurrence.Year, recurrence.Second} {
		for _, z := range oracleZones {
			loc := oLoad(t, z.iana)
			for i := range 12 * *oracleScale {
				r := oRandomRule(rng, f, loc)
				occ, _ := r.occurrences(r.anchor, true, 5)
				if len(occ) < 5 {
					continue
				}
				end, endJSON := occ[3], occ[3].Format(time.RFC3339Nano)
				switch i % 3 {
				case 1:
					end = end.Add(-time.Nanosecond) // just before the 4th
					endJSON = end.Format(time.RFC3339Nano)
				case 2:
					// "A date-only endTime means 00:00:00 of that date in Z",
					// placed by the DST rules when midnight is in a gap.
					d := end.In(loc)
					end = oPlaceWall(loc, oracleWall{y: d.Year(), mo: d.Month(), d: d.Day()})
					endJSON = d.Format(time.DateOnly)
				}
				var want []time.Time
				for _, o := range occ {
					if !o.After(end) {
						want = append(want, o)
					}
				}
				count := 1 + rng.Intn(6)
				c := oracleCase{rule: r, created: r.anchor.Add(-time.Hour)}
				c.json = oBuildJSON(rng, r, z.iana, true, map[string]any{"endTime": endJSON, "count": count})
				if end.Before(r.anchor) {
					// "endTime before startTime is a 400."
					_, err := recurrence.Parse([]byte(c.json))
					var ve *recurrence.ValidationError
					require.ErrorAs(t, err, &ve, "rule %s", c.json)
					require.Equal(t, recurrence.CodeEndBeforeStart, ve.Code, "rule %s", c.json)
					continue
				}
				rule, ok := oCompile(t, c)
				require.True(t, ok, "rule %s must occur", c.json)
				var got []time.Time
				oGuard(func() string { return c.json }, func() { got = oNextChain(rule, r.anchor.Add(-time.Nanosecond), 10) })
				oEqualTimes(t, want, got, "rule %s: Next chain with endTime", c.json)
				oEqualTimes(t, want[:min(count, len(want))], rule.Preview(c.created, 10), "rule %s: Preview with count %d and endTime", c.json, count)
				if len(want) == 0 {
					_, ok := rule.First(c.created)
					require.False(t, ok, "rule %s: nothing before endTime, so no first run", c.json)
				}
			}
		}
	}
}

// TestEndTimeInThePastCompletesWithoutRunning: "An endTime in the past is
// accepted: the job completes without running", with and without startTime.
func TestEndTimeInThePastCompletesWithoutRunning(t *testing.T) {
	created := oUTC("2026-03-01T10:00:00Z")
	for _, js := range []string{
		`{"recurrence":{"frequency":"Day","endTime":"2026-02-01T00:00:00Z"}}`,
		`{"recurrence":{"frequency":"Hour","endTime":"2026-02-01","timeZone":"America/Santiago"}}`,
		`{"startTime":"2026-01-01T00:00:00Z","recurrence":{"frequency":"Minute","endTime":"2026-02-01T00:00:00Z"}}`,
	} {
		def, err := recurrence.Parse([]byte(js))
		require.NoError(t, err, js)
		rule, err := recurrence.Compile(def, created)
		require.NoError(t, err, js)
		_, ok := rule.First(created)
		require.False(t, ok, "%s: the job completes without running", js)
		require.Empty(t, rule.Preview(created, 3), js)
	}
}

// TestNoRecurrenceRule1RunsOnceAtStartTimeOrAtOnce: rule 1.
func TestNoRecurrenceRule1RunsOnceAtStartTimeOrAtOnce(t *testing.T) {
	created := oUTC("2026-03-01T10:00:00.7Z")
	for _, c := range []struct {
		json string
		want time.Time
	}{
		{`{"startTime":"2026-03-02T10:00:00Z"}`, oUTC("2026-03-02T10:00:00Z")},
		{`{"startTime":"2026-02-02T10:00:00Z"}`, oUTC("2026-03-01T10:00:00Z")},
		{`{}`, oUTC("2026-03-01T10:00:00Z")},
	} {
		def, err := recurrence.Parse([]byte(c.json))
		require.NoError(t, err)
		rule, err := recurrence.Compile(def, created)
		require.NoError(t, err)
		first, ok := rule.First(created)
		require.True(t, ok)
		require.True(t, first.Equal(c.want), "%s: First = %s, want %s", c.json, first, c.want)
		_, ok = rule.Next(first)
		require.False(t, ok, "%s: a job without recurrence runs once", c.json)
		require.Len(t, rule.Preview(created, 5), 1)
	}
}

// TestRule4StartTimeInTheRepeatedHourOfAFallBack: when startTime is the
// second (later) instant of a wall-clock time that exists twice, the DST
// rule alone would place that wall-clock time at the first instant, before
// A, and so outside the occurrence set. Rule 4 says the first run is "A
// itself when there is no schedule, or when A matches the schedule"; recur
// reads the two together as: A's own wall-clock time on A's date runs at A,
// once. Later days follow the DST rule as usual.
func TestRule4StartTimeInTheRepeatedHourOfAFallBack(t *testing.T) {
	berlin := oLoad(t, "Europe/Berlin")
	// 2020-10-25 02:19 exists twice in Berlin: 00:19Z (CEST) and 01:19Z (CET).
	a := oUTC("2020-10-25T01:19:00Z")
	for _, c := range []struct {
		freq recurrence.Frequency
		want string
	}{
		{recurrence.Day, "2020-10-25T01:19:00Z"},
		{recurrence.Year, "2020-10-25T01:19:00Z"},
	} {
		r := oracleRule{freq: c.freq, interval: 1, loc: berlin, anchor: a}
		want, complete := r.occurrences(a, true, 1)
		require.True(t, complete)
		require.Equal(t, []time.Time{oUTC(c.want)}, want, "oracle, %s", c.freq)

		def, err := recurrence.Parse([]byte(`{"startTime":"2020-10-25T01:19:00Z","recurrence":{"frequency":"` + string(c.freq) + `","timeZone":"Europe/Berlin"}}`))
		require.NoError(t, err)
		rule, err := recurrence.Compile(def, a.Add(-time.Hour))
		require.NoError(t, err)
		first, ok := rule.First(a.Add(-time.Hour))
		require.True(t, ok)
		require.Equal(t, oUTC(c.want), first.UTC(), "engine, %s", c.freq)
	}
}
