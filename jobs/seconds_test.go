package jobs_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// TestMaxRecurrenceInSeconds: a paid sku's quota may go down to recur's
// Second, a Free one's not; the skus' defaults stay Azure's.
func TestMaxRecurrenceInSeconds(t *testing.T) {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c"}
	accept := func(t *testing.T, body string) (jobs.Collection, error) {
		t.Helper()
		var c jobs.Collection
		require.NoError(t, json.Unmarshal([]byte(body), &c))
		return c, c.Accept(k)
	}
	for sku, want := range map[string]jobs.MaxRecurrence{
		"Free": {Frequency: "Hour", Interval: 1}, "Standard": {Frequency: "Minute", Interval: 1},
		"P10Premium": {Frequency: "Minute", Interval: 1}, "P20Premium": {Frequency: "Minute", Interval: 1},
	} {
		c, err := accept(t, `{"properties":{"sku":{"name":"`+sku+`"}}}`)
		require.NoError(t, err)
		require.Equal(t, want, *c.Properties.Quota.MaxRecurrence, "%s's default", sku)
	}
	c, err := accept(t, `{"properties":{"sku":{"name":"P20Premium"},"quota":{"maxRecurrence":{"frequency":"second","interval":10}}}}`)
	require.NoError(t, err)
	require.Equal(t, jobs.MaxRecurrence{Frequency: "Second", Interval: 10}, *c.Properties.Quota.MaxRecurrence)
	require.Equal(t, 10*time.Second, c.Properties.Quota.MaxRecurrence.Period())
	terms := c.Terms(1)
	require.NoError(t, terms.Check(10*time.Second, "c"))
	var e *jobs.Error
	require.ErrorAs(t, terms.Check(5*time.Second, "c"), &e)
	require.Equal(t, jobs.CodeQuotaExceeded, e.Code)
	require.Contains(t, e.Message, "allows at most once every 10 second(s)")

	_, err = accept(t, `{"properties":{"sku":{"name":"Free"},"quota":{"maxRecurrence":{"frequency":"Second","interval":30}}}}`)
	require.ErrorAs(t, err, &e)
	require.Equal(t, "properties.quota.maxRecurrence", e.Target)
	_, err = accept(t, `{"properties":{"quota":{"maxRecurrence":{"frequency":"Millisecond"}}}}`)
	require.ErrorAs(t, err, &e)
	require.Contains(t, e.Message, "is not one of Second, Minute, Hour, Day, Week, Month")
}

// TestTheFloor: CheckMinInterval refuses a gap below the floor, naming
// both, and lets a one-time job (no gap) through.
func TestTheFloor(t *testing.T) {
	require.NoError(t, jobs.CheckMinInterval(10*time.Second, jobs.DefaultMinInterval))
	require.NoError(t, jobs.CheckMinInterval(0, jobs.DefaultMinInterval), "a one-time job")
	var e *jobs.Error
	require.ErrorAs(t, jobs.CheckMinInterval(9*time.Second, jobs.DefaultMinInterval), &e)
	require.Equal(t, jobs.CodeInvalidRequest, e.Code)
	require.Equal(t, "properties.recurrence", e.Target)
	require.Equal(t, "the job runs as often as every 9 seconds, but this server runs a job at most once every 10 seconds (its operator's --min-interval)", e.Message)
}

// TestCatchUpOfSecondsJobs: the default catch-up window is one period, for
// Second and for a six-field cron too.
func TestCatchUpOfSecondsJobs(t *testing.T) {
	for rec, want := range map[string]time.Duration{
		`{"frequency":"second","interval":15}`: 15 * time.Second,
		`{"cron":"*/20 * * * * *"}`:            20 * time.Second,
	} {
		var p jobs.Properties
		require.NoError(t, json.Unmarshal([]byte(`{"recurrence":`+rec+`}`), &p))
		require.Equal(t, want, p.CatchUp(), rec)
	}
}
