package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// A table's recurrence column names an rrule or a list of rules, not
// "once": the job runs at their times.
func TestRecurrenceSummaryNamesRRuleAndRules(t *testing.T) {
	for in, want := range map[string]string{
		`{"rrule":"DTSTART;TZID=Europe/Berlin:20261201T090000\nRRULE:FREQ=MONTHLY;BYSETPOS=3;BYDAY=MO,TU,WE,TH,FR","timeZone":"Europe/Berlin"}`: "rrule DTSTART;TZID=Europe/Berlin:20261201T090000 / RRULE:FREQ=MONTHLY;BYSETPOS=3;BYDAY=MO,TU,WE,TH,FR; Europe/Berlin",
		`{"rules":[{"cron":"0 9 * * *"},{"rrule":"FREQ=WEEKLY;BYDAY=SA"}],"count":5}`:                                                           "2 rules; 5 times",
	} {
		var r recurrenceShape
		require.NoError(t, json.Unmarshal([]byte(in), &r))
		require.Equal(t, want, r.summary())
	}
}
