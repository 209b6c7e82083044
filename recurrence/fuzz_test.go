package recurrence_test

// Fuzz targets for package recurrence. Their seed corpora run with plain
// go test; to fuzz:
//
//	go test -run='^$' -fuzz=FuzzParse -fuzztime=60s ./recurrence/
//	go test -run='^$' -fuzz=FuzzNext -fuzztime=60s ./recurrence/

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/recurrence"
)

// fuzzDeadline bounds one engine call. It is a hang detector, not a speed
// test: calls take microseconds, so this never fires on a slow machine.
const fuzzDeadline = 3 * time.Second

// fuzzGuard is guardHang with the fuzz targets' deadline.
func fuzzGuard(what func() string, f func()) { guardHang(fuzzDeadline, what, f) }

// guardHang runs f and crashes the process, naming what, if f has not
// returned within limit: a hung call cannot be stopped otherwise, and the
// fuzzer records the crashing input.
func guardHang(limit time.Duration, what func() string, f func()) {
	done := make(chan struct{})
	timer := time.AfterFunc(limit, func() {
		select {
		case <-done:
		default:
			panic("engine hangs (no answer within " + limit.String() + "): " + what())
		}
	})
	defer timer.Stop()
	defer close(done)
	f()
}

// FuzzParse checks the parsing rule of docs/recurrence.md's validation section:
// any input either parses or is rejected with a *ValidationError (each
// failure is a 400 with an error code), never a panic or a hang; and what
// parses is written back in a form that parses to the same definition.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{"startTime":"2012-08-04T00:00Z","recurrence":{"frequency":"Minute","interval":15}}`,
		`{"startTime":"2012-08-04T00:00:00.123456789-08:00","recurrence":{"frequency":"HOUR","schedule":{"minutes":[0,30],"hours":[1]}}}`,
		`{"startTime":"2012-08-04T00:00:00","recurrence":{"frequency":"day","schedule":{"hours":[5]},"count":3}}`,
		`{"recurrence":{"frequency":"Week","schedule":{"weekDays":["Monday","FRIDAY"]},"endTime":"2012-11-04"}}`,
		`{"recurrence":{"frequency":"Month","schedule":{"monthDays":[-1,31],"monthlyOccurrences":[{"day":"Friday","occurrence":-1},{"day":"monday"}]}}}`,
		`{"recurrence":{"frequency":"Year","interval":10,"timeZone":"W. Europe Standard Time"}}`,
		`{"recurrence":{"frequency":"Day","timeZone":"Australia/Lord_Howe","endTime":"2030-01-01T00:00:00Z"},"startTime":"2029-01-01T00:00:00Z"}`,
		`{"recurrence":{"frequency":"Month","interval":12,"schedule":{"monthDays":[30]}},"startTime":"2015-02-01T00:00:00Z"}`,
		`{"recurrence":{"frequency":"Week","schedule":{"weekDays":["Monday","Monday","Monday","Monday","Monday","Monday","Monday","Monday"]}}}`,
		`{"recurrence":{"frequency":"minute","interval":0}}`,
		`{"recurrence":{"frequency":"daily"}}`,
		`{"recurrence":{"frequency":"Day","timeZone":"Mars/Olympus"}}`,
		`{"recurrence":{"frequency":"Day","endTime":"2010-01-01"},"startTime":"2015-01-01T00:00:00Z"}`,
		`{"recurrence":{"frequency":"Day","interval":1e400}}`,
		`{"recurrence":{"frequency":"Day","schedule":{"minutes":"0"}}}`,
		`{"recurrence":{"frequency":"Day","schedule":{"minutes":[60]}}}`,
		`{"recurrence":{"frequency":"Day","schedule":{"monthDays":[1]}}}`,
		`{"recurrence":{"frequency":"Day","colour":"red"}}`,
		`{"recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"occurrence":6}]}}}`,
		`{"recurrence":{"rrule":"DTSTART;TZID=Europe/Berlin:20261201T090000\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3\nEXDATE;TZID=Europe/Berlin:20270105T090000","count":3}}`,
		`{"startTime":"2026-12-01T00:00:00Z","recurrence":{"timeZone":"Europe/Berlin","rules":[{"frequency":"week","schedule":{"weekDays":["monday"],"hours":[9]}},{"cron":"30 17 * * 1-5"},{"rrule":"FREQ=WEEKLY;BYDAY=SA;BYHOUR=10"}]}}`,
		`{"recurrence":{"rules":[{"cron":"0 9 * * *","rrule":"FREQ=DAILY"}]}}`,
		`{"startTime":"yesterday"}`,
		// Found by the fuzzer: the offset moves the instant into year -1,
		// which the written-back UTC form cannot hold.
		`{"startTime":"0000-01-01T00:00:00,000000001+01:00"}`,
		`{"startTime":12}`,
		`{}`,
		`[]`,
		`null`,
		`{"recurrence":null}`,
		`{} {}`,
		`{"recurrence":{"frequency":"Day"`,
		"",
		"\x00\xff",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var def recurrence.Definition
		var err error
		fuzzGuard(func() string { return fmt.Sprintf("Parse(%q)", data) }, func() {
			def, err = recurrence.Parse(data)
		})
		if err != nil {
			var ve *recurrence.ValidationError
			require.True(t, errors.As(err, &ve), "Parse(%q) returned %T %v, not a *ValidationError", data, err, err)
			require.NotEmpty(t, ve.Code, "Parse(%q): a validation error carries a code", data)
			require.NotEmpty(t, ve.Error(), "Parse(%q): a validation error has a message", data)
			return
		}
		out, err := json.Marshal(def)
		require.NoError(t, err, "Parse(%q) accepted a definition it cannot write back", data)
		again, err := recurrence.Parse(out)
		require.NoError(t, err, "Parse(%q) accepted it, but rejects its own output %s", data, out)
		out2, err := json.Marshal(again)
		require.NoError(t, err)
		require.JSONEq(t, string(out), string(out2), "Parse(%q): writing back is not stable", data)

		// Whatever parses compiles or is rejected as never occurring.
		var rule *recurrence.Rule
		created := time.Date(2026, 3, 8, 6, 30, 0, 0, time.UTC)
		fuzzGuard(func() string { return fmt.Sprintf("Compile(%s)", out) }, func() {
			rule, err = recurrence.Compile(def, created)
		})
		if err != nil {
			var ve *recurrence.ValidationError
			require.True(t, errors.As(err, &ve), "Compile(%s) returned %T %v, not a *ValidationError", out, err, err)
			require.Equal(t, recurrence.CodeNeverOccurs, ve.Code, "Compile(%s): a definition that Parse accepted can only fail as never occurring, not %v", out, err)
			return
		}
		fuzzGuard(func() string { return fmt.Sprintf("Preview(%s)", out) }, func() {
			runs := rule.Preview(created, 5)
			require.True(t, slices.IsSortedFunc(runs, func(a, b time.Time) int { return a.Compare(b) }), "Preview(%s) = %v", out, runs)
		})
	})
}

