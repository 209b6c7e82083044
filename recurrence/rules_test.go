package recurrence_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/recurrence"
)

func TestRule1NoRecurrenceRunsOnce(t *testing.T) {
	created := at(t, "2026-06-01T12:00:00Z")
	tests := []struct {
		name, props, want string
	}{
		{"startTime in the future runs at startTime", `{"startTime":"2026-06-03T08:00:00Z"}`, "2026-06-03T08:00:00Z"},
		{"startTime now runs at startTime", `{"startTime":"2026-06-01T12:00:00Z"}`, "2026-06-01T12:00:00Z"},
		{"startTime in the past runs at once, at C", `{"startTime":"2020-01-01T00:00:00Z"}`, "2026-06-01T12:00:00Z"},
		{"no startTime runs at once, at C", `{}`, "2026-06-01T12:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, []string{tc.want}, runs(t, defOf(t, tc.props), created, created, 5))
		})
	}
}

func TestRule2NoStartTimeRunsAtOnceThenFromC(t *testing.T) {
	// C is truncated to whole seconds and becomes the anchor.
	created := at(t, "2026-06-01T10:17:33.4Z")
	t.Run("no schedule: C + k*interval", func(t *testing.T) {
		def := defOf(t, `{"recurrence":{"frequency":"Hour","interval":2}}`)
		require.Equal(t, []string{"2026-06-01T10:17:33Z", "2026-06-01T12:17:33Z", "2026-06-01T14:17:33Z"},
			runs(t, def, created, created, 3))
	})
	t.Run("schedule: later runs follow the schedule", func(t *testing.T) {
		def := defOf(t, `{"recurrence":{"frequency":"Day","schedule":{"hours":[5]}}}`)
		require.Equal(t, []string{"2026-06-01T10:17:33Z", "2026-06-02T05:17:33Z", "2026-06-03T05:17:33Z"},
			runs(t, def, created, created, 3))
	})
	t.Run("the immediate run counts toward count", func(t *testing.T) {
		def := defOf(t, `{"recurrence":{"frequency":"Minute","interval":5,"count":2}}`)
		got, err := recurrence.Preview(def, created, created, 10)
		require.NoError(t, err)
		require.Equal(t, []time.Time{at(t, "2026-06-01T10:17:33Z"), at(t, "2026-06-01T10:22:33Z")}, got)
	})
}

func TestRule3StartTimeInThePastDiscardsPastOccurrences(t *testing.T) {
	now := at(t, "2015-04-08T13:00:00Z")
	want := []string{"2015-04-09T14:00:00Z", "2015-04-11T14:00:00Z", "2015-04-13T14:00:00Z", "2015-04-15T14:00:00Z"}
	// The seed's worked example, and its remark that 04-05 and 04-01 give
	// the same first run.
	for _, start := range []string{"2015-04-07T14:00Z", "2015-04-05T14:00Z", "2015-04-01T14:00Z"} {
		def := defOf(t, `{"startTime":"`+start+`","recurrence":{"frequency":"Day","interval":2}}`)
		require.Equal(t, want, runs(t, def, now, now, 4), start)
	}
	t.Run("an occurrence exactly at now is the first run", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2015-04-07T14:00Z","recurrence":{"frequency":"Day","interval":2}}`)
		now := at(t, "2015-04-09T14:00:00Z")
		require.Equal(t, want[:2], runs(t, def, now, now, 2))
	})
	t.Run("discarded past occurrences do not count", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2015-04-01T14:00Z","recurrence":{"frequency":"Day","interval":2,"count":2}}`)
		require.Equal(t, want[:2], runs2(t, def, now, 10))
	})
}

// runs2 is Preview with created = now, formatted.
func runs2(t *testing.T, def recurrence.Definition, now time.Time, n int) []string {
	t.Helper()
	got, err := recurrence.Preview(def, now, now, n)
	require.NoError(t, err)
	out := []string{}
	for _, g := range got {
		out = append(out, g.Format(time.RFC3339Nano))
	}
	return out
}

