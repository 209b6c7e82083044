package recurrence_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/recurrence"
)

// TestCronWithSeconds: six fields read as Quartz and croner read them,
// a second field first.
func TestCronWithSeconds(t *testing.T) {
	// 2026-06-05 is a Friday.
	now := at(t, "2026-06-05T12:00:03Z")
	for _, tc := range []struct {
		name, expr string
		want       []string
	}{
		{"every ten seconds", "*/10 * * * * *", []string{"2026-06-05T12:00:10Z", "2026-06-05T12:00:20Z", "2026-06-05T12:00:30Z", "2026-06-05T12:00:40Z", "2026-06-05T12:00:50Z", "2026-06-05T12:01:00Z"}},
		{"Quartz's weekday mornings", "0 30 9 ? * MON-FRI", []string{"2026-06-08T09:30:00Z", "2026-06-09T09:30:00Z"}},
		{"croner's MON-FRI with *", "0 30 9 * * MON-FRI", []string{"2026-06-08T09:30:00Z", "2026-06-09T09:30:00Z"}},
		{"a list of seconds in a range of minutes", "15,45 0-1 13 * * *", []string{"2026-06-05T13:00:15Z", "2026-06-05T13:00:45Z", "2026-06-05T13:01:15Z", "2026-06-05T13:01:45Z", "2026-06-06T13:00:15Z"}},
		{"seconds across the end of a minute and an hour", "58-59/1,0 59 12 * * *", []string{"2026-06-05T12:59:00Z", "2026-06-05T12:59:58Z", "2026-06-05T12:59:59Z", "2026-06-06T12:59:00Z"}},
		{"the last day, at a second", "7 0 0 L * *", []string{"2026-06-30T00:00:07Z", "2026-07-31T00:00:07Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, runs(t, cronDef(t, tc.expr, "", ""), now, now, len(tc.want)))
		})
	}
	t.Run("a startTime on a second that matches runs then", func(t *testing.T) {
		require.Equal(t, []string{"2026-06-06T00:00:20Z", "2026-06-06T00:00:40Z"},
			runs(t, cronDef(t, "*/20 * * * * *", "", "2026-06-06T00:00:20Z"), now, now, 2))
	})
	t.Run("a startTime's fraction: runs are at whole seconds", func(t *testing.T) {
		require.Equal(t, []string{"2026-06-06T00:00:21Z"},
			runs(t, cronDef(t, "* * * * * *", "", "2026-06-06T00:00:20.5Z"), now, now, 1))
	})
}

// TestSixFieldCronWithSecondZeroIsTheFiveFieldOne: "0 m h dom mon dow"
// runs exactly where "m h dom mon dow" runs, in a DST zone, under every
// policy; five fields keep their meaning.
func TestSixFieldCronWithSecondZeroIsTheFiveFieldOne(t *testing.T) {
	from := at(t, "2026-01-01T00:00:00Z")
	for _, expr := range []string{"*/15 1-3 * * *", "30 2 L * *", "0 0 LW * 5L", "45 23 * * 6L", "5 4 L-1 * 0", "0 */6 1-7 * MON"} {
		for _, dst := range []string{``, `"dst":{"gap":"skip","repeat":"both"},`, `"dst":{"gap":"atTransition","repeat":"last"},`} {
			five := defOf(t, `{"recurrence":{`+dst+`"cron":"`+expr+`","timeZone":"Europe/Berlin"}}`)
			six := defOf(t, `{"recurrence":{`+dst+`"cron":"0 `+expr+`","timeZone":"Europe/Berlin"}}`)
			require.Equal(t, runs(t, five, from, from, 300), runs(t, six, from, from, 300), "%s %s", expr, dst)
		}
	}
}

// TestCronWithSecondsMatchesANaiveReading compares a year of runs of
// six-field expressions with the naive reading of the five fields after
// the second, each minute that matches then expanded by the second field
// read alone.
func TestCronWithSecondsMatchesANaiveReading(t *testing.T) {
	from := at(t, "2026-01-01T00:00:00Z")
	to := from.AddDate(1, 0, 0)
	for _, expr := range []string{
		"*/10 17 3 * * *", "0,30 0 */6 1-7 * MON", "5-20/5 30 8 L * *", "59 0 0 LW,15W * *", "*/7 45 23 * * 6L", "1 0 12 * 2,8 2#1,4#4",
	} {
		t.Run(expr, func(t *testing.T) {
			r, err := recurrence.Compile(cronDef(t, expr, "", from.Format(time.RFC3339)), from)
			require.NoError(t, err)
			var got []time.Time
			for next, ok := r.First(from); ok && next.Before(to); next, ok = r.Next(next) {
				got = append(got, next)
			}
			secondField, rest, _ := strings.Cut(expr, " ")
			var want []time.Time
			for m := from; m.Before(to); m = m.Add(time.Minute) {
				if !naiveCronMatch(rest, m) {
					continue
				}
				for s := range 60 {
					// The second field is read as the minute field is.
					if naiveCronMatch(secondField+" * * * *", time.Date(2026, 1, 1, 0, s, 0, 0, time.UTC)) {
						want = append(want, m.Add(time.Duration(s)*time.Second))
					}
				}
			}
			require.NotEmpty(t, want)
			require.Equal(t, want, got)
		})
	}
}

