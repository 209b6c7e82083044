package recurrence_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/recurrence"
)

// cronDef is the definition of a cron recurrence in zone (UTC when empty),
// with startTime when start is set.
func cronDef(t *testing.T, expr, zone, start string) recurrence.Definition {
	t.Helper()
	js := fmt.Sprintf(`{"recurrence":{"cron":%q,"timeZone":%q}}`, expr, zone)
	if start != "" {
		js = fmt.Sprintf(`{"startTime":%q,"recurrence":{"cron":%q,"timeZone":%q}}`, start, expr, zone)
	}
	return defOf(t, js)
}

func TestCronExpressions(t *testing.T) {
	// 2026-06-05 is a Friday.
	now := at(t, "2026-06-05T12:00:00Z")
	for _, tc := range []struct {
		name, expr string
		want       []string
	}{
		{"weekdays by name", "0 9 * * MON-FRI", []string{"2026-06-08T09:00:00Z", "2026-06-09T09:00:00Z", "2026-06-10T09:00:00Z"}},
		{"steps and lists", "*/20 12,14 * * *", []string{"2026-06-05T12:00:00Z", "2026-06-05T12:20:00Z", "2026-06-05T12:40:00Z", "2026-06-05T14:00:00Z"}},
		{"a range with a step", "5-59/30 0 1 JAN,jul *", []string{"2026-07-01T00:05:00Z", "2026-07-01T00:35:00Z", "2027-01-01T00:05:00Z"}},
		{"@monthly", "@monthly", []string{"2026-07-01T00:00:00Z", "2026-08-01T00:00:00Z"}},
		{"@weekly is Sundays", "@weekly", []string{"2026-06-07T00:00:00Z", "2026-06-14T00:00:00Z"}},
		{"@hourly", "@Hourly", []string{"2026-06-05T12:00:00Z", "2026-06-05T13:00:00Z"}},
		{"@yearly", "@yearly", []string{"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
		{"7 is Sunday", "0 0 * * 7", []string{"2026-06-07T00:00:00Z", "2026-06-14T00:00:00Z"}},
		{"L: the last day", "0 0 L * *", []string{"2026-06-30T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z", "2026-09-30T00:00:00Z"}},
		{"L-2: two days before the last", "0 0 L-2 2 *", []string{"2027-02-26T00:00:00Z", "2028-02-27T00:00:00Z"}},
		// 2026-08-15 is a Saturday, 2026-11-15 a Sunday.
		{"15W: the weekday nearest the 15th", "0 0 15W 8,11 *", []string{"2026-08-14T00:00:00Z", "2026-11-16T00:00:00Z", "2027-08-16T00:00:00Z"}},
		// 2026-08-01 is a Saturday: the nearest weekday in August is the 3rd.
		{"1W stays in its month", "0 0 1W 8 *", []string{"2026-08-03T00:00:00Z", "2027-08-02T00:00:00Z"}},
		// 2026-05-31 is a Sunday; 2026-06-30 a Tuesday.
		{"LW: the last weekday", "0 0 LW * *", []string{"2026-06-30T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z", "2026-09-30T00:00:00Z", "2026-10-30T00:00:00Z"}},
		{"5L: the last Friday", "0 0 * * 5L", []string{"2026-06-26T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-28T00:00:00Z"}},
		{"MON#2: the second Monday", "0 0 * * MON#2", []string{"2026-06-08T00:00:00Z", "2026-07-13T00:00:00Z", "2026-08-10T00:00:00Z"}},
		{"5#5: a fifth Friday, when there is one", "0 0 * * 5#5", []string{"2026-07-31T00:00:00Z", "2026-10-30T00:00:00Z", "2027-01-29T00:00:00Z"}},
		{"day of month and day of week both restricted: either", "0 12 13 * FRI", []string{"2026-06-05T12:00:00Z", "2026-06-12T12:00:00Z", "2026-06-13T12:00:00Z", "2026-06-19T12:00:00Z"}},
		{"? leaves the other day field alone", "0 12 ? * FRI", []string{"2026-06-05T12:00:00Z", "2026-06-12T12:00:00Z", "2026-06-19T12:00:00Z"}},
		{"February 29th", "0 0 29 2 *", []string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, runs(t, cronDef(t, tc.expr, "", ""), now, now, len(tc.want)))
		})
	}
}