func TestRule4StartTimeInTheFuture(t *testing.T) {
	now := at(t, "2026-06-01T12:00:00Z")
	t.Run("no schedule: the first run is startTime", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2026-06-10T09:30:00Z","recurrence":{"frequency":"Week","interval":2}}`)
		require.Equal(t, []string{"2026-06-10T09:30:00Z", "2026-06-24T09:30:00Z"}, runs(t, def, now, now, 2))
	})
	t.Run("startTime matching the schedule is the first run", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2026-06-10T05:00:00Z","recurrence":{"frequency":"Day","schedule":{"hours":[5,17]}}}`)
		require.Equal(t, []string{"2026-06-10T05:00:00Z", "2026-06-10T17:00:00Z"}, runs(t, def, now, now, 2))
	})
	t.Run("no sooner than startTime: the first scheduled time after it", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2026-06-10T06:00:00Z","recurrence":{"frequency":"Day","schedule":{"hours":[5,17],"minutes":[0]}}}`)
		require.Equal(t, []string{"2026-06-10T17:00:00Z", "2026-06-11T05:00:00Z"}, runs(t, def, now, now, 2))
	})
	t.Run("fractional seconds of startTime are kept", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2026-06-10T06:00:00.25Z","recurrence":{"frequency":"Minute","interval":30}}`)
		require.Equal(t, []string{"2026-06-10T06:00:00.25Z", "2026-06-10T06:30:00.25Z"}, runs(t, def, now, now, 2))
	})
}

func TestLaterRunsComeFromNominalTimesNotActualOnes(t *testing.T) {
	def := defOf(t, `{"startTime":"2026-06-01T12:00:00Z","recurrence":{"frequency":"Minute","interval":10}}`)
	r, err := recurrence.Compile(def, at(t, "2026-06-01T12:00:00Z"))
	require.NoError(t, err)
	// A run that actually happened 3 minutes late does not shift the next.
	next, ok := r.Next(at(t, "2026-06-01T12:03:00Z"))
	require.True(t, ok)
	require.Equal(t, at(t, "2026-06-01T12:10:00Z"), next)
}

