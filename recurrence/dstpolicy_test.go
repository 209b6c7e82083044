package recurrence_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDSTPolicy: Berlin skips 02:00-03:00 on 2026-03-29 (at 01:00 UTC)
// and repeats it on 2026-10-25 (02:00-03:00 CEST, then CET). A daily
// 02:30 meets both, as each policy says; the default is shiftForward and
// first. The days around run at 02:30 as ever.
func TestDSTPolicy(t *testing.T) {
	spring, fall := at(t, "2026-03-28T00:00:00Z"), at(t, "2026-10-24T00:00:00Z")
	for _, tc := range []struct {
		name, dst, rule      string
		springRuns, fallRuns []string
	}{
		{"default", ``, `"frequency":"Day","schedule":{"hours":[2],"minutes":[30]}`,
			[]string{"2026-03-28T01:30:00Z", "2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"},
			[]string{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		{"skip and last", `"dst":{"gap":"skip","repeat":"last"},`, `"frequency":"Day","schedule":{"hours":[2],"minutes":[30]}`,
			[]string{"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"},
			[]string{"2026-10-24T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-26T01:30:00Z"}},
		{"atTransition and both", `"dst":{"gap":"AtTransition","repeat":"both"},`, `"frequency":"Day","schedule":{"hours":[2],"minutes":[30]}`,
			[]string{"2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"},
			[]string{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-26T01:30:00Z"}},
		{"cron, skip and both", `"dst":{"gap":"skip","repeat":"both"},`, `"cron":"30 2 * * *"`,
			[]string{"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"},
			[]string{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-26T01:30:00Z"}},
		{"several times in the gap run once at the transition", `"dst":{"gap":"atTransition"},`, `"frequency":"Day","schedule":{"hours":[2],"minutes":[15,45]}`,
			[]string{"2026-03-28T01:15:00Z", "2026-03-28T01:45:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:15:00Z"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := defOf(t, fmt.Sprintf(`{"startTime":"2026-01-01T00:00:00Z","recurrence":{%s"timeZone":"Europe/Berlin",%s}}`, tc.dst, tc.rule))
			require.Equal(t, tc.springRuns, nextAfter(t, def, spring, spring.Add(-1), len(tc.springRuns)), "spring")
			if tc.fallRuns != nil {
				require.Equal(t, tc.fallRuns, nextAfter(t, def, fall, fall.Add(-1), len(tc.fallRuns)), "fall")
			}
		})
	}
}

func TestDSTPolicyValidation(t *testing.T) {
	requireInvalid(t, `{"recurrence":{"frequency":"Day","dst":{"gap":"later"}}}`, "recurrence.dst.gap", "InvalidValue", "shiftForward, skip, atTransition")
	requireInvalid(t, `{"recurrence":{"frequency":"Day","dst":{"repeat":"twice"}}}`, "recurrence.dst.repeat", "InvalidValue", "first, last, both")
	requireInvalid(t, `{"recurrence":{"frequency":"Day","dst":{"overlap":"first"}}}`, "recurrence.dst.overlap", "UnknownProperty", "")
	def := defOf(t, `{"recurrence":{"frequency":"Day","dst":{"gap":"SKIP","repeat":"Both"}}}`)
	require.Equal(t, "skip", def.Recurrence.DST.Gap, "written in its canonical case")
	require.Equal(t, "both", def.Recurrence.DST.Repeat)
}

// TestDSTPoliciesMatchABruteForceReading runs a daily schedule through
// every transition of 2024-2027 of the oracle's zones (Lord Howe's half
// hour, Troll's two hours, Santiago's midnight among them) under each of
// the nine policies, and compares its runs with a reading that knows
// nothing of the engine: each minute-aligned wall time's instants, found
// by scanning the instants around it, then the policy applied to them.
func TestDSTPoliciesMatchABruteForceReading(t *testing.T) {
	hours, minutes := []int{0, 1, 2, 3, 23}, []int{0, 15, 30, 45}
	for _, z := range oracleZones {
		loc := oLoad(t, z.iana)
		ts := oTransitions(loc, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC))
		for _, gap := range []string{"shiftForward", "skip", "atTransition"} {
			for _, repeat := range []string{"first", "last", "both"} {
				for _, tr := range ts {
					day := tr.In(loc)
					from := time.Date(day.Year(), day.Month(), day.Day()-1, 0, 0, 0, 0, loc)
					to := from.Add(72 * time.Hour)
					def := defOf(t, fmt.Sprintf(`{"startTime":%q,"recurrence":{"frequency":"Day","timeZone":%q,
						"schedule":{"hours":[0,1,2,3,23],"minutes":[0,15,30,45]},"dst":{"gap":%q,"repeat":%q}}}`,
						from.AddDate(0, 0, -2).UTC().Format(time.RFC3339), z.iana, gap, repeat))
					r := compiled(t, def, from.AddDate(0, 0, -2))
					var got []time.Time
					for next, ok := r.Next(from.Add(-time.Second)); ok && next.Before(to); next, ok = r.Next(next) {
						got = append(got, next)
					}
					want, shifts := bruteForceDays(loc, from, 4, hours, minutes, gap, repeat)
					var inRange []time.Time
					for _, w := range want {
						if !w.Before(from) && w.Before(to) {
							inRange = append(inRange, w)
						}
					}
					require.Equal(t, inRange, got, "%s around %s, gap %s, repeat %s", z.iana, tr, gap, repeat)
					for _, o := range got {
						shift, ok := r.Shift(o)
						require.Equal(t, shifts[o.Unix()], shift.Kind, "%s at %s (%s), gap %s, repeat %s", z.iana, o, o.In(loc), gap, repeat)
						require.Equal(t, shift.Kind != "", ok)
					}
				}
			}
		}
	}
}

// bruteForceDays returns the instants of the wall times hours x minutes
// of days wall-clock days from the date of from, in loc, under the
// policy, sorted and without repeats; and how a transition placed those
// it touched (recurrence.Shift's kinds), by Unix second: "moved" for a
// wall time that did not exist, even if another one also runs then.
func bruteForceDays(loc *time.Location, from time.Time, days int, hours, minutes []int, gap, repeat string) ([]time.Time, map[int64]string) {
	set, shifts := map[int64]bool{}, map[int64]string{}
	y, m, d := from.In(loc).Date()
	for i := range days {
		for _, h := range hours {
			for _, mi := range minutes {
				// The wall time as seconds of a UTC clock, and the
				// instants whose wall in loc reads it.
				wall := time.Date(y, m, d+i, h, mi, 0, 0, time.UTC)
				var found []int64
				for s := wall.Add(-16 * time.Hour); s.Before(wall.Add(16 * time.Hour)); s = s.Add(time.Minute) {
					if _, off := s.In(loc).Zone(); s.Add(time.Duration(off) * time.Second).Equal(wall) {
						found = append(found, s.Unix())
					}
				}
				switch {
				case len(found) == 0:
					// In a gap: the offsets before and after it.
					before := wall.Add(-16 * time.Hour)
					for s := before; s.Before(wall.Add(16 * time.Hour)); s = s.Add(time.Minute) {
						_, o1 := s.In(loc).Zone()
						_, o2 := s.Add(time.Minute).In(loc).Zone()
						if o1 != o2 && s.Add(time.Duration(o1)*time.Second).Before(wall) {
							t := transitionWithin(loc, s, s.Add(time.Minute))
							switch gap {
							case "shiftForward":
								set[wall.Unix()-int64(o1)] = true
								shifts[wall.Unix()-int64(o1)] = "moved"
							case "atTransition":
								set[t.Unix()] = true
								shifts[t.Unix()] = "moved"
							}
						}
					}
				case len(found) == 1:
					set[found[0]] = true
				default:
					kind, runs := "repeated", found
					switch repeat {
					case "first":
						runs = found[:1]
					case "last":
						runs = found[len(found)-1:]
					default:
						kind = "doubled"
					}
					for _, f := range runs {
						set[f] = true
						if shifts[f] != "moved" {
							shifts[f] = kind
						}
					}
				}
			}
		}
	}
	var out []time.Time
	for s := range set {
		out = append(out, time.Unix(s, 0).UTC())
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out, shifts
}

// transitionWithin returns the first instant in (lo, hi] whose offset is
// not lo's.
func transitionWithin(loc *time.Location, lo, hi time.Time) time.Time {
	_, off := lo.In(loc).Zone()
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if _, o := mid.In(loc).Zone(); o == off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// TestShiftMarksWhatATransitionMovedOrDoubled: in Berlin, 02:30 does not
// exist on 2026-03-29 and exists twice on 2026-10-25. Preview marks those
// runs with the wall-clock time the schedule named; the days around and a
// schedule in absolute time (Hour) carry no mark.
func TestShiftMarksWhatATransitionMovedOrDoubled(t *testing.T) {
	from := at(t, "2026-03-28T00:00:00Z")
	for _, tc := range []struct {
		name, rec string
		want      map[string]string // occurrence -> kind wallClock
	}{
		{"default", `"frequency":"Day","schedule":{"hours":[2],"minutes":[30]}`, map[string]string{
			"2026-03-29T01:30:00Z": "moved 2026-03-29T02:30:00", "2026-10-25T00:30:00Z": "repeated 2026-10-25T02:30:00"}},
		{"atTransition and both", `"frequency":"Day","schedule":{"hours":[2],"minutes":[30]},"dst":{"gap":"atTransition","repeat":"both"}`, map[string]string{
			"2026-03-29T01:00:00Z": "moved 2026-03-29T02:30:00",
			"2026-10-25T00:30:00Z": "doubled 2026-10-25T02:30:00", "2026-10-25T01:30:00Z": "doubled 2026-10-25T02:30:00"}},
		{"skip and last", `"frequency":"Day","schedule":{"hours":[2],"minutes":[30]},"dst":{"gap":"skip","repeat":"last"}`, map[string]string{
			"2026-10-25T01:30:00Z": "repeated 2026-10-25T02:30:00"}},
		// 02:30 shifted forward is 03:30, a time of the schedule too: the
		// one run stands for both and says so.
		{"moved onto another time", `"frequency":"Day","schedule":{"hours":[2,3],"minutes":[30]}`, map[string]string{
			"2026-03-29T01:30:00Z": "moved 2026-03-29T02:30:00",
			"2026-10-25T00:30:00Z": "repeated 2026-10-25T02:30:00"}},
		{"cron", `"cron":"30 2 * * *"`, map[string]string{
			"2026-03-29T01:30:00Z": "moved 2026-03-29T02:30:00", "2026-10-25T00:30:00Z": "repeated 2026-10-25T02:30:00"}},
		{"hourly steps in absolute time", `"frequency":"Hour","interval":6`, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := defOf(t, fmt.Sprintf(`{"startTime":"2026-01-01T00:00:00Z","recurrence":{"timeZone":"Europe/Berlin",%s}}`, tc.rec))
			r := compiled(t, def, from)
			got := map[string]string{}
			for o, ok := r.Next(from); ok && o.Before(at(t, "2026-11-01T00:00:00Z")); o, ok = r.Next(o) {
				if s, ok := r.Shift(o); ok {
					got[o.Format(time.RFC3339)] = s.Kind + " " + s.Wall
				}
			}
			require.Equal(t, tc.want, got)
		})
	}
	utc := compiled(t, defOf(t, `{"recurrence":{"frequency":"Day","schedule":{"hours":[2],"minutes":[30]}}}`), from)
	_, ok := utc.Shift(at(t, "2026-03-29T02:30:00Z"))
	require.False(t, ok, "UTC has no transitions")
}
