package jobs_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

func TestParseIntervalAcceptsISO8601AndTimeSpan(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"PT30S": 30 * time.Second, "pt1m": time.Minute, "PT1H30M": 90 * time.Minute, "P1DT2H": 26 * time.Hour,
		"PT0.5S": 500 * time.Millisecond, "00:00:30": 30 * time.Second, "01:02:03": time.Hour + 2*time.Minute + 3*time.Second,
		"1.00:00:15": 24*time.Hour + 15*time.Second,
	} {
		got, err := jobs.ParseInterval(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "P", "PT", "30", "30s", "00:30", "P400D", "-PT30S"} {
		_, err := jobs.ParseInterval(bad)
		require.Error(t, err, bad)
	}
}

// fixed is a Fixed policy's numbers: no backoff.
func fixed(attempts int, interval time.Duration) jobs.Retries {
	return jobs.Retries{Attempts: attempts, Interval: interval, Backoff: 1, MaxInterval: interval}
}

func TestRetryPolicyResolve(t *testing.T) {
	count := func(n int) *int { return &n }
	tests := []struct {
		name   string
		policy *jobs.RetryPolicy
		want   jobs.Retries
		target string // non-empty: an error at this path
	}{
		{"absent is Fixed with the defaults", nil, fixed(5, 30*time.Second), ""},
		{"None is one attempt", &jobs.RetryPolicy{RetryType: "none"}, jobs.Retries{Attempts: 1, Backoff: 1}, ""},
		{"Fixed with count and interval", &jobs.RetryPolicy{RetryType: "Fixed", RetryCount: count(2), RetryInterval: "PT1M"}, fixed(3, time.Minute), ""},
		{"Fixed with a TimeSpan", &jobs.RetryPolicy{RetryType: "fixed", RetryInterval: "00:00:20"}, fixed(5, 20*time.Second), ""},
		{"Exponential doubles up to an hour", &jobs.RetryPolicy{RetryType: "exponential", RetryCount: count(6), RetryInterval: "PT15S"},
			jobs.Retries{Attempts: 7, Interval: 15 * time.Second, Backoff: 2, MaxInterval: time.Hour}, ""},
		{"Exponential with maximumInterval", &jobs.RetryPolicy{RetryType: "Exponential", MaximumInterval: "PT5M"},
			jobs.Retries{Attempts: 5, Interval: 30 * time.Second, Backoff: 2, MaxInterval: 5 * time.Minute}, ""},
		{"maximumInterval not below retryInterval", &jobs.RetryPolicy{RetryType: "Exponential", RetryInterval: "PT1M", MaximumInterval: "PT30S"}, jobs.Retries{}, "p.maximumInterval"},
		{"retryCount at most 20", &jobs.RetryPolicy{RetryType: "Fixed", RetryCount: count(21)}, jobs.Retries{}, "p.retryCount"},
		{"retryInterval at least 15 s", &jobs.RetryPolicy{RetryType: "Fixed", RetryInterval: "PT10S"}, jobs.Retries{}, "p.retryInterval"},
		{"unknown retryType", &jobs.RetryPolicy{RetryType: "Sometimes"}, jobs.Retries{}, "p.retryType"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.policy.Resolve("p")
			if tc.target != "" {
				var e *jobs.Error
				require.ErrorAs(t, err, &e)
				require.Equal(t, tc.target, e.Target)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestJobNormalize(t *testing.T) {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	valid := func() jobs.Job {
		return jobs.Job{Properties: jobs.Properties{Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "http",
			Request: &jobs.HTTPRequest{URI: "https://example.com/x", Method: "post"}}}}}
	}
	j := valid()
	require.NoError(t, j.Accept(k, now))
	require.Equal(t, "Http", j.Properties.Action.Type)
	require.Equal(t, "POST", j.Properties.Action.Request.Method)
	require.Equal(t, jobs.Enabled, j.Properties.State)
	require.Equal(t, "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c/jobs/j", j.ID)
	require.Equal(t, "c/j", j.Name)

	for target, mutate := range map[string]func(*jobs.Job){
		"properties.action":             func(j *jobs.Job) { j.Properties.Action = nil },
		"properties.action.type":        func(j *jobs.Job) { j.Properties.Action.Type = "Carrier pigeon" },
		"properties.action.request.uri": func(j *jobs.Job) { j.Properties.Action.Request.URI = "ftp://example.com" },
		"properties.action.request.body": func(j *jobs.Job) {
			j.Properties.Action.Request.Body = strings.Repeat("x", jobs.MaxBodyLength+1)
		},
		"properties.action.request.headers": func(j *jobs.Job) {
			j.Properties.Action.Request.Headers = map[string]string{}
			for i := range jobs.MaxHeaders + 1 {
				j.Properties.Action.Request.Headers[strings.Repeat("h", i+1)] = "v"
			}
		},
		"properties.state": func(j *jobs.Job) { j.Properties.State = "Paused" },
		"properties.action.request.headers ": func(j *jobs.Job) {
			j.Properties.Action.Request.Headers = map[string]string{"X-Big": strings.Repeat("v", jobs.MaxHeaderBytes)}
		},
	} {
		j := valid()
		mutate(&j)
		err := j.Accept(k, now)
		var e *jobs.Error
		require.ErrorAs(t, err, &e, target)
		require.Equal(t, strings.TrimSpace(target), e.Target)
	}
}

func TestKeyValidateRejectsNamesThatBreakWorkflowIDs(t *testing.T) {
	for _, name := range []string{"", "a/b", "a@b", "a:b", "-leading", strings.Repeat("x", 101)} {
		k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: name}
		if name == "" {
			require.NoError(t, k.Validate(), "a collection key has no job")
			continue
		}
		require.Error(t, k.Validate(), name)
	}
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "nightly_report-1.v2"}
	require.NoError(t, k.Validate())
	require.Equal(t, "job:s/rg/c/nightly_report-1.v2@2026-01-01T00:00:00Z",
		jobs.OccurrenceID(k.JobWorkflowID(), time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600)).Add(time.Hour)))
}