func TestEndTime(t *testing.T) {
	now := at(t, "2026-06-01T12:00:00Z")
	t.Run("a run exactly at endTime runs, none after", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2026-06-01T12:00:00Z","recurrence":{"frequency":"Hour","endTime":"2026-06-01T14:00:00Z"}}`)
		require.Equal(t, []string{"2026-06-01T12:00:00Z", "2026-06-01T13:00:00Z", "2026-06-01T14:00:00Z"}, runs(t, def, now, now, 10))
	})
	t.Run("a date-only endTime is midnight in the zone", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2026-06-01T20:00:00Z","recurrence":{"frequency":"Hour","interval":1,"endTime":"2026-06-02","timeZone":"Europe/Berlin"}}`)
		// Midnight in Berlin (CEST) is 22:00 UTC.
		require.Equal(t, []string{"2026-06-01T20:00:00Z", "2026-06-01T21:00:00Z", "2026-06-01T22:00:00Z"}, runs(t, def, now, now, 10))
	})
	t.Run("an endTime in the past is accepted and nothing runs", func(t *testing.T) {
		def := defOf(t, `{"recurrence":{"frequency":"Day","endTime":"2020-01-01T00:00:00Z"}}`)
		require.Empty(t, runs(t, def, now, now, 10))
	})
	t.Run("count and endTime: whichever ends first", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2026-06-01T12:00:00Z","recurrence":{"frequency":"Day","count":3,"endTime":"2026-06-30"}}`)
		require.Len(t, runs2(t, def, now, 10), 3)
		def = defOf(t, `{"startTime":"2026-06-01T12:00:00Z","recurrence":{"frequency":"Day","count":30,"endTime":"2026-06-03T12:00:00Z"}}`)
		require.Len(t, runs2(t, def, now, 40), 3)
	})
	t.Run("seed example: weekly MWF at 10 and 22, count 10, date-only endTime", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2012-08-04T00:00Z","recurrence":{"frequency":"Week","interval":1,
			"schedule":{"weekDays":["Monday","Wednesday","Friday"],"hours":[10,22]},"count":10,"endTime":"2012-11-04"}}`)
		created := at(t, "2012-08-01T00:00:00Z")
		got := runs2(t, def, created, 20)
		require.Equal(t, []string{
			"2012-08-06T10:00:00Z", "2012-08-06T22:00:00Z", "2012-08-08T10:00:00Z", "2012-08-08T22:00:00Z",
			"2012-08-10T10:00:00Z", "2012-08-10T22:00:00Z", "2012-08-13T10:00:00Z", "2012-08-13T22:00:00Z",
			"2012-08-15T10:00:00Z", "2012-08-15T22:00:00Z",
		}, got)
	})
}

func TestMonthDaySelection(t *testing.T) {
	now := at(t, "2026-01-01T00:00:00Z")
	cases := []struct {
		name, props string
		want        []string
	}{
		{"day 31 runs only in months that have a 31st", `{"startTime":"2026-01-01T06:00:00Z","recurrence":{"frequency":"Month","schedule":{"monthDays":[31]}}}`,
			[]string{"2026-01-31T06:00:00Z", "2026-03-31T06:00:00Z", "2026-05-31T06:00:00Z", "2026-07-31T06:00:00Z", "2026-08-31T06:00:00Z"}},
		{"negative days count from the end, -31 only in 31-day months", `{"startTime":"2026-01-01T06:00:00Z","recurrence":{"frequency":"Month","schedule":{"monthDays":[-31]}}}`,
			[]string{"2026-01-01T06:00:00Z", "2026-03-01T06:00:00Z", "2026-05-01T06:00:00Z"}},
		{"-1 in February of a leap year is the 29th", `{"startTime":"2028-01-15T06:00:00Z","recurrence":{"frequency":"Month","schedule":{"monthDays":[-1]}}}`,
			[]string{"2028-01-31T06:00:00Z", "2028-02-29T06:00:00Z", "2028-03-31T06:00:00Z"}},
		{"the default day A.day skips months without it (Jan 31 monthly)", `{"startTime":"2026-01-31T09:00:00Z","recurrence":{"frequency":"Month"}}`,
			[]string{"2026-01-31T09:00:00Z", "2026-03-31T09:00:00Z", "2026-05-31T09:00:00Z", "2026-07-31T09:00:00Z"}},
		{"every friday of the month without occurrence", `{"startTime":"2026-01-01T09:00:00Z","recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"Friday"}]}}}`,
			[]string{"2026-01-02T09:00:00Z", "2026-01-09T09:00:00Z", "2026-01-16T09:00:00Z", "2026-01-23T09:00:00Z", "2026-01-30T09:00:00Z", "2026-02-06T09:00:00Z"}},
		{"monthDays 1 and the first Thursday on one day run once", `{"startTime":"2026-01-01T09:00:00Z","recurrence":{"frequency":"Month","schedule":{"monthDays":[1],"monthlyOccurrences":[{"day":"thursday","occurrence":1}]}}}`,
			[]string{"2026-01-01T09:00:00Z", "2026-02-01T09:00:00Z", "2026-02-05T09:00:00Z", "2026-03-01T09:00:00Z"}},
		{"-5 is the first of five such weekdays", `{"startTime":"2026-01-01T09:00:00Z","recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"saturday","occurrence":-5}]}}}`,
			[]string{"2026-01-03T09:00:00Z", "2026-05-02T09:00:00Z", "2026-08-01T09:00:00Z"}},
		{"interval months count from A's month", `{"startTime":"2026-01-15T09:00:00Z","recurrence":{"frequency":"Month","interval":5}}`,
			[]string{"2026-01-15T09:00:00Z", "2026-06-15T09:00:00Z", "2026-11-15T09:00:00Z", "2027-04-15T09:00:00Z"}},
		{"Feb 29 yearly runs only in leap years", `{"startTime":"2096-02-29T00:00:00Z","recurrence":{"frequency":"Year"}}`,
			[]string{"2096-02-29T00:00:00Z", "2104-02-29T00:00:00Z", "2108-02-29T00:00:00Z"}},
		{"yearly with hours expands the day", `{"startTime":"2026-03-10T00:00:00Z","recurrence":{"frequency":"Year","interval":2,"schedule":{"hours":[8,20],"minutes":[30]}}}`,
			[]string{"2026-03-10T08:30:00Z", "2026-03-10T20:30:00Z", "2028-03-10T08:30:00Z"}},
		{"weekly interval counts Monday-to-Sunday weeks from A's week", `{"startTime":"2026-06-06T10:00:00Z","recurrence":{"frequency":"Week","interval":2,"schedule":{"weekDays":["Monday","Saturday"]}}}`,
			[]string{"2026-06-06T10:00:00Z", "2026-06-15T10:00:00Z", "2026-06-20T10:00:00Z", "2026-06-29T10:00:00Z"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, runs(t, defOf(t, tc.props), now, now, len(tc.want)))
		})
	}
}

