package recurrence_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/recurrence"
)

// rrulePreview compiles job properties made of startTime (may be empty)
// and a recurrence object, and previews n runs from from.
func rrulePreview(t *testing.T, start, rec string, from time.Time, n int) []string {
	t.Helper()
	js := `{"recurrence":` + rec + `}`
	if start != "" {
		js = fmt.Sprintf(`{"startTime":%q,"recurrence":%s}`, start, rec)
	}
	def, err := recurrence.Parse([]byte(js))
	require.NoError(t, err, js)
	r, err := recurrence.Compile(def, from)
	require.NoError(t, err, js)
	var out []string
	for _, tm := range r.Preview(from, n) {
		out = append(out, tm.Format(time.RFC3339))
	}
	return out
}

// The examples of docs/recurrence.md's RRULE section.
func TestRRuleExamplesOfTheContract(t *testing.T) {
	from := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, start, rec string
		want             []string
	}{
		{"the third business day of each month", "2026-12-01T00:00:00Z",
			`{"rrule":"FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3;BYHOUR=9;BYMINUTE=0;BYSECOND=0","timeZone":"Europe/Berlin"}`,
			[]string{"2026-12-03T08:00:00Z", "2027-01-05T08:00:00Z", "2027-02-03T08:00:00Z", "2027-03-03T08:00:00Z"}},
		{"the last weekday of the quarter", "2026-12-01T00:00:00Z",
			`{"rrule":"FREQ=MONTHLY;BYMONTH=3,6,9,12;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=18;BYMINUTE=0;BYSECOND=0","timeZone":"America/New_York"}`,
			[]string{"2026-12-31T23:00:00Z", "2027-03-31T22:00:00Z", "2027-06-30T22:00:00Z", "2027-09-30T22:00:00Z"}},
		{"the first Monday after the 15th", "2026-12-01T00:00:00Z",
			`{"rrule":"FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=16,17,18,19,20,21,22;BYHOUR=8;BYMINUTE=30;BYSECOND=0"}`,
			[]string{"2026-12-21T08:30:00Z", "2027-01-18T08:30:00Z", "2027-02-22T08:30:00Z", "2027-03-22T08:30:00Z"}},
		{"weekdays at 9:00 and 17:30, Saturdays at 10:00", "2026-12-04T12:00:00Z",
			`{"timeZone":"Europe/Berlin","rules":[
				{"frequency":"Week","schedule":{"weekDays":["Monday","Tuesday","Wednesday","Thursday","Friday"],"hours":[9],"minutes":[0]}},
				{"cron":"30 17 * * 1-5"},
				{"rrule":"FREQ=WEEKLY;BYDAY=SA;BYHOUR=10;BYMINUTE=0;BYSECOND=0"}]}`,
			[]string{"2026-12-04T16:30:00Z", "2026-12-05T09:00:00Z", "2026-12-07T08:00:00Z", "2026-12-07T16:30:00Z", "2026-12-08T08:00:00Z"}},
		{"the Monday of ISO weeks 1 and 27", "2026-12-01T00:00:00Z",
			`{"rrule":"FREQ=YEARLY;BYWEEKNO=1,27;BYDAY=MO"}`,
			[]string{"2027-01-04T00:00:00Z", "2027-07-05T00:00:00Z", "2028-01-03T00:00:00Z"}},
		{"every 15 seconds", "2026-12-01T00:00:00Z",
			`{"rrule":"FREQ=SECONDLY;INTERVAL=15"}`,
			[]string{"2026-12-01T00:00:00Z", "2026-12-01T00:00:15Z", "2026-12-01T00:00:30Z"}},
		{"the third business day, EXDATE and recur's exclusions", "",
			`{"rrule":"DTSTART;TZID=Europe/Berlin:20261201T090000\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3\nEXDATE;TZID=Europe/Berlin:20270105T090000","exclusions":[{"date":"2027-02-03"}]}`,
			[]string{"2026-12-03T08:00:00Z", "2027-03-03T08:00:00Z", "2027-04-05T07:00:00Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, rrulePreview(t, tc.start, tc.rec, from, len(tc.want)))
		})
	}
}

