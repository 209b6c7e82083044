package recurrence_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/recurrence"
)

// defOf parses job properties JSON, failing the test on error.
func defOf(t testing.TB, js string) recurrence.Definition {
	t.Helper()
	def, err := recurrence.Parse([]byte(js))
	require.NoError(t, err, js)
	return def
}

// at parses an RFC 3339 instant.
func at(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return v
}

// runs returns up to n run times of def created at created and planned at
// now (First, then Next), formatted RFC 3339 in UTC.
func runs(t testing.TB, def recurrence.Definition, created, now time.Time, n int) []string {
	t.Helper()
	r := compiled(t, def, created)
	first, ok := r.First(now)
	return chain(r, first, ok, n)
}

// nextAfter returns n occurrences strictly after after.
func nextAfter(t testing.TB, def recurrence.Definition, created, after time.Time, n int) []string {
	t.Helper()
	r := compiled(t, def, created)
	first, ok := r.Next(after)
	return chain(r, first, ok, n)
}

func compiled(t testing.TB, def recurrence.Definition, created time.Time) *recurrence.Rule {
	t.Helper()
	r, err := recurrence.Compile(def, created)
	require.NoError(t, err)
	return r
}

// chain formats next and the occurrences after it, n at most.
func chain(r *recurrence.Rule, next time.Time, ok bool, n int) []string {
	var out []string
	for ; ok && len(out) < n; next, ok = r.Next(next) {
		out = append(out, next.Format(time.RFC3339Nano))
	}
	return out
}