// TestNewDefinitionsTakeTimeSpansInRangeOnly: Accept refuses a
// TimeSpan whose minutes or seconds pass 59, or whose hours pass 23 beside
// days, at the interval's path; Accept, which replays stored
// definitions, still takes them.
func TestNewDefinitionsTakeTimeSpansInRangeOnly(t *testing.T) {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	long := struct{ bad, good []string }{
		bad:  []string{"01:99:00", "01:00:60", "01:60:00.5", "1.24:00:00", "2.99:99:99"},
		good: []string{"01:59:59", "36:00:00", "1.23:59:59.5", "PT90M", "P1DT36H"},
	}
	short := struct{ bad, good []string }{ // timeouts: 1 second to 10 minutes
		bad:  []string{"00:01:99", "00:00:60", "00:08:60.5"},
		good: []string{"00:09:59", "00:00:01", "PT90S"},
	}
	jitter := struct{ bad, good []string }{ // a one-time job: up to a day
		bad:  []string{"00:00:99", "00:60:00", "01:00:60", "00:59:60.5"},
		good: []string{"00:00:59", "23:59:59", "PT90S", "PT90M"},
	}
	for target, tc := range map[string]struct {
		set    func(*jobs.Job, string)
		values struct{ bad, good []string }
	}{
		"properties.action.retryPolicy.retryInterval": {func(j *jobs.Job, v string) {
			j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryInterval: v}
		}, long},
		"properties.action.retryPolicy.maximumInterval": {func(j *jobs.Job, v string) {
			j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "Exponential", MaximumInterval: v}
		}, long},
		"properties.action.errorAction.retryPolicy.retryInterval": {func(j *jobs.Job, v string) {
			j.Properties.Action.ErrorAction.RetryPolicy = &jobs.RetryPolicy{RetryInterval: v}
		}, long},
		"properties.action.timeout":             {func(j *jobs.Job, v string) { j.Properties.Action.Timeout = v }, short},
		"properties.action.errorAction.timeout": {func(j *jobs.Job, v string) { j.Properties.Action.ErrorAction.Timeout = v }, short},
		"properties.catchUpWindow":              {func(j *jobs.Job, v string) { j.Properties.CatchUpWindow = v }, long},
		"properties.jitter":                     {func(j *jobs.Job, v string) { j.Properties.Jitter = v }, jitter},
		"properties.action.serviceBusQueueMessage.brokeredMessageProperties.timeToLive": {func(j *jobs.Job, v string) {
			j.Properties.Action.ActionSpec = jobs.ActionSpec{Type: "ServiceBusQueue", ServiceBusQueueMessage: &jobs.ServiceBusMessage{
				Namespace: "namespace1", QueueName: "q", Message: "m",
				Authentication:            &jobs.ServiceBusAuthentication{SasKeyName: "n", SasKey: "k"},
				BrokeredMessageProperties: map[string]any{"TimeToLive": v},
			}}
		}, long},
	} {
		job := func(v string) jobs.Job {
			j := httpJob(nil, nil)
			tc.set(&j, v)
			return j
		}
		for _, bad := range tc.values.bad {
			j := job(bad)
			require.NoError(t, j.AcceptStored(k, created), "%s %s: stored definitions still replay", target, bad)
			j = job(bad)
			var e *jobs.Error
			require.ErrorAs(t, j.Accept(k, created), &e, "%s %s", target, bad)
			require.Equal(t, target, e.Target, bad)
			require.Contains(t, e.Message, "TimeSpan", bad)
		}
		for _, good := range tc.values.good {
			j := job(good)
			require.NoError(t, j.Accept(k, created), "%s %s", target, good)
		}
	}
}

