package jobs_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

var summaryKey = jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "job1"}

// normalized is a job body as the API gets it, normalized as the API does.
func normalized(t *testing.T, body string) jobs.Job {
	t.Helper()
	var j jobs.Job
	require.NoError(t, json.Unmarshal([]byte(body), &j))
	require.NoError(t, j.AcceptStored(summaryKey, time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)))
	return j
}

func TestJobSummary(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"every 5 minutes", `{"properties":{"action":{"type":"Http","request":{"uri":"https://example.com/hook","method":"post"}},
			"recurrence":{"frequency":"Minute","interval":5}}}`,
			"job coll1/job1: every 5 minutes → POST https://example.com/hook"},
		{"one-time", `{"properties":{"startTime":"2026-12-01T08:00:00Z","action":{"type":"Https","request":{"uri":"https://example.com/a/b","method":"GET"}}}}`,
			"job coll1/job1: once at 2026-12-01T08:00:00Z → GET https://example.com/a/b"},
		{"schedule, zone, count, end", `{"properties":{"action":{"type":"Http","request":{"uri":"http://h:8080/x","method":"PUT"}},
			"recurrence":{"frequency":"Week","schedule":{"weekDays":["Monday","friday"],"hours":[2],"minutes":[30]},
			"timeZone":"Europe/Berlin","count":10,"endTime":"2027-01-01T00:00:00Z"}}}`,
			"job coll1/job1: every week (minutes 30, hours 2, weekDays monday,friday) in Europe/Berlin, 10 times, until 2027-01-01T00:00:00Z → PUT http://h:8080/x"},
		{"cron with exclusions", `{"properties":{"action":{"type":"Http","request":{"uri":"https://example.com/","method":"POST"}},
			"recurrence":{"cron":"0 9 * * MON-FRI","timeZone":"Europe/Berlin","exclusions":[{"date":"2026-12-25"}]}}}`,
			"job coll1/job1: cron 0 9 * * MON-FRI in Europe/Berlin, except 1 exclusion(s) → POST https://example.com/"},
		{"rrule", `{"properties":{"action":{"type":"Http","request":{"uri":"https://example.com/","method":"POST"}},
			"recurrence":{"rrule":"DTSTART;TZID=Europe/Berlin:20261201T090000\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3","count":12}}}`,
			"job coll1/job1: rrule DTSTART;TZID=Europe/Berlin:20261201T090000 / RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3, 12 times → POST https://example.com/"},
		{"rules", `{"properties":{"action":{"type":"Http","request":{"uri":"https://example.com/","method":"POST"}},
			"recurrence":{"rules":[{"frequency":"Week","schedule":{"weekDays":["Monday"],"hours":[9],"minutes":[0]}},{"cron":"30 17 * * 1-5"},{"rrule":"FREQ=WEEKLY;BYDAY=SA;BYHOUR=10;BYMINUTE=0;BYSECOND=0"}],"timeZone":"Europe/Berlin"}}}`,
			"job coll1/job1: 3 rules: every week (minutes 0, hours 9, weekDays monday); cron 30 17 * * 1-5; rrule FREQ=WEEKLY;BYDAY=SA;BYHOUR=10;BYMINUTE=0;BYSECOND=0 in Europe/Berlin → POST https://example.com/"},
		{"monthly occurrences", `{"properties":{"action":{"type":"Http","request":{"uri":"https://example.com/","method":"POST"}},
			"recurrence":{"frequency":"Month","interval":2,"schedule":{"monthlyOccurrences":[{"day":"Friday","occurrence":-1},{"day":"Monday"}],"monthDays":[1]}}}}`,
			"job coll1/job1: every 2 months (monthDays 1, monthlyOccurrences friday -1,monday) → POST https://example.com/"},
		{"storage queue", `{"properties":{"action":{"type":"StorageQueue","queueMessage":{"storageAccount":"acct1","queueName":"jobs","sasToken":"?sv=2019&sig=SECRET","message":"m"}},
			"recurrence":{"frequency":"Hour"}}}`,
			"job coll1/job1: every hour → storage queue acct1/jobs"},
		{"service bus topic", `{"properties":{"action":{"type":"ServiceBusTopic","serviceBusTopicMessage":{"namespace":"bus-ns1","topicPath":"t1","message":"m",
			"transportType":"NetMessaging","authentication":{"sasKeyName":"k","sasKey":"SECRET","type":"SharedAccessKey"}}},
			"recurrence":{"frequency":"Day"}}}`,
			"job coll1/job1: every day → Service Bus topic bus-ns1/t1"},
		{"workflow", `{"properties":{"action":{"type":"Workflow","workflow":{"workflowType":"Report","taskQueue":"reports","namespace":"other","input":{"secret":"SECRET"}}},
			"recurrence":{"frequency":"Year"}}}`,
			"job coll1/job1: every year → workflow Report on task queue reports in namespace other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, jobs.JobSummary(summaryKey, normalized(t, tc.body)))
		})
	}
}

