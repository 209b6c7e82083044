package jobs_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// A recurrence that names rrule or rules is stored and shown as it was
// given (GET shows it as PUT), and its occurrences are the union of its
// rules'.
func TestRRuleAndRulesRoundTripThroughTheJob(t *testing.T) {
	created := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for _, rec := range []string{
		`{"rrule":"DTSTART;TZID=Europe/Berlin:20261201T090000\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3\nEXDATE;TZID=Europe/Berlin:20270105T090000","count":10,"timeZone":"Europe/Berlin","exclusions":[{"date":"2027-02-03"}]}`,
		`{"rules":[{"frequency":"week","interval":1,"schedule":{"hours":[9],"minutes":[0],"weekDays":["monday","tuesday","wednesday","thursday","friday"]}},{"cron":"30 17 * * 1-5"},{"rrule":"FREQ=WEEKLY;BYDAY=SA;BYHOUR=10;BYMINUTE=0;BYSECOND=0"}],"timeZone":"Europe/Berlin","dst":{"gap":"skip","repeat":"first"}}`,
	} {
		body := `{"properties":{"action":{"type":"Http","request":{"uri":"https://example.com/","method":"POST"}},"recurrence":` + rec + `}}`
		var j jobs.Job
		require.NoError(t, json.Unmarshal([]byte(body), &j))
		require.NoError(t, j.AcceptStored(summaryKey, created))
		out, err := json.Marshal(j.Properties.Recurrence)
		require.NoError(t, err)
		require.JSONEq(t, rec, string(out), "the recurrence comes back as it was given")

		var again jobs.Job
		stored, err := json.Marshal(j)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(stored, &again))
		require.NoError(t, again.AcceptStored(summaryKey, created), "a stored job is accepted again")
		require.Equal(t, j.Properties.Schedule().Recurrence, again.Properties.Schedule().Recurrence)
	}
}

// The catch-up window of an rrule or a list of rules defaults to its
// shortest gap, as a cron's does.
func TestCatchUpOfRRuleAndRulesIsTheirShortestGap(t *testing.T) {
	for _, tc := range []struct {
		rec  string
		want time.Duration
	}{
		{`{"rrule":"FREQ=HOURLY;INTERVAL=3"}`, 3 * time.Hour},
		{`{"rrule":"FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3;BYHOUR=9;BYMINUTE=0;BYSECOND=0"}`, 28 * 24 * time.Hour},
		{`{"rules":[{"cron":"0 9 * * *"},{"rrule":"FREQ=DAILY;BYHOUR=17;BYMINUTE=30;BYSECOND=0"}]}`, 8*time.Hour + 30*time.Minute},
	} {
		var p jobs.Properties
		require.NoError(t, json.Unmarshal([]byte(`{"recurrence":`+tc.rec+`}`), &p))
		require.Equal(t, tc.want, p.CatchUp(), tc.rec)
	}
}