// TestCronSecondsMeetTheDSTPolicy: a six-field cron's wall-clock times
// meet DST transitions as a five-field one's minutes do. Berlin skips
// 02:00-03:00 on 2026-03-29 and repeats it on 2026-10-25.
func TestCronSecondsMeetTheDSTPolicy(t *testing.T) {
	spring, fall := at(t, "2026-03-28T00:00:00Z"), at(t, "2026-10-24T00:00:00Z")
	for _, tc := range []struct {
		name, dst            string
		springRuns, fallRuns []string
	}{
		{"default: shifted forward, the first instant", ``,
			[]string{"2026-03-28T01:30:30Z", "2026-03-29T01:30:30Z", "2026-03-30T00:30:30Z"},
			[]string{"2026-10-24T00:30:30Z", "2026-10-25T00:30:30Z", "2026-10-26T01:30:30Z"}},
		{"skip and last", `"dst":{"gap":"skip","repeat":"last"},`,
			[]string{"2026-03-28T01:30:30Z", "2026-03-30T00:30:30Z", "2026-03-31T00:30:30Z"},
			[]string{"2026-10-24T00:30:30Z", "2026-10-25T01:30:30Z", "2026-10-26T01:30:30Z"}},
		{"atTransition and both", `"dst":{"gap":"atTransition","repeat":"both"},`,
			[]string{"2026-03-28T01:30:30Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:30Z"},
			[]string{"2026-10-24T00:30:30Z", "2026-10-25T00:30:30Z", "2026-10-25T01:30:30Z", "2026-10-26T01:30:30Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := defOf(t, `{"startTime":"2026-01-01T00:00:00Z","recurrence":{`+tc.dst+`"timeZone":"Europe/Berlin","cron":"30 30 2 * * *"}}`)
			require.Equal(t, tc.springRuns, nextAfter(t, def, spring, spring.Add(-1), len(tc.springRuns)), "spring")
			require.Equal(t, tc.fallRuns, nextAfter(t, def, fall, fall.Add(-1), len(tc.fallRuns)), "fall")
		})
	}
	t.Run("seconds in the gap run once at the transition", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2026-01-01T00:00:00Z","recurrence":{"dst":{"gap":"atTransition"},"timeZone":"Europe/Berlin","cron":"*/20 59 1,2 29 3 *"}}`)
		require.Equal(t, []string{"2026-03-29T00:59:00Z", "2026-03-29T00:59:20Z", "2026-03-29T00:59:40Z", "2026-03-29T01:00:00Z", "2027-03-28T23:59:00Z"},
			nextAfter(t, def, spring, spring, 5))
	})
	t.Run("the preview marks a moved second", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2026-01-01T00:00:00Z","recurrence":{"timeZone":"Europe/Berlin","cron":"30 30 2 29 3 *"}}`)
		r, err := recurrence.Compile(def, spring)
		require.NoError(t, err)
		shift, ok := r.Shift(at(t, "2026-03-29T01:30:30Z"))
		require.True(t, ok)
		require.Equal(t, recurrence.Shift{Wall: "2026-03-29T02:30:30", Kind: recurrence.ShiftMoved}, shift)
	})
}

func TestCronWithSecondsValidationAndPeriod(t *testing.T) {
	requireInvalid(t, `{"recurrence":{"cron":"0 0 9 * * * 2027"}}`, "recurrence.cron", recurrence.CodeInvalidValue, "has 7 fields")
	requireInvalid(t, `{"recurrence":{"cron":"60 0 9 * * *"}}`, "recurrence.cron", recurrence.CodeInvalidValue, "second field: 60 is out of 0-59")
	requireInvalid(t, `{"recurrence":{"cron":"*/0 0 9 * * *"}}`, "recurrence.cron", recurrence.CodeInvalidValue, "second field: step")
	requireInvalid(t, `{"recurrence":{"cron":"0 60 9 * * *"}}`, "recurrence.cron", recurrence.CodeInvalidValue, "minute field: 60 is out of 0-59")
	for expr, want := range map[string]time.Duration{
		"*/10 * * * * *":  10 * time.Second,
		"0,5 * * * * *":   5 * time.Second,
		"0 */2 * * * *":   2 * time.Minute,
		"15,45 0 9 * * *": 30 * time.Second,
	} {
		got, ok := recurrence.CronPeriod(expr)
		require.True(t, ok, expr)
		require.Equal(t, want, got, expr)
	}
}