// The zones FuzzNext draws from: those of docs/recurrence.md's examples and
// some with unusual offsets or DST.
var fuzzZones = []string{
	"", "UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago",
	"Australia/Sydney", "Asia/Kolkata", "W. Europe Standard Time", "Antarctica/Troll",
	"Pacific/Chatham", "Europe/Dublin", "Africa/Casablanca", "America/St_Johns", "Asia/Kathmandu",
	"Pacific/Apia", "Pacific/Kiritimati",
}

var fuzzFrequencies = []recurrence.Frequency{
	recurrence.Minute, recurrence.Hour, recurrence.Day, recurrence.Week, recurrence.Month, recurrence.Year, recurrence.Second,
}

var fuzzMaxInterval = []int{1000, 1000, 548, 78, 18, 10, 1000}

// setBits returns the indexes of the set bits of x below n, at most limit of them.
func setBits(x uint64, n, limit int) []int {
	var out []int
	for x != 0 && len(out) < limit {
		i := bits.TrailingZeros64(x)
		if i >= n {
			break
		}
		out = append(out, i)
		x &= x - 1
	}
	return out
}

// fuzzDefinition builds a schedule-valid definition from fuzzed numbers:
// only the fields the frequency accepts, values within their ranges.
func fuzzDefinition(freqIdx uint8, interval uint16, minuteBits uint64, hourBits uint32, dayBits uint8, monthDayBits uint64, occBits uint16, zoneIdx uint8, startSec int64, nanos uint32) recurrence.Definition {
	fi := int(freqIdx) % len(fuzzFrequencies)
	iv := 1 + int(interval)%fuzzMaxInterval[fi]
	sched := &recurrence.Schedule{
		Minutes: setBits(minuteBits, 60, 6),
		Hours:   setBits(uint64(hourBits), 24, 6),
	}
	switch fuzzFrequencies[fi] {
	case recurrence.Week:
		for _, d := range setBits(uint64(dayBits), 7, 7) {
			sched.WeekDays = append(sched.WeekDays, recurrence.DayOfWeekOf(time.Weekday(d)))
		}
	case recurrence.Month:
		for _, b := range setBits(monthDayBits, 62, 4) {
			if b < 31 {
				sched.MonthDays = append(sched.MonthDays, b+1)
			} else {
				sched.MonthDays = append(sched.MonthDays, -(b - 30))
			}
		}
		// Two bytes: up to two monthly occurrences, day = b%7, occurrence
		// = b/7 mapped onto -5..5 with 0 meaning none (and b ≥ 77 none at all).
		for _, b := range []int{int(occBits & 0xff), int(occBits >> 8)} {
			if b >= 77 {
				continue
			}
			o := recurrence.MonthlyOccurrence{Day: recurrence.DayOfWeekOf(time.Weekday(b % 7))}
			if n := b/7 - 5; n != 0 {
				o.Occurrence = &n
			}
			sched.MonthlyOccurrences = append(sched.MonthlyOccurrences, o)
		}
	}
	// 1970 to 2100.
	const span = int64(130 * 365.2425 * 86400)
	start := time.Unix(((startSec%span)+span)%span, int64(nanos%4)*250_000_000).UTC()
	return recurrence.Definition{
		StartTime: recurrence.At(start),
		Recurrence: &recurrence.Recurrence{
			Frequency: fuzzFrequencies[fi],
			Interval:  &iv,
			Schedule:  sched,
			TimeZone:  fuzzZones[int(zoneIdx)%len(fuzzZones)],
		},
	}
}

