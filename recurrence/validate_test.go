package recurrence_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/recurrence"
)

func TestParseAcceptsTheSeedsSloppyForms(t *testing.T) {
	def := defOf(t, `{"startTime":"2012-08-04T00:00Z","recurrence":{"frequency":"WEEK","interval":1,
		"schedule":{"weekDays":["Monday","wednesday","FRIDAY"],"hours":[10,22],
		"monthlyOccurrences":null},"count":10,"endTime":"2012-11-04"}}`)
	require.Equal(t, time.Date(2012, 8, 4, 0, 0, 0, 0, time.UTC), def.StartTime.In(time.UTC))
	require.False(t, def.Recurrence.EndTime.DateOnly(), "a date-only endTime becomes the instant it names")

	out, err := json.Marshal(def)
	require.NoError(t, err)
	require.JSONEq(t, `{"startTime":"2012-08-04T00:00:00Z","recurrence":{"frequency":"week","interval":1,
		"schedule":{"weekDays":["monday","wednesday","friday"],"hours":[10,22]},"count":10,"endTime":"2012-11-04T00:00:00Z"}}`, string(out))

	berlin := defOf(t, `{"recurrence":{"frequency":"Day","endTime":"2012-11-04","timeZone":"Europe/Berlin"}}`)
	out, err = json.Marshal(berlin.Recurrence.EndTime)
	require.NoError(t, err)
	require.Equal(t, `"2012-11-03T23:00:00Z"`, string(out), "midnight in the zone, written as RFC 3339 (the API's date-time format)")
}

func TestParseDateTimeForms(t *testing.T) {
	want := time.Date(2015, 4, 7, 14, 0, 0, 0, time.UTC)
	for _, s := range []string{
		"2015-04-07T14:00Z", "2015-04-07T14:00:00Z", "2015-04-07T14:00:00.000Z", "2015-04-07T06:00:00-08:00",
		"2015-04-07T06:00-08:00", "2015-04-07T14:00:00", "2015-04-07T14:00", "2015-04-07t14:00:00z",
	} {
		d, err := recurrence.ParseDateTime(s)
		require.NoError(t, err, s)
		require.True(t, want.Equal(d.In(time.UTC)), s)
		require.False(t, d.DateOnly(), s)
	}
	d, err := recurrence.ParseDateTime("2015-04-07T14:00:00.123456789Z")
	require.NoError(t, err)
	require.Equal(t, 123456789, d.In(time.UTC).Nanosecond())

	d, err = recurrence.ParseDateTime("2012-11-04")
	require.NoError(t, err)
	require.True(t, d.DateOnly())
	berlin, err := recurrence.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	require.Equal(t, time.Date(2012, 11, 3, 23, 0, 0, 0, time.UTC), d.In(berlin))
}

func TestDateOnlyEndTimeInAGapIsTheFirstInstantAfterMidnight(t *testing.T) {
	// Santiago springs forward at midnight: 2026-09-06 00:00 does not exist.
	d, err := recurrence.ParseDateTime("2026-09-06")
	require.NoError(t, err)
	loc, err := recurrence.LoadLocation("America/Santiago")
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 9, 6, 4, 0, 0, 0, time.UTC), d.In(loc))
}