func TestCronStartTimeIsNoSoonerThanAndNoRunAtCreation(t *testing.T) {
	created := at(t, "2026-06-05T12:07:31Z")
	t.Run("without startTime, the first run is the next match, not C", func(t *testing.T) {
		require.Equal(t, []string{"2026-06-05T12:15:00Z", "2026-06-05T12:30:00Z"},
			runs(t, cronDef(t, "*/15 * * * *", "", ""), created, created, 2))
	})
	t.Run("startTime holds the runs back", func(t *testing.T) {
		require.Equal(t, []string{"2026-06-06T00:00:00Z", "2026-06-06T00:15:00Z"},
			runs(t, cronDef(t, "*/15 * * * *", "", "2026-06-05T23:59:00.5Z"), created, created, 2))
	})
	t.Run("a startTime on a match runs then", func(t *testing.T) {
		require.Equal(t, []string{"2026-06-06T00:00:00Z"},
			runs(t, cronDef(t, "*/15 * * * *", "", "2026-06-06T00:00:00Z"), created, created, 1))
	})
	t.Run("count and endTime apply", func(t *testing.T) {
		def := defOf(t, `{"recurrence":{"cron":"0 * * * *","count":2,"endTime":"2026-06-05T20:00:00Z"}}`)
		got, err := recurrence.Preview(def, created, created, 10)
		require.NoError(t, err)
		require.Len(t, got, 2)
		def = defOf(t, `{"recurrence":{"cron":"0 * * * *","endTime":"2026-06-05T15:00:00Z"}}`)
		got, err = recurrence.Preview(def, created, created, 10)
		require.NoError(t, err)
		require.Len(t, got, 3, "13:00, 14:00 and 15:00")
	})
}

// TestCronAcrossDST: a cron reads its fields in the job's zone, and its
// times meet offset changes as a daily schedule's do: a time in a spring
// gap runs that much later, a time in a repeated hour runs once, at the
// first.
func TestCronAcrossDST(t *testing.T) {
	now := at(t, "2026-03-28T00:00:00Z")
	// Berlin skips 02:00-03:00 on 2026-03-29 and repeats 02:00-03:00 on
	// 2026-10-25.
	require.Equal(t, []string{"2026-03-28T01:30:00Z", "2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"},
		runs(t, cronDef(t, "30 2 * * *", "Europe/Berlin", ""), now, now, 3))
	fall := at(t, "2026-10-24T12:00:00Z")
	require.Equal(t, []string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"},
		runs(t, cronDef(t, "30 2 * * *", "Europe/Berlin", ""), fall, fall, 2))
}

