package contract

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seedJob is the comprehensive job example of Azure Scheduler's "concepts,
// terminology and entity hierarchy" page ("the job entity in detail"),
// verbatim, // comments and trailing commas included. Its actions are
// both Http, so nothing in it needs replacing; only its contoso.com URIs
// are pointed at a local target.
const seedJob = `{
    "startTime": "2012-08-04T00:00Z",               // optional
    "action":
    {
        "type": "http",
        "retryPolicy": { "retryType":"none" },
        "request":
        {
            "uri": "http://contoso.com/foo",        // required
            "method": "PUT",                        // required
            "body": "Posting from a timer",         // optional
            "headers":                              // optional

            {
                "Content-Type": "application/json"
            },
        },
       "errorAction":
       {
           "type": "http",
           "request":
           {
               "uri": "http://contoso.com/notifyError",
               "method": "POST",
           },
       },
    },
    "recurrence":                                   // optional
    {
        "frequency": "week",                        // can be "year" "month" "day" "week" "minute"
        "interval": 1,                              // optional, how often to fire (default to 1)
        "schedule":                                 // optional (advanced scheduling specifics)
        {
            "weekDays": ["monday", "wednesday", "friday"],
            "hours": [10, 22]
        },
        "count": 10,                                 // optional (default to recur infinitely)
        "endTime": "2012-11-04",                     // optional (default to recur infinitely)
    },
    "state": "disabled",                           // enabled or disabled
    "status":                                       // controlled by Scheduler service
    {
        "lastExecutionTime": "2007-03-01T13:00:00Z",
        "nextExecutionTime": "2007-03-01T14:00:00Z ",
        "executionCount": 3,
                                            "failureCount": 0,
                                            "faultedCount": 0
    },
}
`

// seedSchedules are the 31 rows of the "Examples: Recurrence schedules"
// table of Azure Scheduler's advanced-complexity page, verbatim.
var seedSchedules = []string{
	`{"hours":[5]}`,
	`{"minutes":[15], "hours":[5]}`,
	`{"minutes":[15], "hours":[5,17]}`,
	`{"minutes":[15,45], "hours":[5,17]}`,
	`{"minutes":[0,15,30,45]}`,
	`{hours":[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]}`,
	`{minutes:[0]}`,
	`{"minutes":[15]}`,
	`{"hours":[17], "weekDays":["saturday"]}`,
	`{hours":[17], "weekDays":["monday", "wednesday", "friday"]}`,
	`{"minutes":[15,45], "hours":[17], "weekDays":["monday", "wednesday", "friday"]}`,
	`{"hours":[5,17], "weekDays":["monday", "wednesday", "friday"]}`,
	`{"minutes":[15,45], "hours":[5,17], "weekDays":["monday", "wednesday", "friday"]}`,
	`{"minutes":[0,15,30,45], "weekDays":["monday", "tuesday", "wednesday", "thursday", "friday"]}`,
	`{"minutes":[0,15,30,45], "hours": [9, 10, 11, 12, 13, 14, 15, 16] "weekDays":["monday", "tuesday", "wednesday", "thursday", "friday"]}`,
	`{"weekDays":["sunday"]}`,
	`{"weekDays":["tuesday", "thursday"]}`,
	`{"minutes":[0], "hours":[6], "monthDays":[28]}`,
	`{"minutes":[0], "hours":[6], "monthDays":[-1]}`,
	`{"minutes":[0], "hours":[6], "monthDays":[1,-1]}`,
	`{monthDays":[1,-1]}`,
	`{monthDays":[1,14]}`,
	`{monthDays":[2]}`,
	`{"minutes":[0], "hours":[5], "monthlyOccurrences":[{"day":"friday", "occurrence":1}]}`,
	`{"monthlyOccurrences":[{"day":"friday", "occurrence":1}]}`,
	`{"monthlyOccurrences":[{"day":"friday", "occurrence":-3}]}`,
	`{"minutes":[15], "hours":[5], "monthlyOccurrences":[{"day":"friday", "occurrence":1},{"day":"friday", "occurrence":-1}]}`,
	`{"monthlyOccurrences":[{"day":"friday", "occurrence":1},{"day":"friday", "occurrence":-1}]}`,
	`{"monthlyOccurrences":[{"day":"friday", "occurrence":5}]}`,
	`{"minutes":[0,15,30,45], "monthlyOccurrences":[{"day":"friday", "occurrence":-1}]}`,
	`{"minutes":[15,45], "hours":[5,17], "monthlyOccurrences":[{"day":"wednesday", "occurrence":3}]}`,
}