// FuzzNext checks, for any rule that Compile accepts, the properties that
// docs/recurrence.md's "occurrence set" and "computation requirements" imply
// whatever the rule: Next(after) is strictly after after and no sooner
// than A; a chain of Next calls is strictly increasing; there is no
// occurrence between after and Next(after) that a fresh call would find;
// First(t) of an occurrence t > A is t itself (rule 3); Minute and Hour
// occurrences are whole minutes and interval steps from A in absolute time;
// every occurrence is at A's second (and fraction); every call returns
// (hang detector).
func FuzzNext(f *testing.F) {
	jan2026 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	dst2026 := time.Date(2026, 3, 8, 6, 0, 0, 0, time.UTC).Unix()
	add := func(freq, interval int, minutes uint64, hours uint32, days uint8, monthDays uint64, occ uint16, zone int, start, after int64, nanos uint32) {
		f.Add(uint8(freq), uint16(interval-1), minutes, hours, days, monthDays, occ, uint8(zone), start, after-start, nanos)
	}
	add(0, 1, 0, 0, 0, 0, 0xffff, 0, 0, jan2026, 0)                                // every minute since 1970, asked in 2026
	add(0, 90, 1<<15|1<<45, 1<<2|1<<3, 0, 0, 0xffff, 2, dst2026-86400, dst2026, 1) // minute filters across a gap
	add(0, 1000, 1<<7, 1<<3, 0, 0, 0xffff, 4, jan2026, jan2026+1, 0)               // filter that may never match
	add(1, 1, 1|1<<30, 0, 0, 0, 0xffff, 2, dst2026-3600*30, dst2026-3600, 0)       // hour across New York's gap
	add(1, 7, 0, 1<<1|1<<2, 0, 0, 0xffff, 3, jan2026, jan2026+86400*100, 2)        // Lord Howe
	add(2, 1, 1|1<<15|1<<30|1<<45, 0, 0, 0, 0xffff, 2, dst2026-86400*3, dst2026-7200, 0)
	add(2, 548, 0, 1<<2, 0, 0, 0xffff, 5, 0, jan2026, 3)           // Santiago, longest interval
	add(2, 1, 0, 0, 0, 0, 0xffff, 9, jan2026, jan2026+86400*80, 0) // Troll's two-hour DST
	add(3, 1, 1<<30, 1<<2, 0b1000001, 0, 0xffff, 6, jan2026, jan2026+86400*270, 0)
	add(3, 78, 0, 0, 0b0111110, 0, 0xffff, 10, 86400*3, jan2026, 1)                                       // Chatham
	add(4, 1, 0, 0, 0, 1<<30|1<<31, 0xffff, 1, jan2026, jan2026, 0)                                       // monthDays 31 and -1
	add(4, 12, 0, 0, 0, 1<<29, 0xffff, 0, time.Date(2015, 2, 1, 0, 0, 0, 0, time.UTC).Unix(), jan2026, 0) // never occurs
	add(4, 5, 0, 1<<23, 0, 0, 75|29<<8, 12, jan2026, jan2026+86400*400, 0)                                // fifth Friday, last Monday, Casablanca
	add(4, 18, 0, 0, 0, 0, 35, 11, 0, jan2026, 0)                                                         // every Sunday and last-Sunday-but-4, Dublin
	add(5, 1, 0, 0, 0, 0, 0xffff, 0, time.Date(2000, 2, 29, 12, 0, 0, 0, time.UTC).Unix(), jan2026, 0)    // Feb 29
	add(5, 10, 1<<59, 1<<23, 0, 0, 0xffff, 3, time.Date(2024, 12, 31, 12, 0, 0, 0, time.UTC).Unix(), time.Date(2038, 12, 31, 12, 0, 0, 0, time.UTC).Unix(), 0)
	add(5, 3, 0, 0, 0, 0, 0xffff, 14, time.Date(1996, 2, 29, 23, 59, 59, 0, time.UTC).Unix(), jan2026, 2)

	f.Fuzz(func(t *testing.T, freqIdx uint8, interval uint16, minuteBits uint64, hourBits uint32, dayBits uint8, monthDayBits uint64, occBits uint16, zoneIdx uint8, startSec, afterOffset int64, nanos uint32) {
		def := fuzzDefinition(freqIdx, interval, minuteBits, hourBits, dayBits, monthDayBits, occBits, zoneIdx, startSec, nanos)
		js, err := json.Marshal(def)
		require.NoError(t, err)
		a := def.StartTime.In(time.UTC)
		// after: A + afterOffset seconds, within 150 years either side of A.
		const span = int64(150 * 365.2425 * 86400)
		after := time.Unix(a.Unix()+afterOffset%span, int64(time.Duration(nanos>>2)%time.Second)).UTC()

		var rule *recurrence.Rule
		fuzzGuard(func() string { return "Compile " + string(js) }, func() {
			rule, err = recurrence.Compile(def, a.Add(-time.Hour))
		})
		if err != nil {
			var ve *recurrence.ValidationError
			require.True(t, errors.As(err, &ve), "%s: %T %v", js, err, err)
			require.Equal(t, recurrence.CodeNeverOccurs, ve.Code, "%s: a schedule-valid rule can only be rejected as never occurring: %v", js, err)
			return
		}
		freq := def.Recurrence.Frequency
		iv := int64(*def.Recurrence.Interval)
		loc := rule.Location()
		prev := after
		for i := range 50 {
			var next time.Time
			var ok bool
			fuzzGuard(func() string { return fmt.Sprintf("%s: Next(%s)", js, prev.Format(time.RFC3339Nano)) }, func() {
				next, ok = rule.Next(prev)
			})
			if !ok {
				// No endTime: the set is empty after prev, which only a search
				// bounded by the 400-year cycle may conclude.
				break
			}
			ctx := fmt.Sprintf("%s\nNext #%d after %s = %s", js, i, prev.Format(time.RFC3339Nano), next.Format(time.RFC3339Nano))
			require.True(t, next.After(prev), "not strictly after: %s", ctx)
			require.False(t, next.Before(a), "before startTime: %s", ctx)
			require.Equal(t, time.UTC, next.Location(), "times are returned in UTC: %s", ctx)
			require.Equal(t, a.Nanosecond(), next.Nanosecond(), "SECOND carries A's fraction: %s", ctx)
			switch freq {
			case recurrence.Second, recurrence.Minute:
				// A + k·interval seconds or minutes.
				unit := int64(60)
				if freq == recurrence.Second {
					unit = 1
				}
				require.Zero(t, (next.Unix()-a.Unix())%(iv*unit), "not a whole number of intervals from A: %s", ctx)
				h, m, _ := next.In(loc).Clock()
				if s := def.Recurrence.Schedule; len(s.Hours) > 0 {
					require.Contains(t, s.Hours, h, "hour filter: %s", ctx)
				}
				if s := def.Recurrence.Schedule; len(s.Minutes) > 0 {
					require.Contains(t, s.Minutes, m, "minute filter: %s", ctx)
				}
			case recurrence.Hour:
				// A's hour + k·interval hours + m minutes + SECOND: a whole
				// number of minutes from A, in the first hour of a period.
				require.Zero(t, (next.Unix()-a.Unix())%60, "not whole minutes from A: %s", ctx)
				_, am, as := a.In(loc).Clock()
				hourStart := a.Unix() - int64(am*60+as)
				require.Less(t, (next.Unix()-hourStart)%(iv*3600), int64(3600), "not in a period's hour: %s", ctx)
				if s := def.Recurrence.Schedule; len(s.Hours) > 0 {
					require.Contains(t, s.Hours, next.In(loc).Hour(), "hour filter: %s", ctx)
				}
			default:
				require.Equal(t, a.In(loc).Second(), next.In(loc).Second(), "SECOND = A.second: %s", ctx)
			}
			// Nothing between prev and next: a fresh search from just before
			// next finds next, and the first run planned at next is next.
			var again, first time.Time
			var okAgain, okFirst bool
			fuzzGuard(func() string { return "Next/First around " + ctx }, func() {
				again, okAgain = rule.Next(next.Add(-time.Nanosecond))
				first, okFirst = rule.First(next)
			})
			require.True(t, okAgain && again.Equal(next), "Next(next-1ns) = %s %v: %s", again, okAgain, ctx)
			require.True(t, okFirst && first.Equal(next), "First(next) = %s %v (rule 3: first occurrence ≥ now): %s", first, okFirst, ctx)
			prev = next
		}
	})
}