// An instant two rules of a list reach runs once; count applies to the
// union.
func TestRulesUnionRunsAnInstantOnceAndCountsTheUnion(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	got := rrulePreview(t, "2026-01-01T00:00:00Z",
		`{"count":5,"rules":[{"frequency":"Day","schedule":{"hours":[9],"minutes":[0]}},{"cron":"0 9,12 * * *"},{"rrule":"FREQ=DAILY;BYHOUR=9,15;BYMINUTE=0;BYSECOND=0"}]}`, from, 10)
	require.Equal(t, []string{"2026-01-01T09:00:00Z", "2026-01-01T12:00:00Z", "2026-01-01T15:00:00Z",
		"2026-01-02T09:00:00Z", "2026-01-02T12:00:00Z"}, got)
}

// RFC 5545 ignores an instance at a wall-clock time the clocks skip, and
// does not count it; the job's DST policy decides instead where it is
// given.
func TestRRuleSkipsNonexistentTimesUnlessTheDSTPolicySaysOtherwise(t *testing.T) {
	from := time.Date(2026, 3, 27, 0, 0, 0, 0, time.UTC)
	rule := `"rrule":"FREQ=DAILY;BYHOUR=2;BYMINUTE=30;BYSECOND=0;COUNT=3","timeZone":"Europe/Berlin"`
	require.Equal(t, []string{"2026-03-27T01:30:00Z", "2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z"},
		rrulePreview(t, "2026-03-27T00:00:00Z", "{"+rule+"}", from, 5), "2026-03-29T02:30 does not exist: ignored, not counted")
	require.Equal(t, []string{"2026-03-27T01:30:00Z", "2026-03-28T01:30:00Z", "2026-03-29T01:30:00Z"},
		rrulePreview(t, "2026-03-27T00:00:00Z", `{`+rule+`,"dst":{"gap":"shiftForward"}}`, from, 5), "shifted forward, and counted")
	require.Equal(t, []string{"2026-03-27T01:30:00Z", "2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z"},
		rrulePreview(t, "2026-03-27T00:00:00Z", `{`+rule+`,"dst":{"gap":"atTransition"}}`, from, 5))

	// A repeated time runs at its first instant (RFC 5545 3.3.5), or as
	// the policy says.
	fall := time.Date(2026, 10, 24, 0, 0, 0, 0, time.UTC)
	rep := `"rrule":"FREQ=DAILY;BYHOUR=2;BYMINUTE=30;BYSECOND=0;COUNT=2","timeZone":"Europe/Berlin"`
	require.Equal(t, []string{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z"}, rrulePreview(t, "2026-10-24T00:00:00Z", "{"+rep+"}", fall, 5))
	require.Equal(t, []string{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"},
		rrulePreview(t, "2026-10-24T00:00:00Z", `{`+rep+`,"dst":{"repeat":"both"}}`, fall, 5), "one instance, two runs, counted once")
}

// A rule whose instants are rare (a Monday the 29th of February) is found
// by jumping over the years that cannot hold it, and one that has none
// is refused by a bounded search.
func TestRRuleRareAndNeverOccurring(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var got []string
	guardHang(10*time.Second, func() string { return "leap Mondays" }, func() {
		got = rrulePreview(t, "2026-01-01T08:00:00Z", `{"rrule":"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO"}`, from, 3)
	})
	require.Equal(t, []string{"2044-02-29T08:00:00Z", "2072-02-29T08:00:00Z", "2112-02-29T08:00:00Z"}, got)
	for _, rec := range []string{
		`{"rrule":"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"}`,
		`{"rrule":"FREQ=MONTHLY;INTERVAL=12;BYMONTHDAY=31;BYMONTH=4"}`,
		`{"rrule":"FREQ=MINUTELY;INTERVAL=30;BYMINUTE=15"}`,
		`{"rrule":"FREQ=HOURLY;BYMINUTE=0;BYSECOND=0;BYSETPOS=2"}`,
		`{"rrule":"FREQ=DAILY;UNTIL=20250101T000000Z"}`,
		`{"rules":[{"cron":"0 9 * * *"},{"rrule":"FREQ=YEARLY;BYYEARDAY=366;BYMONTH=1"}]}`,
	} {
		def, err := recurrence.Parse([]byte(`{"startTime":"2026-01-01T00:00:00Z","recurrence":` + rec + `}`))
		require.NoError(t, err)
		guardHang(10*time.Second, func() string { return rec }, func() { _, err = recurrence.Compile(def, from) })
		var ve *recurrence.ValidationError
		require.True(t, errors.As(err, &ve), rec)
		require.Equal(t, recurrence.CodeNeverOccurs, ve.Code, rec)
		require.True(t, strings.HasPrefix(ve.Path, "recurrence.rr") || strings.HasPrefix(ve.Path, "recurrence.rules[1]"), ve.Path)
	}
}

// A DTSTART is the rule's start and zone: without startTime and timeZone
// it gives both; with them, they must agree.
func TestRRuleDTStartIsTheAnchorAndZone(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	def, err := recurrence.Parse([]byte(`{"recurrence":{"rrule":"DTSTART;TZID=America/New_York:20261201T090000\nRRULE:FREQ=DAILY;COUNT=2"}}`))
	require.NoError(t, err)
	r, err := recurrence.Compile(def, from)
	require.NoError(t, err)
	require.Equal(t, "America/New_York", r.Location().String())
	require.Equal(t, []time.Time{time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC), time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)}, r.Preview(from, 5))

	// Without DTSTART, startTime (or creation) is the start, as for cron.
	require.Equal(t, []string{"2026-12-01T07:15:00Z", "2026-12-02T07:15:00Z"},
		rrulePreview(t, "2026-12-01T07:15:00Z", `{"rrule":"FREQ=DAILY"}`, from, 2))
	require.Equal(t, []string{"2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z"},
		rrulePreview(t, "", `{"rrule":"FREQ=DAILY"}`, from, 2))

	for _, tc := range []struct{ js, msg string }{
		{`{"startTime":"2026-12-01T09:00:00Z","recurrence":{"rrule":"DTSTART;TZID=America/New_York:20261201T090000\nRRULE:FREQ=DAILY"}}`,
			"recurrence.rrule: DTSTART 2026-12-01T09:00:00 in America/New_York (2026-12-01T14:00:00Z) is not startTime 2026-12-01T09:00:00Z: give one of them, or both the same"},
		{`{"recurrence":{"timeZone":"Europe/Berlin","rrule":"DTSTART;TZID=America/New_York:20261201T090000\nRRULE:FREQ=DAILY"}}`,
			"recurrence.rrule: DTSTART;TZID=America/New_York is not recurrence.timeZone Europe/Berlin: give the zone once, or the same in both"},
		{`{"recurrence":{"timeZone":"Europe/Berlin","rrule":"DTSTART:20261201T090000Z\nRRULE:FREQ=DAILY"}}`,
			"recurrence.rrule: DTSTART in UTC (Z) is not read in recurrence.timeZone Europe/Berlin: give a local DTSTART, or DTSTART;TZID=Europe/Berlin"},
		{`{"recurrence":{"rules":[{"rrule":"DTSTART;TZID=America/New_York:20261201T090000\nRRULE:FREQ=DAILY"},{"rrule":"DTSTART;TZID=Europe/Paris:20261201T090000\nRRULE:FREQ=DAILY"}]}}`,
			"recurrence.rules[1].rrule: DTSTART;TZID=Europe/Paris is not the zone of recurrence.rules[0].rrule (America/New_York): give recurrence.timeZone"},
	} {
		_, err := recurrence.Parse([]byte(tc.js))
		require.EqualError(t, err, tc.msg)
	}
	// The same instant given twice is fine.
	_, err = recurrence.Parse([]byte(`{"startTime":"2026-12-01T14:00:00Z","recurrence":{"rrule":"DTSTART;TZID=America/New_York:20261201T090000\nRRULE:FREQ=DAILY"}}`))
	require.NoError(t, err)
}

// Each parse error names the part and its position (characters of the
// rrule text from 1), and what is wrong.
func TestRRuleErrorsNameThePartAndPosition(t *testing.T) {
	for _, tc := range []struct{ rec, msg string }{
		{`{"rrule":"FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=0"}`, `recurrence.rrule: BYSETPOS=0 at character 35: BYSETPOS values are -366..-1 or 1..366`},
		{`{"rrule":"FREQ=MONTHLY;BYMONTHDAY=1,0,5"}`, `recurrence.rrule: BYMONTHDAY=1,0,5 at character 14: "0": BYMONTHDAY values are -31..-1 or 1..31`},
		{`{"rrule":"FREQ=FORTNIGHTLY"}`, `recurrence.rrule: FREQ=FORTNIGHTLY at character 1: FREQ is one of SECONDLY, MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY, YEARLY`},
		{`{"rrule":"FREQ=DAILY;BYHOURS=9"}`, `recurrence.rrule: BYHOURS=9 at character 12: is not a rule part of RFC 5545; did you mean BYHOUR?`},
		{`{"rrule":"FREQ=DAILY;BYHOUR=24"}`, `recurrence.rrule: BYHOUR=24 at character 12: BYHOUR values are 0..23`},
		{`{"rrule":"FREQ=DAILY;INTERVAL=0"}`, `recurrence.rrule: INTERVAL=0 at character 12: INTERVAL is a whole number from 1 to 1000`},
		{`{"rrule":"FREQ=DAILY;COUNT=3;UNTIL=20270101T000000Z"}`, `recurrence.rrule: "FREQ=DAILY;COUNT=3;UNTIL=20270101T000000Z" at character 1: COUNT and UNTIL cannot both be given (RFC 5545)`},
		{`{"rrule":"FREQ=DAILY;UNTIL=2027-01-01"}`, `recurrence.rrule: UNTIL=2027-01-01 at character 12: UNTIL is not a date (20260131) or date-time (20260131T090000, 20260131T090000Z)`},
		{`{"rrule":"FREQ=WEEKLY;BYDAY=1MO"}`, `recurrence.rrule: "FREQ=WEEKLY;BYDAY=1MO" at character 1: BYDAY with an ordinal (1MO, -1FR) is allowed only with FREQ=MONTHLY or YEARLY (RFC 5545)`},
		{`{"rrule":"FREQ=MONTHLY;BYDAY=XX"}`, `recurrence.rrule: BYDAY=XX at character 14: "XX" is not a weekday: use MO, TU, WE, TH, FR, SA, SU, with an optional ordinal (1MO, -1FR) from -53 to 53`},
		{`{"rrule":"FREQ=MONTHLY;BYWEEKNO=1"}`, `recurrence.rrule: "FREQ=MONTHLY;BYWEEKNO=1" at character 1: BYWEEKNO is allowed only with FREQ=YEARLY (RFC 5545)`},
		{`{"rrule":"FREQ=DAILY;BYSETPOS=1"}`, `recurrence.rrule: "FREQ=DAILY;BYSETPOS=1" at character 1: BYSETPOS needs another BYxxx part to pick from (RFC 5545)`},
		{`{"rrule":"FREQ=DAILY;FREQ=WEEKLY"}`, `recurrence.rrule: FREQ=WEEKLY at character 12: FREQ is given twice`},
		{`{"rrule":"BYDAY=MO"}`, `recurrence.rrule: "BYDAY=MO" at character 1: FREQ is required: one of SECONDLY, MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY, YEARLY`},
		{`{"rrule":"RRULE:FREQ=DAILY\nEXDATE;TZID=Mars/Base:20270101T000000"}`, `recurrence.rrule: TZID=Mars/Base at character 25: is not a time zone: use an IANA name such as Europe/Berlin`},
		{`{"rrule":"RRULE:FREQ=DAILY\nEXDATE:20270101T0000"}`, `recurrence.rrule: EXDATE:20270101T0000 at character 25: is not a date (20260131) or date-time (20260131T090000, 20260131T090000Z)`},
		{`{"rrule":"RRULE:FREQ=DAILY\nVEVENT:X"}`, `recurrence.rrule: "VEVENT" at character 18: is not a line of an rrule: use DTSTART, RRULE, RDATE or EXDATE`},
		{`{"rrule":"RRULE:FREQ=DAILY\nRDATE;VALUE=PERIOD:20270101T000000Z/PT1H"}`, `recurrence.rrule: VALUE=PERIOD at character 24: RDATE takes VALUE=DATE or VALUE=DATE-TIME`},
		{`{"rrule":"FREQ=DAILY","cron":"0 9 * * *"}`, `recurrence.cron: is not allowed with recurrence.rrule: give either rrule or frequency`},
		{`{"rrule":"FREQ=DAILY","frequency":"Day"}`, `recurrence.frequency: is not allowed with recurrence.rrule: give either rrule or frequency`},
		{`{"rules":[{"cron":"0 9 * * *"}],"rrule":"FREQ=DAILY"}`, `recurrence.rrule: is not allowed with recurrence.rules: put the rrule in the list`},
		{`{"rules":[{"cron":"0 9 * * *"}],"frequency":"Day"}`, `recurrence.frequency: is not allowed with recurrence.rules: give the rule inside rules`},
		{`{"rules":[]}`, `recurrence.rules: has 0 rules; give 1 to 10`},
		{`{"rules":[` + strings.Repeat(`{"cron":"0 9 * * *"},`, 10) + `{"cron":"0 9 * * *"}]}`, `recurrence.rules: has 11 rules; give 1 to 10`},
		{`{"rules":[{"cron":"0 9 * * *","rrule":"FREQ=DAILY"}]}`, `recurrence.rules[0]: is one rule: give frequency (with interval and schedule), or cron, or rrule; not several`},
		{`{"rules":[{}]}`, `recurrence.rules[0]: is one rule: give frequency (with interval and schedule), or cron, or rrule; not none`},
		{`{"rules":[{"cron":"0 9 * * *"},{"frequency":"Day","interval":600}]}`, `recurrence.rules[1].interval: must be between 1 and 548 for frequency Day, not 600`},
		{`{"rules":[{"frequency":"Day","schedule":{"weekDays":["Monday"]}}]}`, `recurrence.rules[0].schedule.weekDays: can be given only with frequency Week, not Day`},
		{`{"rules":[{"cron":"0 25 * * *"}]}`, `recurrence.rules[0].cron: hour field: 25 is out of 0-23`},
		{`{"rules":[{"rrule":"FREQ=DAILY;BYSECOND=61"}]}`, `recurrence.rules[0].rrule: BYSECOND=61 at character 12: BYSECOND values are 0..60`},
		{`{"rules":[{"frequency":"Day","colour":"red"}]}`, `recurrence.rules[0].colour: is not a property of rules (known: frequency, interval, schedule, cron, rrule)`},
	} {
		_, err := recurrence.Parse([]byte(`{"recurrence":` + tc.rec + `}`))
		require.EqualError(t, err, tc.msg, tc.rec)
		var ve *recurrence.ValidationError
		require.True(t, errors.As(err, &ve))
	}
}

// Rule.Shift reports the runs of an rrule a transition touched, as it
// does for Azure's fields.
func TestRRuleShiftsArePreviewed(t *testing.T) {
	def, err := recurrence.Parse([]byte(`{"startTime":"2026-03-28T00:00:00Z","recurrence":{"rrule":"FREQ=DAILY;BYHOUR=2;BYMINUTE=30;BYSECOND=0","timeZone":"Europe/Berlin","dst":{"gap":"shiftForward"}}}`))
	require.NoError(t, err)
	r, err := recurrence.Compile(def, time.Date(2026, 3, 27, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	times := r.Preview(time.Date(2026, 3, 27, 0, 0, 0, 0, time.UTC), 3)
	require.Equal(t, []recurrence.Shifted{{Time: time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC),
		Shift: recurrence.Shift{Wall: "2026-03-29T02:30:00", Kind: recurrence.ShiftMoved}}}, r.Shifts(times))
}

// COUNT bounds an RRULE whose instances are sparse for its steps (one
// second in 604,800 is on the list): the count-th is its last however
// much searching the count took.
func TestRRuleCountBoundsASparseRule(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC) // a Monday
	def, err := recurrence.Parse([]byte(`{"startTime":"2026-01-05T00:00:00Z","recurrence":{"rrule":"FREQ=SECONDLY;INTERVAL=7;BYHOUR=0;BYMINUTE=0;BYSECOND=0;COUNT=10000"}}`))
	require.NoError(t, err)
	var r *recurrence.Rule
	guardHang(30*time.Second, func() string { return "COUNT=10000" }, func() { r, err = recurrence.Compile(def, start) })
	require.NoError(t, err)
	last := start.Add(9999 * 7 * 24 * time.Hour)
	got, ok := r.Next(last.Add(-time.Second))
	require.True(t, ok)
	require.Equal(t, last, got, "the 10,000th Monday at midnight")
	_, ok = r.Next(last)
	require.False(t, ok, "no 10,001st")
}