// TestSummariesNameNoSecret puts a secret everywhere a job may hold one
// (user info, query, fragment, headers, body, authentication, error
// action) and finds it in no summary or details.
func TestSummariesNameNoSecret(t *testing.T) {
	j := normalized(t, `{"properties":{"action":{"type":"Http","request":{
		"uri":"https://user:SECRET@example.com/hook?sig=SECRET#SECRET","method":"POST","body":"SECRET",
		"headers":{"Authorization":"Bearer SECRET"},
		"authentication":{"type":"Basic","username":"u","password":"SECRET"}},
		"errorAction":{"type":"Http","request":{"uri":"https://example.com/err?code=SECRET","method":"POST"}}},
		"recurrence":{"frequency":"Minute","interval":5}}}`)
	next := time.Date(2026, 11, 21, 10, 5, 0, 0, time.UTC)
	state := &jobs.JobState{Job: j, Next: &next}
	for name, s := range map[string]string{
		"job":         jobs.JobSummary(summaryKey, j),
		"occurrence":  jobs.OccurrenceSummary(summaryKey, next, jobs.MainAction, j.Properties.Action.ActionSpec),
		"errorAction": jobs.OccurrenceSummary(summaryKey, next, jobs.ErrorAction, *j.Properties.Action.ErrorAction),
		"details":     state.Details(),
		"error":       jobs.DescribeAction(*j.Properties.Action.ErrorAction),
		"unparseable": jobs.PublicURL("https://SECRET@%zz/"),
	} {
		require.NotContains(t, s, "SECRET", name)
	}
	require.Equal(t, "job coll1/job1: every 5 minutes → POST https://example.com/hook", jobs.JobSummary(summaryKey, j))
	require.Equal(t, "occurrence 2026-11-21T10:05:00Z of coll1/job1 → POST https://example.com/hook",
		jobs.OccurrenceSummary(summaryKey, next, jobs.MainAction, j.Properties.Action.ActionSpec))
	require.Equal(t, "**Enabled**, next occurrence 2026-11-21T10:05:00Z\n\n"+
		"- schedule: every 5 minutes\n"+
		"- action: POST https://example.com/hook\n"+
		"- error action: POST https://example.com/err\n", state.Details())
}

func TestOccurrenceSummaryOfTheErrorAction(t *testing.T) {
	j := normalized(t, `{"properties":{"action":{"type":"Http","request":{"uri":"https://example.com/hook","method":"GET"},
		"errorAction":{"type":"Http","request":{"uri":"https://example.com/err","method":"POST"}}},"recurrence":{"frequency":"Minute"}}}`)
	nominal := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	require.Equal(t, "error action of occurrence 2026-11-21T10:00:00Z of coll1/job1 → POST https://example.com/err",
		jobs.OccurrenceSummary(summaryKey, nominal, jobs.ErrorAction, *j.Properties.Action.ErrorAction))
}

func TestJobDetailsCountsAndFinalStates(t *testing.T) {
	j := normalized(t, `{"properties":{"action":{"type":"Http","request":{"uri":"https://example.com/hook","method":"GET"}},"recurrence":{"frequency":"Minute"}}}`)
	last := time.Date(2026, 11, 21, 9, 59, 0, 0, time.UTC)
	next := last.Add(time.Minute)
	j.Properties.Status = &jobs.Status{ExecutionCount: 7, FailureCount: 3, FaultedCount: 1, LastExecutionTime: &last}
	j.Properties.State = jobs.Faulted
	state := &jobs.JobState{Job: j, Next: &next}
	require.Equal(t, "**Faulted**\n\n- schedule: every minute\n- action: GET https://example.com/hook\n"+
		"- runs: 7, failed attempts 3, faulted 1, last started 2026-11-21T09:59:00Z\n", state.Details(),
		"no next occurrence for a job that will not run")

	since, missed := last.Add(-time.Hour), last.Add(-30*time.Minute)
	j.Properties.Status = &jobs.Status{ExecutionCount: 7, FailureCount: 3, FaultedCount: 3, LastExecutionTime: &last,
		ConsecutiveFailures: 3, PostponedCount: 2, MissedCount: 1, LastMissedTime: &missed, LastLateness: jobs.DurationOf(90 * time.Second)}
	j.Properties.State = jobs.Enabled
	state = &jobs.JobState{Job: j, Next: &next, FailingSince: &since}
	require.Equal(t, "**Enabled**, next occurrence 2026-11-21T10:00:00Z\n\n- schedule: every minute\n- action: GET https://example.com/hook\n"+
		"- runs: 7, failed attempts 3, faulted 3, last started 2026-11-21T09:59:00Z\n"+
		"- failing: 3 runs in a row since 2026-11-21T08:59:00Z\n- not run: 2 postponed, 1 missed, the last due 2026-11-21T09:29:00Z\n"+
		"- last scheduled run started PT1M30S late\n", state.Details(), "what ails it")
}

func TestSummariesAreClipped(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("é", 900)
	j := normalized(t, `{"properties":{"action":{"type":"Http","request":{"uri":"`+long+`","method":"GET"}},"recurrence":{"frequency":"Minute"}}}`)
	s := jobs.JobSummary(summaryKey, j)
	require.LessOrEqual(t, len(s), jobs.MaxSummary)
	require.True(t, utf8.ValidString(s))
	require.True(t, strings.HasSuffix(s, "…"), s)

	// The cut never splits a character.
	wf := normalized(t, `{"properties":{"action":{"type":"Workflow","workflow":{"workflowType":"`+strings.Repeat("é", 300)+`","taskQueue":"q"}},"recurrence":{"frequency":"Minute"}}}`)
	s = jobs.JobSummary(summaryKey, wf)
	require.LessOrEqual(t, len(s), jobs.MaxSummary)
	require.True(t, utf8.ValidString(s))
	require.True(t, strings.HasSuffix(s, "é…"), s)
	require.Equal(t, "collection coll1 (subscription sub1, resource group rg1)", jobs.CollectionSummary(summaryKey))
}