func TestAbsoluteFrequenciesWithFilters(t *testing.T) {
	now := at(t, "2026-06-01T00:00:00Z")
	cases := []struct {
		name, props string
		want        []string
	}{
		{"minute: hours and minutes filter the instants", `{"startTime":"2026-06-01T00:00:00Z","recurrence":{"frequency":"Minute","interval":20,"schedule":{"hours":[1,3],"minutes":[0,40]}}}`,
			[]string{"2026-06-01T01:00:00Z", "2026-06-01T01:40:00Z", "2026-06-01T03:00:00Z", "2026-06-01T03:40:00Z", "2026-06-02T01:00:00Z"}},
		{"minute: a filter the steps reach only every few days", `{"startTime":"2026-06-01T00:00:00Z","recurrence":{"frequency":"Minute","interval":7,"schedule":{"hours":[0],"minutes":[0]}}}`,
			[]string{"2026-06-01T00:00:00Z", "2026-06-08T00:00:00Z", "2026-06-15T00:00:00Z"}},
		{"hour: minutes expand each hour, hours filter", `{"startTime":"2026-06-01T00:10:00Z","recurrence":{"frequency":"Hour","interval":3,"schedule":{"minutes":[5,50],"hours":[6,7]}}}`,
			[]string{"2026-06-01T06:05:00Z", "2026-06-01T06:50:00Z", "2026-06-02T06:05:00Z"}},
		{"hour: minutes before A's minute in A's hour are skipped", `{"startTime":"2026-06-01T00:10:00Z","recurrence":{"frequency":"Hour","interval":1,"schedule":{"minutes":[5,50]}}}`,
			[]string{"2026-06-01T00:50:00Z", "2026-06-01T01:05:00Z", "2026-06-01T01:50:00Z"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, runs(t, defOf(t, tc.props), now, now, len(tc.want)))
		})
	}
}

func TestNextCostDoesNotDependOnStartDistance(t *testing.T) {
	// Not a timing assertion: a rule anchored in 1970 answers for 2026 with
	// the same values as its arithmetic says, proving the jump is exact.
	def := defOf(t, `{"startTime":"1970-01-01T00:00:00Z","recurrence":{"frequency":"Minute","interval":7}}`)
	r, err := recurrence.Compile(def, at(t, "2026-01-01T00:00:00Z"))
	require.NoError(t, err)
	after := at(t, "2026-06-01T00:00:00Z")
	next, ok := r.Next(after)
	require.True(t, ok)
	require.Zero(t, next.Unix()%(7*60))
	require.True(t, next.After(after) && next.Sub(after) <= 7*time.Minute)
}

func TestShortestGapLooksAtOccurrencesNotFrequency(t *testing.T) {
	now := at(t, "2026-06-01T00:00:00Z")
	for props, want := range map[string]time.Duration{
		`{"startTime":"2026-06-01T00:00:00Z","recurrence":{"frequency":"Day","schedule":{"hours":[5],"minutes":[15,45]}}}`:    30 * time.Minute,
		`{"startTime":"2026-06-01T00:00:00Z","recurrence":{"frequency":"Hour","interval":3}}`:                                 3 * time.Hour,
		`{"startTime":"2026-06-01T00:00:00Z","recurrence":{"frequency":"Week","schedule":{"weekDays":["monday","tuesday"]}}}`: 24 * time.Hour,
		`{"startTime":"2026-06-01T00:00:00Z","recurrence":{"frequency":"Month","schedule":{"monthDays":[1,-1]}}}`:             24 * time.Hour,
	} {
		r, err := recurrence.Compile(defOf(t, props), now)
		require.NoError(t, err)
		gap, ok := r.ShortestGap(now, 500)
		require.True(t, ok, props)
		require.Equal(t, want, gap, props)
	}
	r, err := recurrence.Compile(defOf(t, `{"startTime":"2026-06-01T00:00:00Z"}`), now)
	require.NoError(t, err)
	_, ok := r.ShortestGap(now, 500)
	require.False(t, ok, "a one-time job has no gap")
}