// TestSeedScheduleExamples checks every row of the seed's table "Examples:
// Recurrence schedules", with interval 1 and the frequency the row implies.
// The start is Monday 2026-06-01 12:00 UTC unless a row needs another
// minute; when after is set the run list starts strictly after it.
func TestSeedScheduleExamples(t *testing.T) {
	const monday = "2026-06-01T12:00:00Z"
	tests := []struct {
		name      string
		frequency string
		schedule  string
		start     string
		after     string
		want      string // space-separated, the "Z" suffix implied by "2026-" prefixes
	}{
		{"hours 5: 5 AM every day", "Day", `{"hours":[5]}`, monday, "",
			"2026-06-02T05:00:00Z 2026-06-03T05:00:00Z 2026-06-04T05:00:00Z"},
		{"minutes 15 hours 5: 5:15 AM every day", "Day", `{"minutes":[15],"hours":[5]}`, monday, "",
			"2026-06-02T05:15:00Z 2026-06-03T05:15:00Z"},
		{"minutes 15 hours 5,17: 5:15 AM and PM", "Day", `{"minutes":[15],"hours":[5,17]}`, monday, "",
			"2026-06-01T17:15:00Z 2026-06-02T05:15:00Z 2026-06-02T17:15:00Z"},
		{"minutes 15,45 hours 5,17: four times a day", "Day", `{"minutes":[15,45],"hours":[5,17]}`, monday, "",
			"2026-06-01T17:15:00Z 2026-06-01T17:45:00Z 2026-06-02T05:15:00Z 2026-06-02T05:45:00Z 2026-06-02T17:15:00Z"},
		{"minutes 0,15,30,45: every 15 minutes", "Day", `{"minutes":[0,15,30,45]}`, monday, "",
			"2026-06-01T12:00:00Z 2026-06-01T12:15:00Z 2026-06-01T12:30:00Z 2026-06-01T12:45:00Z 2026-06-01T13:00:00Z"},
		{"all 24 hours: every hour at the start minute", "Day", `{"hours":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23]}`,
			"2026-06-01T12:25:00Z", "2026-06-01T22:00:00Z",
			"2026-06-01T22:25:00Z 2026-06-01T23:25:00Z 2026-06-02T00:25:00Z 2026-06-02T01:25:00Z"},
		{"minutes 0: every hour on the hour", "Day", `{"minutes":[0]}`, monday, "",
			"2026-06-01T12:00:00Z 2026-06-01T13:00:00Z 2026-06-01T14:00:00Z"},
		{"minutes 15: quarter past every hour, 00:15 to 23:15", "Day", `{"minutes":[15]}`, monday, "2026-06-01T22:30:00Z",
			"2026-06-01T23:15:00Z 2026-06-02T00:15:00Z 2026-06-02T01:15:00Z"},
		{"hours 17 saturday: 5 PM on Saturday", "Week", `{"hours":[17],"weekDays":["saturday"]}`, monday, "",
			"2026-06-06T17:00:00Z 2026-06-13T17:00:00Z 2026-06-20T17:00:00Z"},
		{"hours 17 monday wednesday friday", "Week", `{"hours":[17],"weekDays":["monday","wednesday","friday"]}`, monday, "",
			"2026-06-01T17:00:00Z 2026-06-03T17:00:00Z 2026-06-05T17:00:00Z 2026-06-08T17:00:00Z"},
		{"minutes 15,45 hours 17 monday wednesday friday", "Week", `{"minutes":[15,45],"hours":[17],"weekDays":["monday","wednesday","friday"]}`, monday, "",
			"2026-06-01T17:15:00Z 2026-06-01T17:45:00Z 2026-06-03T17:15:00Z 2026-06-03T17:45:00Z 2026-06-05T17:15:00Z"},
		{"hours 5,17 monday wednesday friday", "Week", `{"hours":[5,17],"weekDays":["monday","wednesday","friday"]}`, monday, "",
			"2026-06-01T17:00:00Z 2026-06-03T05:00:00Z 2026-06-03T17:00:00Z 2026-06-05T05:00:00Z"},
		{"minutes 15,45 hours 5,17 monday wednesday friday", "Week", `{"minutes":[15,45],"hours":[5,17],"weekDays":["monday","wednesday","friday"]}`, monday, "",
			"2026-06-01T17:15:00Z 2026-06-01T17:45:00Z 2026-06-03T05:15:00Z 2026-06-03T05:45:00Z 2026-06-03T17:15:00Z"},
		{"every 15 minutes on weekdays", "Week", `{"minutes":[0,15,30,45],"weekDays":["monday","tuesday","wednesday","thursday","friday"]}`, monday, "2026-06-05T23:40:00Z",
			"2026-06-05T23:45:00Z 2026-06-08T00:00:00Z 2026-06-08T00:15:00Z"},
		{"every 15 minutes on weekdays 9 AM to 4:45 PM", "Week", `{"minutes":[0,15,30,45],"hours":[9,10,11,12,13,14,15,16],"weekDays":["monday","tuesday","wednesday","thursday","friday"]}`, monday, "2026-06-01T16:40:00Z",
			"2026-06-01T16:45:00Z 2026-06-02T09:00:00Z 2026-06-02T09:15:00Z"},
		{"sunday at start time", "Week", `{"weekDays":["sunday"]}`, monday, "",
			"2026-06-07T12:00:00Z 2026-06-14T12:00:00Z"},
		{"tuesday thursday at start time", "Week", `{"weekDays":["tuesday","thursday"]}`, monday, "",
			"2026-06-02T12:00:00Z 2026-06-04T12:00:00Z 2026-06-09T12:00:00Z"},
		{"6 AM on the 28th", "Month", `{"minutes":[0],"hours":[6],"monthDays":[28]}`, monday, "",
			"2026-06-28T06:00:00Z 2026-07-28T06:00:00Z 2026-08-28T06:00:00Z"},
		{"6 AM on the last day", "Month", `{"minutes":[0],"hours":[6],"monthDays":[-1]}`, monday, "",
			"2026-06-30T06:00:00Z 2026-07-31T06:00:00Z 2026-08-31T06:00:00Z 2026-09-30T06:00:00Z"},
		{"6 AM on the first and last day", "Month", `{"minutes":[0],"hours":[6],"monthDays":[1,-1]}`, monday, "",
			"2026-06-30T06:00:00Z 2026-07-01T06:00:00Z 2026-07-31T06:00:00Z 2026-08-01T06:00:00Z"},
		{"first and last day at start time", "Month", `{"monthDays":[1,-1]}`, monday, "",
			"2026-06-01T12:00:00Z 2026-06-30T12:00:00Z 2026-07-01T12:00:00Z 2026-07-31T12:00:00Z"},
		{"first and 14th at start time", "Month", `{"monthDays":[1,14]}`, monday, "",
			"2026-06-01T12:00:00Z 2026-06-14T12:00:00Z 2026-07-01T12:00:00Z 2026-07-14T12:00:00Z"},
		{"second day at start time", "Month", `{"monthDays":[2]}`, monday, "",
			"2026-06-02T12:00:00Z 2026-07-02T12:00:00Z 2026-08-02T12:00:00Z"},
		{"first friday at 5 AM", "Month", `{"minutes":[0],"hours":[5],"monthlyOccurrences":[{"day":"friday","occurrence":1}]}`, monday, "",
			"2026-06-05T05:00:00Z 2026-07-03T05:00:00Z 2026-08-07T05:00:00Z"},
		{"first friday at start time", "Month", `{"monthlyOccurrences":[{"day":"friday","occurrence":1}]}`, monday, "",
			"2026-06-05T12:00:00Z 2026-07-03T12:00:00Z 2026-08-07T12:00:00Z"},
		{"third friday from the end", "Month", `{"monthlyOccurrences":[{"day":"friday","occurrence":-3}]}`, monday, "",
			"2026-06-12T12:00:00Z 2026-07-17T12:00:00Z 2026-08-14T12:00:00Z"},
		{"first and last friday at 5:15 AM", "Month", `{"minutes":[15],"hours":[5],"monthlyOccurrences":[{"day":"friday","occurrence":1},{"day":"friday","occurrence":-1}]}`, monday, "",
			"2026-06-05T05:15:00Z 2026-06-26T05:15:00Z 2026-07-03T05:15:00Z 2026-07-31T05:15:00Z"},
		{"first and last friday at start time", "Month", `{"monthlyOccurrences":[{"day":"friday","occurrence":1},{"day":"friday","occurrence":-1}]}`, monday, "",
			"2026-06-05T12:00:00Z 2026-06-26T12:00:00Z 2026-07-03T12:00:00Z 2026-07-31T12:00:00Z"},
		{"fifth friday only in months that have one", "Month", `{"monthlyOccurrences":[{"day":"friday","occurrence":5}]}`, monday, "",
			"2026-07-31T12:00:00Z 2026-10-30T12:00:00Z 2027-01-29T12:00:00Z"},
		{"every 15 minutes on the last friday", "Month", `{"minutes":[0,15,30,45],"monthlyOccurrences":[{"day":"friday","occurrence":-1}]}`, monday, "2026-06-26T23:40:00Z",
			"2026-06-26T23:45:00Z 2026-07-31T00:00:00Z 2026-07-31T00:15:00Z"},
		{"5:15, 5:45, 17:15, 17:45 on the third wednesday", "Month", `{"minutes":[15,45],"hours":[5,17],"monthlyOccurrences":[{"day":"wednesday","occurrence":3}]}`, monday, "",
			"2026-06-17T05:15:00Z 2026-06-17T05:45:00Z 2026-06-17T17:15:00Z 2026-06-17T17:45:00Z 2026-07-15T05:15:00Z"},
	}
	require.Len(t, tests, 31, "the seed's table has 31 rows")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			def := defOf(t, fmt.Sprintf(`{"startTime":%q,"recurrence":{"frequency":%q,"interval":1,"schedule":%s}}`,
				tc.start, tc.frequency, tc.schedule))
			want := strings.Fields(tc.want)
			start := at(t, tc.start)
			var got []string
			if tc.after == "" {
				got = runs(t, def, start, start, len(want))
			} else {
				got = nextAfter(t, def, start, at(t, tc.after), len(want))
			}
			require.Equal(t, want, got)
		})
	}
}