func TestCronValidation(t *testing.T) {
	for _, tc := range []struct {
		props, path, code, message string
	}{
		{`{"recurrence":{"cron":"0 9 * *"}}`, "recurrence.cron", recurrence.CodeInvalidValue, "has 4 fields"},
		{`{"recurrence":{"cron":"60 9 * * *"}}`, "recurrence.cron", recurrence.CodeInvalidValue, "minute field: 60 is out of 0-59"},
		{`{"recurrence":{"cron":"0 9 * FOO *"}}`, "recurrence.cron", recurrence.CodeInvalidValue, "month field"},
		{`{"recurrence":{"cron":"? 9 * * *"}}`, "recurrence.cron", recurrence.CodeInvalidValue, "minute field"},
		{`{"recurrence":{"cron":"0 9 * * 1#6"}}`, "recurrence.cron", recurrence.CodeInvalidValue, "k from 1 to 5"},
		{`{"recurrence":{"cron":"0 9 32W * *"}}`, "recurrence.cron", recurrence.CodeInvalidValue, "day from 1 to 31"},
		{`{"recurrence":{"cron":"0 9 5-1 * *"}}`, "recurrence.cron", recurrence.CodeInvalidValue, "runs backwards"},
		{`{"recurrence":{"cron":"*/0 9 * * *"}}`, "recurrence.cron", recurrence.CodeInvalidValue, "step"},
		{`{"recurrence":{"cron":"0 9 * * *","frequency":"Day"}}`, "recurrence.frequency", recurrence.CodeNotAllowed, "either cron or frequency"},
		{`{"recurrence":{"cron":"0 9 * * *","interval":2}}`, "recurrence.interval", recurrence.CodeNotAllowed, "either cron or frequency"},
		{`{"recurrence":{"cron":"0 9 * * *","schedule":{"hours":[1]}}}`, "recurrence.schedule", recurrence.CodeNotAllowed, "either cron or frequency"},
		{`{"recurrence":{"cron":"0 9 * * *","count":0}}`, "recurrence.count", recurrence.CodeOutOfRange, "at least 1"},
	} {
		t.Run(tc.props, func(t *testing.T) {
			requireInvalid(t, tc.props, tc.path, tc.code, tc.message)
		})
	}
	t.Run("a cron that never runs", func(t *testing.T) {
		_, err := recurrence.Compile(defOf(t, `{"recurrence":{"cron":"0 0 30 2 *"}}`), at(t, "2026-06-01T00:00:00Z"))
		var ve *recurrence.ValidationError
		require.True(t, errors.As(err, &ve), "%v", err)
		require.Equal(t, recurrence.CodeNeverOccurs, ve.Code)
	})
}

func TestCronPeriod(t *testing.T) {
	for expr, want := range map[string]time.Duration{
		"*/15 * * * *":    15 * time.Minute,
		"0 9 * * MON-FRI": 24 * time.Hour,
		"0 0 1,15 * *":    14 * 24 * time.Hour, // the 1st to the 15th, and February's 15th to March's 1st
		"@yearly":         365 * 24 * time.Hour,
	} {
		got, ok := recurrence.CronPeriod(expr)
		require.True(t, ok, expr)
		require.Equal(t, want, got, expr)
	}
	_, ok := recurrence.CronPeriod("not cron")
	require.False(t, ok)
}

// TestCronMatchesANaiveReading compares the runs of cron expressions over
// two years with a reading of each minute that knows nothing of the
// engine: the fields checked one by one on the minute's UTC date.
func TestCronMatchesANaiveReading(t *testing.T) {
	from := at(t, "2026-01-01T00:00:00Z")
	to := from.AddDate(2, 0, 0)
	for _, expr := range []string{
		"17 3 * * *", "0 */6 1-7 * MON", "30 8 L * *", "0 0 LW,15W * *", "45 23 * * 6L", "0 12 * 2,8 2#1,4#4",
		"0 0 29 * *", "5 4 L-1 * 0", "0 7 10 * 3",
	} {
		t.Run(expr, func(t *testing.T) {
			r, err := recurrence.Compile(cronDef(t, expr, "", from.Format(time.RFC3339)), from)
			require.NoError(t, err)
			var got []time.Time
			for next, ok := r.First(from); ok && next.Before(to); next, ok = r.Next(next) {
				got = append(got, next)
			}
			var want []time.Time
			for m := from; m.Before(to); m = m.Add(time.Minute) {
				if naiveCronMatch(expr, m) {
					want = append(want, m)
				}
			}
			require.NotEmpty(t, want)
			require.Equal(t, want, got)
		})
	}
}