// repairRow fixes the table's JSON typos: a missing opening quote
// ({hours", {monthDays"), an unquoted key ({minutes:) and a missing comma
// before "weekDays".
var repairRow = strings.NewReplacer(`{hours"`, `{"hours"`, `{monthDays"`, `{"monthDays"`,
	`{minutes:`, `{"minutes":`, `] "weekDays"`, `], "weekDays"`)

// frequencyOf is the frequency a schedule implies: weekDays need Week,
// monthDays and monthlyOccurrences Month; the rest run daily.
func frequencyOf(schedule map[string]any) string {
	switch {
	case schedule["weekDays"] != nil:
		return "Week"
	case schedule["monthDays"] != nil, schedule["monthlyOccurrences"] != nil:
		return "Month"
	}
	return "Day"
}

// TestSeedJobExample puts the seed's comprehensive job and reads it back:
// verbatim, and without its status, which is read-only (the scheduler's,
// ignored on PUT) and the only part of the example that is not valid
// input: its nextExecutionTime ends in a space.
func TestSeedJobExample(t *testing.T) {
	s := newStack(t)
	tg := newTarget(t)
	coll := s.newCollection(t, "seed-job")
	text, err := jsonc(strings.ReplaceAll(seedJob, "http://contoso.com", tg.URL))
	require.NoError(t, err)
	seed := func(t *testing.T) map[string]any {
		var props map[string]any
		require.NoError(t, json.Unmarshal([]byte(text), &props), text)
		return props
	}
	t.Run("verbatim", func(t *testing.T) {
		putSeedJob(t, s, tg, coll+"/jobs/verbatim", seed(t))
	})
	t.Run("without status", func(t *testing.T) {
		props := seed(t)
		delete(props, "status")
		putSeedJob(t, s, tg, coll+"/jobs/without-status", props)
	})
}

func putSeedJob(t *testing.T, s *stack, tg *target, jobPath string, props map[string]any) {
	status, put := s.do(t, http.MethodPut, jobPath, map[string]any{"properties": props})
	require.Equal(t, http.StatusCreated, status, put)
	assert.Equal(t, "2012-08-04T00:00:00Z", field(put, "properties", "startTime"))
	assert.Equal(t, "Http", field(put, "properties", "action", "type"))
	assert.Equal(t, "none", field(put, "properties", "action", "retryPolicy", "retryType"))
	assert.Equal(t, map[string]any{"uri": tg.URL + "/foo", "method": "PUT", "body": "Posting from a timer",
		"headers": map[string]any{"Content-Type": "application/json"}}, field(put, "properties", "action", "request"))
	assert.Equal(t, tg.URL+"/notifyError", field(put, "properties", "action", "errorAction", "request", "uri"))
	assert.Equal(t, "POST", field(put, "properties", "action", "errorAction", "request", "method"))
	assert.Equal(t, "week", field(put, "properties", "recurrence", "frequency"))
	assert.EqualValues(t, 1, field(put, "properties", "recurrence", "interval"))
	assert.EqualValues(t, 10, field(put, "properties", "recurrence", "count"))
	assert.Equal(t, map[string]any{"weekDays": []any{"monday", "wednesday", "friday"}, "hours": []any{10.0, 22.0}},
		field(put, "properties", "recurrence", "schedule"))
	assert.NotNil(t, field(put, "properties", "recurrence", "endTime"))
	assert.Equal(t, "disabled", field(put, "properties", "state"))
	assert.EqualValues(t, 0, field(put, "properties", "status", "executionCount"), "status is the scheduler's, not the client's")

	status, got := s.do(t, http.MethodGet, jobPath, nil)
	require.Equal(t, http.StatusOK, status, got)
	delete(field(put, "properties").(map[string]any), "status")
	delete(field(got, "properties").(map[string]any), "status")
	assert.Equal(t, put, got, "GET answers what PUT defined")
}