// FuzzRRule checks the rrule parser and engine: any text either parses or
// is rejected with a *ValidationError, a parse error naming its place in
// the text ("at character n"), never a panic or a hang; what compiles
// gives strictly increasing occurrences, each after the one before.
//
//	go test -run='^$' -fuzz=FuzzRRule -fuzztime=60s ./recurrence/
func FuzzRRule(f *testing.F) {
	for _, seed := range []string{
		"FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3",
		"FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=0",
		"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO",
		"FREQ=YEARLY;BYWEEKNO=1,-1;BYDAY=MO;WKST=SU",
		"FREQ=YEARLY;BYYEARDAY=1,-1,366;BYHOUR=2;BYMINUTE=30",
		"FREQ=SECONDLY;INTERVAL=15;BYMINUTE=0,30",
		"FREQ=HOURLY;INTERVAL=7;BYMONTH=2;BYMONTHDAY=29",
		"FREQ=MINUTELY;INTERVAL=30;BYMINUTE=15",
		"FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;BYSETPOS=-1;COUNT=5",
		"FREQ=DAILY;UNTIL=20270101;BYHOUR=2;BYMINUTE=30",
		"DTSTART;TZID=Europe/Berlin:20260329T023000\nRRULE:FREQ=DAILY;COUNT=3\nEXDATE;TZID=Europe/Berlin:20260330T023000\nRDATE;VALUE=DATE:20260401",
		"DTSTART:20260101T000000Z\nRRULE:FREQ=MONTHLY;BYDAY=-1FR\nRRULE:FREQ=WEEKLY;BYDAY=SA",
		"RRULE:FREQ=DAILY\n BYHOUR=9",
		"FREQ=DAILY;;BYHOUR=",
		"FREQ=YEARLY;BYDAY=53MO,-53SU",
		"",
	} {
		f.Add(seed, uint8(2), int64(1774742400))
	}
	f.Fuzz(func(t *testing.T, text string, zoneIdx uint8, startSec int64) {
		start := time.Unix(startSec%(1<<34), 0).UTC()
		if start.Year() < 1 || start.Year() > 9999 {
			start = time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC)
		}
		rec := map[string]any{"rrule": text}
		if zone := fuzzZones[int(zoneIdx)%len(fuzzZones)]; zone != "" {
			rec["timeZone"] = zone
		}
		js, err := json.Marshal(map[string]any{"recurrence": rec})
		require.NoError(t, err)
		var def recurrence.Definition
		fuzzGuard(func() string { return fmt.Sprintf("Parse(%s)", js) }, func() { def, err = recurrence.Parse(js) })
		if err != nil {
			var ve *recurrence.ValidationError
			require.True(t, errors.As(err, &ve), "Parse(%s): %T %v", js, err, err)
			require.NotEmpty(t, ve.Code)
			if ve.Path == "recurrence.rrule" && ve.Code == recurrence.CodeInvalidValue && !strings.Contains(ve.Message, "DTSTART") {
				require.Contains(t, ve.Message, " at character ", "Parse(%s): a parse error names its place", js)
			}
			return
		}
		var rule *recurrence.Rule
		fuzzGuard(func() string { return fmt.Sprintf("Compile(%s)", js) }, func() { rule, err = recurrence.Compile(def, start) })
		if err != nil {
			var ve *recurrence.ValidationError
			require.True(t, errors.As(err, &ve), "Compile(%s): %T %v", js, err, err)
			require.Equal(t, recurrence.CodeNeverOccurs, ve.Code, "Compile(%s): %v", js, err)
			return
		}
		fuzzGuard(func() string { return fmt.Sprintf("Next chain of %s", js) }, func() {
			prev := start
			for range 20 {
				next, ok := rule.Next(prev)
				if !ok {
					break
				}
				require.True(t, next.After(prev), "Next(%v) = %v for %s", prev, next, js)
				prev = next
			}
		})
	})
}