func TestStateReasonIsBoundedAndClearedOnEnable(t *testing.T) {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	job := func(state, reason string) jobs.Job {
		return jobs.Job{Properties: jobs.Properties{State: jobs.State(state), StateReason: reason,
			Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: "https://example.com/", Method: "GET"}}}}}
	}
	j := job("disabled", strings.Repeat("é", jobs.MaxStateReason))
	require.NoError(t, j.Accept(k, now), "1024 characters, whatever their bytes")
	j = job("disabled", strings.Repeat("é", jobs.MaxStateReason+1))
	err := j.Accept(k, now)
	var e *jobs.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "properties.stateReason", e.Target)
	j = job("enabled", "stale")
	require.NoError(t, j.Accept(k, now))
	require.Empty(t, j.Properties.StateReason)
}

func TestSuccessRulesValidation(t *testing.T) {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for body, target := range map[string]string{
		`{"successStatusCodes":[200,"2XX","404"]}`:                   "",
		`{"successStatusCodes":["6xx"]}`:                             "properties.action.request.successStatusCodes[0]",
		`{"successStatusCodes":[200,99]}`:                            "properties.action.request.successStatusCodes[1]",
		`{"successBodyPattern":"\"ok\":\\s*true"}`:                   "",
		`{"successBodyPattern":"(unclosed"}`:                         "properties.action.request.successBodyPattern",
		`{"successBodyPattern":"` + strings.Repeat("a", 1025) + `"}`: "properties.action.request.successBodyPattern",
	} {
		var rules struct {
			Codes   jobs.StatusCodes `json:"successStatusCodes"`
			Pattern string           `json:"successBodyPattern"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &rules), body)
		j := jobs.Job{Properties: jobs.Properties{Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http",
			Request: &jobs.HTTPRequest{URI: "https://example.com/", Method: "GET", SuccessStatusCodes: rules.Codes, SuccessBodyPattern: rules.Pattern}}}}}
		err := j.Accept(k, now)
		if target == "" {
			require.NoError(t, err, body)
			continue
		}
		var e *jobs.Error
		require.ErrorAs(t, err, &e, body)
		require.Equal(t, target, e.Target, body)
	}
	codes := jobs.StatusCodes{"201", "4xx"}
	require.True(t, codes.Succeeded(201))
	require.True(t, codes.Succeeded(404))
	require.False(t, codes.Succeeded(200))
	require.True(t, jobs.StatusCodes(nil).Succeeded(204), "2xx by default")
}

func TestJitterOffsetsAreTheOccurrencesOwnAndBounded(t *testing.T) {
	seen := map[time.Duration]bool{}
	for i := range 200 {
		id := jobs.OccurrenceID("job:s/rg/c/j", time.Date(2026, 6, 1, i, 0, 0, 0, time.UTC))
		off := jobs.JitterOffset(id, 10*time.Minute)
		require.Equal(t, off, jobs.JitterOffset(id, 10*time.Minute), "the same occurrence, the same offset")
		require.True(t, off >= 0 && off < 10*time.Minute, "%s", off)
		seen[off] = true
	}
	require.Greater(t, len(seen), 150, "offsets spread")

	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for jitter, target := range map[string]string{"PT10M": "", "PT1H": "", "PT61M": "properties.jitter", "PT0S": "properties.jitter", "soon": "properties.jitter"} {
		j := jobs.Job{Properties: jobs.Properties{Jitter: jitter,
			Action:     &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: "https://example.com/", Method: "GET"}}},
			Recurrence: &recurrence.Recurrence{Frequency: "Hour"}}}
		err := j.Accept(k, now)
		if target == "" {
			require.NoError(t, err, jitter)
			continue
		}
		var e *jobs.Error
		require.ErrorAs(t, err, &e, jitter)
		require.Equal(t, target, e.Target, jitter)
	}
}

// TestOnlyAnEnabledJobAnswersItsNextExecutionTime: Azure's answer for a
// job that is not enabled has no status.nextExecutionTime; the job's own
// status keeps it.
func TestOnlyAnEnabledJobAnswersItsNextExecutionTime(t *testing.T) {
	next := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for state, shown := range map[jobs.State]bool{jobs.Enabled: true, jobs.Disabled: false, jobs.Completed: false, jobs.Faulted: false} {
		j := jobs.Job{Properties: jobs.Properties{State: state, Status: &jobs.Status{NextExecutionTime: &next, ExecutionCount: 3}}}
		public := j.Public()
		require.Equal(t, 3, public.Properties.Status.ExecutionCount, state)
		if shown {
			require.Equal(t, &next, public.Properties.Status.NextExecutionTime, state)
		} else {
			require.Nil(t, public.Properties.Status.NextExecutionTime, state)
		}
		require.Equal(t, &next, j.Properties.Status.NextExecutionTime, "%s: the job's own status is left as it is", state)
	}
}