// TestSeedScheduleExamples puts a job for each row of the seed's schedule
// table, with the frequency the row implies, and reads it back.
func TestSeedScheduleExamples(t *testing.T) {
	require.Len(t, seedSchedules, 31)
	s := newStack(t)
	tg := newTarget(t)
	coll := s.newCollection(t, "seed-schedules")
	start := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Hour).Format(time.RFC3339)
	for i, row := range seedSchedules {
		t.Run(fmt.Sprintf("row%02d", i+1), func(t *testing.T) {
			t.Parallel()
			var schedule map[string]any
			require.NoError(t, json.Unmarshal([]byte(repairRow.Replace(row)), &schedule), row)
			freq := frequencyOf(schedule)
			jobPath := fmt.Sprintf("%s/jobs/schedule-%02d", coll, i+1)
			status, put := s.do(t, http.MethodPut, jobPath, map[string]any{"properties": map[string]any{
				"startTime":  start,
				"action":     map[string]any{"type": "Http", "request": map[string]any{"uri": tg.URL, "method": "GET"}},
				"recurrence": map[string]any{"frequency": freq, "interval": 1, "schedule": schedule},
			}})
			require.Equal(t, http.StatusCreated, status, "%s: %v", row, put)
			assert.Equal(t, strings.ToLower(freq), field(put, "properties", "recurrence", "frequency"), row)
			assert.Equal(t, schedule, field(put, "properties", "recurrence", "schedule"), row)
			assert.NotNil(t, field(put, "properties", "status", "nextExecutionTime"))

			status, got := s.do(t, http.MethodGet, jobPath, nil)
			require.Equal(t, http.StatusOK, status, got)
			assert.Equal(t, strings.ToLower(freq), field(got, "properties", "recurrence", "frequency"), row)
			assert.Equal(t, schedule, field(got, "properties", "recurrence", "schedule"), row)
		})
	}
}

// jsonc turns JSON with // comments and trailing commas, as Azure's
// documents wrote it, into JSON: comments go first, so that a comma
// before a comment is seen as trailing.
func jsonc(s string) (string, error) {
	s, err := outsideStrings(s, func(s string, i int) int {
		if strings.HasPrefix(s[i:], "//") {
			return strings.IndexByte(s[i:]+"\n", '\n')
		}
		return 0
	})
	if err != nil {
		return "", err
	}
	return outsideStrings(s, func(s string, i int) int {
		if s[i] == ',' {
			if rest := strings.TrimLeft(s[i+1:], " \t\r\n"); strings.HasPrefix(rest, "}") || strings.HasPrefix(rest, "]") {
				return 1
			}
		}
		return 0
	})
}

// outsideStrings copies s, dropping drop(s, i) bytes at each index i
// outside JSON strings.
func outsideStrings(s string, drop func(s string, i int) int) (string, error) {
	var (
		b        strings.Builder
		inString bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString && c == '\\' && i+1 < len(s):
			b.WriteString(s[i : i+2])
			i++
			continue
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		default:
			if n := drop(s, i); n > 0 {
				i += n - 1
				continue
			}
		}
		b.WriteByte(c)
	}
	if inString {
		return "", fmt.Errorf("jsonc: unterminated string")
	}
	return b.String(), nil
}