// naiveCronMatch reads expr (no names but MON, no shorthands) against
// minute m.
func naiveCronMatch(expr string, m time.Time) bool {
	f := strings.Fields(expr)
	last := time.Date(m.Year(), m.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
	weekdayOf := func(day int) time.Weekday {
		return time.Date(m.Year(), m.Month(), day, 0, 0, 0, 0, time.UTC).Weekday()
	}
	nearest := func(day int) int {
		switch weekdayOf(day) {
		case time.Saturday:
			if day == 1 {
				return 3
			}
			return day - 1
		case time.Sunday:
			if day == last {
				return day - 2
			}
			return day + 1
		}
		return day
	}
	// plain reads values, ranges and steps of a field of min..max.
	plain := func(field string, v, min, max int) bool {
		for _, item := range strings.Split(field, ",") {
			rng, stepText, hasStep := strings.Cut(item, "/")
			step := 1
			if hasStep {
				step, _ = strconv.Atoi(stepText)
			}
			lo, hi := min, max
			if rng != "*" {
				a, b, isRange := strings.Cut(rng, "-")
				lo, _ = strconv.Atoi(a)
				if isRange {
					hi, _ = strconv.Atoi(b)
				} else if !hasStep {
					hi = lo
				}
			}
			if v >= lo && v <= hi && (v-lo)%step == 0 {
				return true
			}
		}
		return false
	}
	dom := func(field string) bool {
		for _, item := range strings.Split(field, ",") {
			switch {
			case item == "L":
				if m.Day() == last {
					return true
				}
			case item == "LW":
				if m.Day() == nearest(last) {
					return true
				}
			case strings.HasPrefix(item, "L-"):
				n, _ := strconv.Atoi(item[2:])
				if m.Day() == last-n {
					return true
				}
			case strings.HasSuffix(item, "W"):
				n, _ := strconv.Atoi(strings.TrimSuffix(item, "W"))
				if n <= last && m.Day() == nearest(n) {
					return true
				}
			default:
				if plain(item, m.Day(), 1, 31) {
					return true
				}
			}
		}
		return false
	}
	days := map[string]int{"MON": 1}
	dow := func(field string) bool {
		wd := int(m.Weekday())
		for _, item := range strings.Split(field, ",") {
			if n, ok := days[strings.SplitN(item, "#", 2)[0]]; ok {
				item = strings.Replace(item, strings.SplitN(item, "#", 2)[0], strconv.Itoa(n), 1)
			}
			switch {
			case strings.HasSuffix(item, "L"):
				n, _ := strconv.Atoi(strings.TrimSuffix(item, "L"))
				if wd == n%7 && m.Day()+7 > last {
					return true
				}
			case strings.Contains(item, "#"):
				a, b, _ := strings.Cut(item, "#")
				n, _ := strconv.Atoi(a)
				k, _ := strconv.Atoi(b)
				if wd == n%7 && (m.Day()-1)/7+1 == k {
					return true
				}
			default:
				if plain(item, wd, 0, 7) || (wd == 0 && plain(item, 7, 0, 7)) {
					return true
				}
			}
		}
		return false
	}
	if !plain(f[0], m.Minute(), 0, 59) || !plain(f[1], m.Hour(), 0, 23) || !plain(f[3], int(m.Month()), 1, 12) {
		return false
	}
	domAny, dowAny := f[2] == "*" || f[2] == "?", f[4] == "*" || f[4] == "?"
	switch {
	case domAny && dowAny:
		return true
	case domAny:
		return dow(f[4])
	case dowAny:
		return dom(f[2])
	default:
		return dom(f[2]) || dow(f[4])
	}
}

// requireInvalid parses props and checks the error's path and code, and
// that its message holds message.
func requireInvalid(t *testing.T, props, path, code, message string) {
	t.Helper()
	_, err := recurrence.Parse([]byte(props))
	var ve *recurrence.ValidationError
	require.True(t, errors.As(err, &ve), "%v", err)
	require.Equal(t, path, ve.Path)
	require.Equal(t, code, ve.Code)
	require.Contains(t, ve.Message, message)
}
