package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRRuleAndRulesJobsThroughTheAPI: a job with recur's recurrence.rrule
// and one with recurrence.rules are taken, shown as written (GET as PUT)
// with their next run, previewed, checked against the collection's
// maxRecurrence by their shortest gap, and refused with the path and
// position of a bad part.
func TestRRuleAndRulesJobsThroughTheAPI(t *testing.T) {
	s := newStack(t)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{"sku": map[string]any{"name": "Free"}}})
	require.Equal(t, http.StatusCreated, status, body)
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)

	const third = "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/payroll", httpJob("http://127.0.0.1:9/",
		map[string]any{"rrule": third, "timeZone": "Europe/Berlin"}))
	require.Equal(t, http.StatusCreated, status, body)
	status, body = s.do(t, http.MethodGet, collectionPath+"/jobs/payroll", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, third, path(body, "properties", "recurrence", "rrule"))
	require.Nil(t, path(body, "properties", "recurrence", "frequency"), "an rrule job has no frequency")
	next, err := time.Parse(time.RFC3339, path(body, "properties", "status", "nextExecutionTime").(string))
	require.NoError(t, err)
	local := next.In(berlin)
	require.Equal(t, []int{9, 0}, []int{local.Hour(), local.Minute()}, "09:00 in Berlin: %s", local)
	require.LessOrEqual(t, local.Day(), 5, "the third business day is at most the 5th: %s", local)
	preview := savedPreview(t, s, "payroll", 3)
	require.Len(t, preview.Value, 3)
	require.Equal(t, next, preview.Value[0])

	rules := []any{
		map[string]any{"frequency": "Week", "schedule": map[string]any{"weekDays": []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}, "hours": []int{9}, "minutes": []int{0}}},
		map[string]any{"cron": "30 17 * * 1-5"},
		map[string]any{"rrule": "FREQ=WEEKLY;BYDAY=SA;BYHOUR=10;BYMINUTE=0;BYSECOND=0"},
	}
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/office", httpJob("http://127.0.0.1:9/",
		map[string]any{"rules": rules, "timeZone": "Europe/Berlin"}))
	require.Equal(t, http.StatusCreated, status, body)
	got := path(body, "properties", "recurrence", "rules").([]any)
	require.Len(t, got, 3)
	require.Equal(t, "30 17 * * 1-5", got[1].(map[string]any)["cron"])
	preview = savedPreview(t, s, "office", 12)
	require.Len(t, preview.Value, 12)
	for _, p := range preview.Value {
		l := p.In(berlin)
		hm := []int{l.Hour(), l.Minute()}
		if l.Weekday() == time.Saturday {
			require.Equal(t, []int{10, 0}, hm, "%s", l)
		} else {
			require.NotEqual(t, time.Sunday, l.Weekday(), "%s", l)
			require.Contains(t, [][]int{{9, 0}, {17, 30}}, hm, "%s", l)
		}
	}

	t.Run("more often than the Free sku's hourly is refused", func(t *testing.T) {
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/often", httpJob("http://127.0.0.1:9/",
			map[string]any{"rules": []any{map[string]any{"rrule": "FREQ=DAILY;BYHOUR=9;BYMINUTE=0;BYSECOND=0"}, map[string]any{"cron": "30 9 * * *"}}}))
		require.Equal(t, http.StatusConflict, status, body)
		require.Equal(t, "QuotaExceeded", path(body, "error", "code"))
	})
	t.Run("a bad part is a 400 with its path and position", func(t *testing.T) {
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/bad", httpJob("http://127.0.0.1:9/",
			map[string]any{"rrule": "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=0"}))
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Equal(t, "properties.recurrence.rrule", path(body, "error", "target"))
		require.Contains(t, path(body, "error", "message"), "BYSETPOS=0 at character 35")
	})
}
