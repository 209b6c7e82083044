package api

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenAPIDocumentHasAzureAndRecurOperations(t *testing.T) {
	rec := serve(t, http.MethodGet, "/openapi.json", "", "")
	require.Equal(t, http.StatusOK, rec.Code)
	var doc struct {
		Swagger string                    `json:"swagger"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
	require.Equal(t, "2.0", doc.Swagger)
	ops := 0
	for _, methods := range doc.Paths {
		ops += len(methods)
	}
	require.Equal(t, 15+15, ops, "Azure's 15 operations and recur's 15")
	require.Contains(t, doc.Paths, "/recur/v1/subscriptions/{subscriptionId}/jobs")
	require.Contains(t, doc.Paths, "/recur/v1/preview")
	require.Contains(t, doc.Paths, "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Scheduler/jobCollections/{jobCollectionName}/jobs/{jobName}/backfill")
	require.Contains(t, doc.Paths, "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Scheduler/jobCollections/{jobCollectionName}/jobs/{jobName}/failures/{failureId}/run")

	var defs struct {
		Definitions map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"definitions"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &defs))
	for def, fields := range map[string][]string{
		"JobRecurrence": {"frequency", "cron", "exclusions", "timeZone", "dst"},
		"JobProperties": {"state", "stateReason", "overlapPolicy", "maxConcurrentRuns", "jitter", "disableAfterFailures"},
		"JobStatus": {"executionCount", "lastSuccessTime", "consecutiveFailures", "lastLateness", "postponedCount",
			"missedCount", "lastMissedTime"},
		"JobHistoryDefinitionProperties": {"status", "backfill", "rerunOf", "lateness"},
		"JobDefinition":                  {"properties", "etag"},
		"JobCollectionDefinition":        {"properties", "etag"},
		"HttpRequest":                    {"uri", "successStatusCodes", "successBodyPattern", "signing"},
	} {
		for _, f := range fields {
			require.Contains(t, defs.Definitions[def].Properties, f, "%s.%s, Azure's and recur's fields together", def, f)
		}
	}
	for _, def := range []string{"JobRecurrence", "JobMaxRecurrence"} {
		frequency, _ := defs.Definitions[def].Properties["frequency"].(map[string]any)
		require.Contains(t, frequency["enum"], "Second", "%s.frequency takes recur's Second", def)
		require.Contains(t, frequency["enum"], "Minute", "and Azure's")
	}
}

func TestPreviewOfABodyNotYetSaved(t *testing.T) {
	rec := serve(t, http.MethodPost, "/recur/v1/preview?count=3", "application/json",
		`{"properties":{"startTime":"2015-04-07T14:00Z","recurrence":{"frequency":"Day","interval":2,"endTime":"2015-04-11T14:00:00Z"}}}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"value":[]}`, rec.Body.String(), "that job has ended: start and end are in the past")

	rec = serve(t, http.MethodPost, "/recur/v1/preview?count=2", "application/json",
		`{"startTime":"2999-01-01T00:00:00Z","recurrence":{"frequency":"Month","schedule":{"monthDays":[-1]}}}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"value":["2999-01-31T00:00:00Z","2999-02-28T00:00:00Z"]}`, rec.Body.String())

	rec = serve(t, http.MethodPost, "/recur/v1/preview", "application/json", `{"properties":{"recurrence":{"frequency":"Fortnight"}}}`)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Contains(t, rec.Body.String(), `"target":"properties.recurrence.frequency"`)

	rec = serve(t, http.MethodPost, "/recur/v1/preview?count=0", "application/json", `{}`)
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

// TestPreviewNamesTheIANAZone: a preview says in which IANA zone its
// schedule is read, a Windows name resolved, so that a client that knows
// IANA names only (the dashboard, through the browser's Intl) can show the
// times there; nothing for UTC.
func TestPreviewNamesTheIANAZone(t *testing.T) {
	for body, want := range map[string]string{
		`{"startTime":"2999-01-01T00:00:00Z","recurrence":{"frequency":"Day","timeZone":"Europe/Berlin"}}`:                          `"Europe/Berlin"`,
		`{"properties":{"startTime":"2999-01-01T00:00:00Z","recurrence":{"frequency":"Day","timeZone":"W. Europe Standard Time"}}}`: `"Europe/Berlin"`,
		`{"startTime":"2999-01-01T00:00:00Z","recurrence":{"frequency":"Day","timeZone":"tokyo standard time"}}`:                    `"Asia/Tokyo"`,
		`{"startTime":"2999-01-01T00:00:00Z","recurrence":{"frequency":"Day","timeZone":"UTC"}}`:                                    `null`,
		`{"startTime":"2999-01-01T00:00:00Z","recurrence":{"frequency":"Day"}}`:                                                     `null`,
	} {
		rec := serve(t, http.MethodPost, "/recur/v1/preview?count=1", "application/json", body)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
		if want == "null" {
			require.NotContains(t, got, "timeZone", body)
			continue
		}
		require.JSONEq(t, want, string(got["timeZone"]), body)
	}
}

// The preview reads an rrule and a list of rules as PUT would: the third
// business day of each month, and a union of an Azure rule, a cron and
// an rrule (weekdays at 9:00 and 17:30, Saturdays at 10:00); a bad
// rrule names its part and position.
func TestPreviewOfRRuleAndRules(t *testing.T) {
	rec := serve(t, http.MethodPost, "/recur/v1/preview?count=3", "application/json",
		`{"startTime":"2026-12-01T00:00:00Z","recurrence":{"rrule":"FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3;BYHOUR=9;BYMINUTE=0;BYSECOND=0","timeZone":"Europe/Berlin"}}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"value":["2026-12-03T08:00:00Z","2027-01-05T08:00:00Z","2027-02-03T08:00:00Z"],"timeZone":"Europe/Berlin"}`, rec.Body.String())

	rec = serve(t, http.MethodPost, "/recur/v1/preview?count=4", "application/json",
		`{"startTime":"2026-12-04T12:00:00Z","recurrence":{"timeZone":"Europe/Berlin","rules":[
			{"frequency":"Week","schedule":{"weekDays":["Monday","Tuesday","Wednesday","Thursday","Friday"],"hours":[9],"minutes":[0]}},
			{"cron":"30 17 * * 1-5"},
			{"rrule":"FREQ=WEEKLY;BYDAY=SA;BYHOUR=10;BYMINUTE=0;BYSECOND=0"}]}}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"value":["2026-12-04T16:30:00Z","2026-12-05T09:00:00Z","2026-12-07T08:00:00Z","2026-12-07T16:30:00Z"],"timeZone":"Europe/Berlin"}`, rec.Body.String())

	// A DTSTART;TZID is the zone when timeZone is absent.
	rec = serve(t, http.MethodPost, "/recur/v1/preview?count=2", "application/json",
		`{"recurrence":{"rrule":"DTSTART;TZID=America/New_York:20991201T090000\nRRULE:FREQ=DAILY"}}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"value":["2099-12-01T14:00:00Z","2099-12-02T14:00:00Z"],"timeZone":"America/New_York"}`, rec.Body.String())

	rec = serve(t, http.MethodPost, "/recur/v1/preview", "application/json",
		`{"recurrence":{"rrule":"FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=0"}}`)
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `recurrence.rrule: BYSETPOS=0 at character 35: BYSETPOS values are -366..-1 or 1..366`)
}
