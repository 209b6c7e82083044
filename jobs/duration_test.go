package jobs_test

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

func TestDescribeDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                   "0 seconds",
		time.Second:                         "1 second",
		15 * time.Second:                    "15 seconds",
		1500 * time.Millisecond:             "1.5 seconds",
		time.Minute:                         "1 minute",
		10 * time.Minute:                    "10 minutes",
		90 * time.Minute:                    "1 hour 30 minutes",
		time.Hour + time.Second:             "1 hour 1 second",
		24 * time.Hour:                      "1 day",
		24*time.Hour - 2*time.Hour:          "22 hours",
		49*time.Hour + 30*time.Second:       "2 days 1 hour 30 seconds",
		250 * time.Millisecond:              "0.25 seconds",
		-time.Minute:                        "-1 minute",
		7*24*time.Hour + 3*time.Millisecond: "7 days 0.003 seconds",
	} {
		assert.Equal(t, want, jobs.DescribeDuration(d), "%v", d)
	}
}

// goDuration matches time.Duration's String form, which messages once
// printed limits in (10m0s, 15s, 24h0m0s).
var goDuration = regexp.MustCompile(`\b\d+(h\d+m|m\d+s|s\b)`)

// TestLimitsInMessagesReadAsPeopleWriteThem: the limits a refusal names
// read "10 minutes", not Go's 10m0s.
func TestLimitsInMessagesReadAsPeopleWriteThem(t *testing.T) {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	base := func() jobs.Job {
		var job jobs.Job
		require.NoError(t, json.Unmarshal([]byte(`{"properties":{"startTime":"2026-02-01T00:00:00Z",
			"action":{"type":"Http","request":{"uri":"http://example.com/","method":"GET"}},
			"recurrence":{"frequency":"Hour","interval":1}}}`), &job))
		return job
	}
	for _, tc := range []struct {
		name, want string
		change     func(*jobs.Job)
	}{
		{"timeout", "at most 10 minutes", func(j *jobs.Job) { j.Properties.Action.Timeout = "PT11M" }},
		{"retryInterval", "the minimum of 15 seconds", func(j *jobs.Job) {
			j.Properties.Action.RetryPolicy = &jobs.RetryPolicy{RetryType: "Fixed", RetryInterval: "PT5S"}
		}},
		{"jitter", "at most 1 hour", func(j *jobs.Job) { j.Properties.Jitter = "PT2H" }},
	} {
		job := base()
		tc.change(&job)
		err := job.Accept(k, now)
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
		assert.NotRegexp(t, goDuration, err.Error(), tc.name)
	}

	terms := jobs.CollectionTerms{MaxRecurrence: &jobs.MaxRecurrence{Frequency: "Minute", Interval: 1}}
	err := terms.Check(30*time.Second, "c")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "as often as every 30 seconds")
	assert.NotRegexp(t, goDuration, err.Error())
}