func TestValidationErrorsCarryPathAndCode(t *testing.T) {
	tests := []struct {
		name, props, path, code string
	}{
		{"not JSON", `{"recurrence":`, "", recurrence.CodeInvalidJSON},
		{"null is no job", `null`, "", recurrence.CodeInvalidJSON},
		{"empty input is no job", ` `, "", recurrence.CodeInvalidJSON},
		{"an array is no job", `[{}]`, "", recurrence.CodeInvalidJSON},
		{"startTime not a date-time", `{"startTime":"tomorrow"}`, "startTime", recurrence.CodeInvalidDateTime},
		{"startTime not a string", `{"startTime":42}`, "startTime", recurrence.CodeInvalidDateTime},
		{"frequency is required with recurrence", `{"recurrence":{"interval":1}}`, "recurrence.frequency", recurrence.CodeRequired},
		{"frequency unknown", `{"recurrence":{"frequency":"Millisecond"}}`, "recurrence.frequency", recurrence.CodeInvalidFrequency},
		{"frequency not a string", `{"recurrence":{"frequency":5}}`, "recurrence.frequency", recurrence.CodeInvalidValue},
		{"interval zero", `{"recurrence":{"frequency":"Day","interval":0}}`, "recurrence.interval", recurrence.CodeOutOfRange},
		{"interval not an integer", `{"recurrence":{"frequency":"Day","interval":1.5}}`, "recurrence.interval", recurrence.CodeInvalidValue},
		{"interval second max 1000", `{"recurrence":{"frequency":"Second","interval":1001}}`, "recurrence.interval", recurrence.CodeOutOfRange},
		{"second takes no weekDays", `{"recurrence":{"frequency":"Second","schedule":{"weekDays":["Monday"]}}}`, "recurrence.schedule.weekDays", recurrence.CodeNotAllowed},
		{"interval minute max 1000", `{"recurrence":{"frequency":"Minute","interval":1001}}`, "recurrence.interval", recurrence.CodeOutOfRange},
		{"interval hour max 1000", `{"recurrence":{"frequency":"Hour","interval":1001}}`, "recurrence.interval", recurrence.CodeOutOfRange},
		{"interval day max 548", `{"recurrence":{"frequency":"Day","interval":549}}`, "recurrence.interval", recurrence.CodeOutOfRange},
		{"interval week max 78", `{"recurrence":{"frequency":"Week","interval":79}}`, "recurrence.interval", recurrence.CodeOutOfRange},
		{"interval month max 18", `{"recurrence":{"frequency":"Month","interval":19}}`, "recurrence.interval", recurrence.CodeOutOfRange},
		{"interval year max 10", `{"recurrence":{"frequency":"Year","interval":11}}`, "recurrence.interval", recurrence.CodeOutOfRange},
		{"count zero", `{"recurrence":{"frequency":"Day","count":0}}`, "recurrence.count", recurrence.CodeOutOfRange},
		{"endTime not a date-time", `{"recurrence":{"frequency":"Day","endTime":"never"}}`, "recurrence.endTime", recurrence.CodeInvalidDateTime},
		{"endTime before startTime", `{"startTime":"2026-01-02T00:00:00Z","recurrence":{"frequency":"Day","endTime":"2026-01-01T00:00:00Z"}}`, "recurrence.endTime", recurrence.CodeEndBeforeStart},
		{"minutes out of range", `{"recurrence":{"frequency":"Day","schedule":{"minutes":[0,60]}}}`, "recurrence.schedule.minutes[1]", recurrence.CodeOutOfRange},
		{"hours out of range", `{"recurrence":{"frequency":"Day","schedule":{"hours":[-1]}}}`, "recurrence.schedule.hours[0]", recurrence.CodeOutOfRange},
		{"weekDays not a day", `{"recurrence":{"frequency":"Week","schedule":{"weekDays":["Monday","Funday"]}}}`, "recurrence.schedule.weekDays[1]", recurrence.CodeInvalidValue},
		{"weekDays at most 7", `{"recurrence":{"frequency":"Week","schedule":{"weekDays":["monday","tuesday","wednesday","thursday","friday","saturday","sunday","monday"]}}}`, "recurrence.schedule.weekDays", recurrence.CodeTooManyWeekDays},
		{"weekDays only with Week", `{"recurrence":{"frequency":"Day","schedule":{"weekDays":["monday"]}}}`, "recurrence.schedule.weekDays", recurrence.CodeNotAllowed},
		{"monthDays only with Month", `{"recurrence":{"frequency":"Week","schedule":{"monthDays":[1]}}}`, "recurrence.schedule.monthDays", recurrence.CodeNotAllowed},
		{"monthlyOccurrences only with Month", `{"recurrence":{"frequency":"Year","schedule":{"monthlyOccurrences":[{"day":"monday"}]}}}`, "recurrence.schedule.monthlyOccurrences", recurrence.CodeNotAllowed},
		{"monthDays zero", `{"recurrence":{"frequency":"Month","schedule":{"monthDays":[0]}}}`, "recurrence.schedule.monthDays[0]", recurrence.CodeOutOfRange},
		{"monthDays below -31", `{"recurrence":{"frequency":"Month","schedule":{"monthDays":[-32]}}}`, "recurrence.schedule.monthDays[0]", recurrence.CodeOutOfRange},
		{"monthlyOccurrences day required", `{"recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"occurrence":1}]}}}`, "recurrence.schedule.monthlyOccurrences[0].day", recurrence.CodeRequired},
		{"monthlyOccurrences occurrence out of range", `{"recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"friday","occurrence":6}]}}}`, "recurrence.schedule.monthlyOccurrences[0].occurrence", recurrence.CodeOutOfRange},
		{"monthlyOccurrences occurrence zero", `{"recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"friday","occurrence":0}]}}}`, "recurrence.schedule.monthlyOccurrences[0].occurrence", recurrence.CodeOutOfRange},
		{"unknown time zone", `{"recurrence":{"frequency":"Day","timeZone":"Mars/Olympus"}}`, "recurrence.timeZone", recurrence.CodeUnknownTimeZone},
		{"time zone Local is not accepted", `{"recurrence":{"frequency":"Day","timeZone":"Local"}}`, "recurrence.timeZone", recurrence.CodeUnknownTimeZone},
		{"misspelt schedule field", `{"recurrence":{"frequency":"Day","schedule":{"minute":[5]}}}`, "recurrence.schedule.minute", recurrence.CodeUnknownProperty},
		{"misspelt recurrence field", `{"recurrence":{"frequency":"Day","intervall":5}}`, "recurrence.intervall", recurrence.CodeUnknownProperty},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := recurrence.Parse([]byte(tc.props))
			var ve *recurrence.ValidationError
			require.True(t, errors.As(err, &ve), "want a ValidationError, got %v", err)
			require.Equal(t, tc.path, ve.Path, ve.Error())
			require.Equal(t, tc.code, ve.Code, ve.Error())
			require.NotEmpty(t, ve.Message)
		})
	}
}

