package recurrence_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// dstCase is a schedule in a zone and the UTC instants it must give.
type dstCase struct {
	name, zone, frequency, schedule, start string
	want                                   []string
}

func (tc dstCase) run(t *testing.T) {
	t.Helper()
	sched := ""
	if tc.schedule != "" {
		sched = `,"schedule":` + tc.schedule
	}
	def := defOf(t, fmt.Sprintf(`{"startTime":%q,"recurrence":{"frequency":%q,"timeZone":%q%s}}`,
		tc.start, tc.frequency, tc.zone, sched))
	start := at(t, tc.start)
	require.Equal(t, tc.want, runs(t, def, start, start, len(tc.want)))
}

func TestDSTGapRunsAtTheSameOffsetPastTheGap(t *testing.T) {
	for _, tc := range []dstCase{
		{"New York daily 02:30 on the spring-forward day runs at 03:30 EDT", "America/New_York", "Day", "",
			"2026-03-06T02:30:00-05:00",
			[]string{"2026-03-06T07:30:00Z", "2026-03-07T07:30:00Z", "2026-03-08T07:30:00Z", "2026-03-09T06:30:00Z"}},
		{"New York 01:30, 02:30 and 03:30: the gap time and 03:30 are one run", "America/New_York", "Day", `{"hours":[1,2,3],"minutes":[30]}`,
			"2026-03-08T00:00:00-05:00",
			[]string{"2026-03-08T06:30:00Z", "2026-03-08T07:30:00Z", "2026-03-09T05:30:00Z", "2026-03-09T06:30:00Z", "2026-03-09T07:30:00Z"}},
		{"Berlin weekly Sunday 02:15 runs at 03:15 CEST on the gap day", "Europe/Berlin", "Week", "",
			"2026-03-22T02:15:00+01:00",
			[]string{"2026-03-22T01:15:00Z", "2026-03-29T01:15:00Z", "2026-04-05T00:15:00Z"}},
		{"Lord Howe daily 02:15 in the 30-minute gap runs at 02:45 +11", "Australia/Lord_Howe", "Day", "",
			"2026-10-02T02:15:00+10:30",
			[]string{"2026-10-01T15:45:00Z", "2026-10-02T15:45:00Z", "2026-10-03T15:45:00Z", "2026-10-04T15:15:00Z"}},
		{"Lord Howe monthly on the 4th at 02:10 shifts only on the gap day", "Australia/Lord_Howe", "Month", `{"monthDays":[4]}`,
			"2026-09-04T02:10:00+10:30",
			[]string{"2026-09-03T15:40:00Z", "2026-10-03T15:40:00Z", "2026-11-03T15:10:00Z"}},
		{"Sydney monthly first Sunday 02:30 in October's gap runs at 03:30 AEDT", "Australia/Sydney", "Month", `{"monthlyOccurrences":[{"day":"sunday","occurrence":1}]}`,
			"2026-09-06T02:30:00+10:00",
			[]string{"2026-09-05T16:30:00Z", "2026-10-03T16:30:00Z", "2026-10-31T15:30:00Z"}},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestDSTOverlapRunsOnceAtTheFirstInstant(t *testing.T) {
	for _, tc := range []dstCase{
		{"New York daily 01:30 on the fall-back day runs once, in EDT", "America/New_York", "Day", "",
			"2026-10-30T01:30:00-04:00",
			[]string{"2026-10-30T05:30:00Z", "2026-10-31T05:30:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"New York every 30 minutes of the day: the repeated hour runs once", "America/New_York", "Day", `{"minutes":[0,30]}`,
			"2026-11-01T00:00:00-04:00",
			[]string{"2026-11-01T04:00:00Z", "2026-11-01T04:30:00Z", "2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T07:00:00Z", "2026-11-01T07:30:00Z"}},
		{"Berlin weekly Sunday 02:30 on the fall-back day runs in CEST", "Europe/Berlin", "Week", "",
			"2026-10-18T02:30:00+02:00",
			[]string{"2026-10-18T00:30:00Z", "2026-10-25T00:30:00Z", "2026-11-01T01:30:00Z"}},
		{"Lord Howe daily 01:45 in the 30-minute overlap runs once at +11", "Australia/Lord_Howe", "Day", "",
			"2026-04-03T01:45:00+11:00",
			[]string{"2026-04-02T14:45:00Z", "2026-04-03T14:45:00Z", "2026-04-04T14:45:00Z", "2026-04-05T15:15:00Z"}},
		{"Sydney monthly first Sunday 02:30 in April's overlap runs at +11", "Australia/Sydney", "Month", `{"monthlyOccurrences":[{"day":"sunday","occurrence":1}]}`,
			"2026-03-01T02:30:00+11:00",
			[]string{"2026-02-28T15:30:00Z", "2026-04-04T15:30:00Z", "2026-05-02T16:30:00Z"}},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestDSTMinuteAndHourStepInAbsoluteTime(t *testing.T) {
	for _, tc := range []dstCase{
		{"hourly across New York's gap is every 3600 s", "America/New_York", "Hour", "",
			"2026-03-08T00:30:00-05:00",
			[]string{"2026-03-08T05:30:00Z", "2026-03-08T06:30:00Z", "2026-03-08T07:30:00Z", "2026-03-08T08:30:00Z"}},
		{"hourly across Berlin's overlap is every 3600 s", "Europe/Berlin", "Hour", "",
			"2026-10-25T01:00:00+02:00",
			[]string{"2026-10-24T23:00:00Z", "2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"}},
		{"the wall-clock hour filter finds no 02:xx on the gap day", "America/New_York", "Minute", `{"hours":[2]}`,
			"2026-03-07T02:59:00-05:00",
			[]string{"2026-03-07T07:59:00Z", "2026-03-09T06:00:00Z", "2026-03-09T06:01:00Z"}},
		{"the filter passes the repeated hour twice", "America/New_York", "Hour", `{"hours":[1],"minutes":[0]}`,
			"2026-10-31T01:00:00-04:00",
			[]string{"2026-10-31T05:00:00Z", "2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-02T06:00:00Z"}},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestTimeZoneWindowsNames(t *testing.T) {
	for _, tc := range []dstCase{
		{"W. Europe Standard Time is Berlin", "W. Europe Standard Time", "Day", "",
			"2026-03-28T02:30:00+01:00",
			[]string{"2026-03-28T01:30:00Z", "2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"}},
		{"pacific standard time in any case is Los Angeles", "pacific standard time", "Day", `{"hours":[9],"minutes":[0]}`,
			"2026-03-07T00:00:00-08:00",
			[]string{"2026-03-07T17:00:00Z", "2026-03-08T16:00:00Z"}},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestDSTZonesPastTheLastListedTransition(t *testing.T) {
	// Far-future years come from the zone's rule, where Go's zone bounds
	// misbehave near year ends; the engine must neither hang nor drift.
	t.Run("Sydney every 10 years on Dec 30", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2024-12-30T02:59:00+11:00","recurrence":{"frequency":"Year","interval":10,"timeZone":"Australia/Sydney"}}`)
		start := at(t, "2024-12-29T15:59:00Z")
		require.Equal(t, []string{"2024-12-29T15:59:00Z", "2034-12-29T15:59:00Z", "2044-12-29T15:59:00Z", "2054-12-29T15:59:00Z"},
			runs(t, def, start, start, 4))
	})
	for _, tc := range []dstCase{
		{"Los Angeles daily across the 2099/2100 new year", "America/Los_Angeles", "Day", "",
			"2099-12-30T23:30:00-08:00",
			[]string{"2099-12-31T07:30:00Z", "2100-01-01T07:30:00Z", "2100-01-02T07:30:00Z"}},
	} {
		t.Run(tc.name, tc.run)
	}
}
