package jobs_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

func TestDurationIsISO8601ToTheMillisecond(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                     "PT0S",
		42 * time.Millisecond: "PT0.042S",
		42*time.Millisecond + 400*time.Microsecond: "PT0.042S",
		1500 * time.Millisecond:                    "PT1.5S",
		90 * time.Second:                           "PT1M30S",
		time.Hour:                                  "PT1H",
		time.Hour + 250*time.Millisecond:           "PT1H0.25S",
		24 * time.Hour:                             "P1D",
		26*time.Hour + 3*time.Minute:               "P1DT2H3M",
		400 * 24 * time.Hour:                       "P400D",
	} {
		assert.Equal(t, want, jobs.Duration(d).String(), "%v", d)
		data, err := json.Marshal(jobs.Duration(d))
		require.NoError(t, err)
		var back jobs.Duration
		require.NoError(t, json.Unmarshal(data, &back), string(data))
		assert.Equal(t, d.Round(time.Millisecond), time.Duration(back), "%s reads back", data)
	}
	var d jobs.Duration
	require.NoError(t, json.Unmarshal([]byte(`"00:01:30"`), &d), "a TimeSpan")
	require.Equal(t, 90*time.Second, time.Duration(d))
	for _, bad := range []string{`42`, `"42"`, `"PT"`, `"P99999999999D"`} {
		assert.Error(t, json.Unmarshal([]byte(bad), &d), bad)
	}
	require.NoError(t, json.Unmarshal([]byte(`null`), &d))
}

func TestLatenessBuckets(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "", 59 * time.Second: "", time.Minute: "PT1M", 9 * time.Minute: "PT1M", 10 * time.Minute: "PT10M",
		59 * time.Minute: "PT10M", time.Hour: "PT1H", 23 * time.Hour: "PT1H", 24 * time.Hour: "P1D", 30 * 24 * time.Hour: "P1D",
	} {
		assert.Equal(t, want, jobs.LatenessBucket(d), "%v", d)
	}
	for _, d := range []time.Duration{30 * time.Second, time.Minute - 1} {
		_, ok := jobs.LatenessBucketsFrom(d)
		require.False(t, ok, "a job late by %v holds no bucket", d)
	}
	for d, want := range map[time.Duration][]string{
		time.Minute:                 {"PT1M", "PT10M", "PT1H", "P1D"},
		5 * time.Minute:             {"PT1M", "PT10M", "PT1H", "P1D"},
		10*time.Minute - 1:          {"PT1M", "PT10M", "PT1H", "P1D"},
		10 * time.Minute:            {"PT10M", "PT1H", "P1D"},
		2 * time.Hour:               {"PT1H", "P1D"},
		48 * time.Hour:              {"P1D"},
		24*time.Hour + 1:            {"P1D"},
		10*time.Minute + 1:          {"PT10M", "PT1H", "P1D"},
		time.Hour - time.Nanosecond: {"PT10M", "PT1H", "P1D"},
	} {
		got, ok := jobs.LatenessBucketsFrom(d)
		require.True(t, ok, "%v", d)
		assert.Equal(t, want, got, "%v", d)
		// Every lateness from d on is in one of them.
		for _, late := range []time.Duration{d, d + time.Millisecond, d + time.Minute, 2 * d, 10 * d} {
			assert.Contains(t, got, jobs.LatenessBucket(late), "%v late, from %v", late, d)
		}
		// None holds only lateness under d.
		if b := jobs.LatenessBucket(d - 1); b != jobs.LatenessBucket(d) {
			assert.NotContains(t, got, b, "%v", d)
		}
	}
}

func TestFailuresReasonFitsTheStateReason(t *testing.T) {
	require.Equal(t, "disabled after 3 consecutive failures: 500 Internal Server Error: boom",
		jobs.FailuresReason(3, "500 Internal Server Error: boom"))
	long := jobs.FailuresReason(5, strings.Repeat("é", 2048))
	require.True(t, utf8.ValidString(long))
	require.LessOrEqual(t, utf8.RuneCountInString(long), jobs.MaxStateReason)
	require.True(t, strings.HasSuffix(long, "…"))

	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	j := jobs.Job{Properties: jobs.Properties{State: jobs.Disabled, StateReason: long,
		Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: "https://example.com/", Method: "GET"}}}}}
	require.NoError(t, j.Accept(k, time.Now()), "a job GET shows disabled so is PUT back as it is")
}

func TestDisableAfterFailuresIsBounded(t *testing.T) {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	for n, ok := range map[int]bool{0: true, 1: true, jobs.MaxDisableAfterFailures: true, -1: false, jobs.MaxDisableAfterFailures + 1: false} {
		j := jobs.Job{Properties: jobs.Properties{DisableAfterFailures: n,
			Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: "https://example.com/", Method: "GET"}}}}}
		err := j.Accept(k, time.Now())
		if ok {
			require.NoError(t, err, n)
			continue
		}
		var e *jobs.Error
		require.ErrorAs(t, err, &e, n)
		require.Equal(t, "properties.disableAfterFailures", e.Target)
		require.Contains(t, e.Message, "from 1 to 1000 (0: never)")
	}
}

func TestAStatusWithoutHealthReadsAsHealthy(t *testing.T) {
	// A memo written before the job's health was kept.
	var s jobs.Status
	require.NoError(t, json.Unmarshal([]byte(`{"executionCount":3,"failureCount":1,"faultedCount":0}`), &s))
	require.Zero(t, s.ConsecutiveFailures)
	require.Nil(t, s.LastLateness)
	data, err := json.Marshal(jobs.Status{ExecutionCount: 1, LastLateness: jobs.DurationOf(1500 * time.Millisecond)})
	require.NoError(t, err)
	require.JSONEq(t, `{"executionCount":1,"failureCount":0,"faultedCount":0,"consecutiveFailures":0,
		"lastLateness":"PT1.5S","postponedCount":0,"missedCount":0}`, string(data))
}