func TestRulesThatNeverOccurAreRejected(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, props := range []string{
		// The example of docs/recurrence.md: day 30 every 12 months from February.
		`{"startTime":"2026-02-01T00:00:00Z","recurrence":{"frequency":"Month","interval":12,"schedule":{"monthDays":[30]}}}`,
		`{"startTime":"2026-04-01T00:00:00Z","recurrence":{"frequency":"Month","interval":12,"schedule":{"monthDays":[31,-31]}}}`,
		// Every 60 minutes from :05 never lands on :10 in UTC.
		`{"startTime":"2026-01-01T00:05:00Z","recurrence":{"frequency":"Minute","interval":60,"schedule":{"minutes":[10]}}}`,
		// Every 24 hours from 01:00 never reaches hour 2.
		`{"startTime":"2026-01-01T01:00:00Z","recurrence":{"frequency":"Hour","interval":24,"schedule":{"hours":[2]}}}`,
	} {
		def := defOf(t, props)
		_, err := recurrence.Compile(def, created)
		var ve *recurrence.ValidationError
		require.True(t, errors.As(err, &ve), props)
		require.Equal(t, recurrence.CodeNeverOccurs, ve.Code)
	}
	// Five Mondays in February happen only in leap years that start it on
	// a Monday (2044): rare, but not never.
	def := defOf(t, `{"startTime":"2026-02-01T00:00:00Z","recurrence":{"frequency":"Month","interval":12,"schedule":{"monthlyOccurrences":[{"day":"monday","occurrence":5}]}}}`)
	require.Equal(t, []string{"2044-02-29T00:00:00Z", "2072-02-29T00:00:00Z"}, runs(t, def, created, created, 2))
	t.Run("a 30-minute DST shift can make a minute filter reachable", func(t *testing.T) {
		// In Lord Howe, every 60 minutes from :05 reads :35 during DST.
		def := defOf(t, `{"startTime":"2026-06-01T00:05:00+10:30","recurrence":{"frequency":"Minute","interval":60,"schedule":{"minutes":[35]},"timeZone":"Australia/Lord_Howe"}}`)
		start := at(t, "2026-06-01T00:05:00+10:30")
		require.Equal(t, []string{"2026-10-03T15:35:00Z", "2026-10-03T16:35:00Z"}, runs(t, def, start, start, 2))
	})
}

func TestValidationMessagesNameTheBadValue(t *testing.T) {
	for props, want := range map[string]string{
		`{"recurrence":{"frequency":"Day","timeZone":"Mars/Olympus"}}`:    `recurrence.timeZone: "Mars/Olympus" is not a time zone`,
		`{"startTime":"2015-13-01"}`:                                      `startTime: must be an ISO 8601 date-time such as 2015-04-07T14:00:00Z or a date such as 2015-04-07, not "2015-13-01"`,
		`{"startTime":"0000-01-01T00:00:00+01:00"}`:                       `startTime: must be an ISO 8601 date-time such as 2015-04-07T14:00:00Z or a date such as 2015-04-07, not "0000-01-01T00:00:00+01:00"`,
		`{"recurrence":{"frequency":"Day","interval":600}}`:               `recurrence.interval: must be between 1 and 548 for frequency Day, not 600`,
		`{"recurrence":{"frequency":"day","schedule":{"monthDays":[1]}}}`: `recurrence.schedule.monthDays: can be given only with frequency Month, not Day`,
	} {
		_, err := recurrence.Parse([]byte(props))
		require.ErrorContains(t, err, want)
	}
}

func TestValidationErrorWithPrefix(t *testing.T) {
	_, err := recurrence.Parse([]byte(`{"recurrence":{"frequency":"Day","interval":0}}`))
	var ve *recurrence.ValidationError
	require.True(t, errors.As(err, &ve))
	require.Equal(t, "properties.recurrence.interval", ve.WithPrefix("properties").Path)
	require.Equal(t, "recurrence.interval", ve.Path, "WithPrefix must not change the original")
	require.Contains(t, ve.Error(), "recurrence.interval: must be between 1 and 548")
}

func TestCompileLeavesTheCallersDefinitionAlone(t *testing.T) {
	def := recurrence.Definition{Recurrence: &recurrence.Recurrence{
		Frequency: "WEEK",
		Schedule:  &recurrence.Schedule{WeekDays: []recurrence.DayOfWeek{"MONDAY"}},
	}}
	_, err := recurrence.Compile(def, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, recurrence.Frequency("WEEK"), def.Recurrence.Frequency)
	require.Equal(t, recurrence.DayOfWeek("MONDAY"), def.Recurrence.Schedule.WeekDays[0])
}
