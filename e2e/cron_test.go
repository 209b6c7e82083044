package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCronJobsThroughTheAPI: a job with recur's recurrence.cron is taken,
// shown as written with its next run, previewed, checked against the
// collection's maxRecurrence by its shortest gap, and refused with the
// path of its bad field.
func TestCronJobsThroughTheAPI(t *testing.T) {
	s := newStack(t)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{"sku": map[string]any{"name": "Free"}}})
	require.Equal(t, http.StatusCreated, status, body)
	cronJob := func(expr string, more map[string]any) map[string]any {
		rec := map[string]any{"cron": expr, "timeZone": "Europe/Berlin"}
		for k, v := range more {
			rec[k] = v
		}
		return httpJob("http://127.0.0.1:9/", rec)
	}

	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/nightly", cronJob("30 2 * * MON-FRI", nil))
	require.Equal(t, http.StatusCreated, status, body)
	require.Equal(t, "30 2 * * MON-FRI", path(body, "properties", "recurrence", "cron"))
	require.Nil(t, path(body, "properties", "recurrence", "frequency"), "a cron job has no frequency")
	next, err := time.Parse(time.RFC3339, path(body, "properties", "status", "nextExecutionTime").(string))
	require.NoError(t, err)
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	local := next.In(berlin)
	require.Equal(t, []int{2, 30}, []int{local.Hour(), local.Minute()}, "02:30 in Berlin: %s", local)
	require.NotContains(t, []time.Weekday{time.Saturday, time.Sunday}, local.Weekday())

	preview := savedPreview(t, s, "nightly", 5)
	require.Len(t, preview.Value, 5)
	require.Equal(t, next, preview.Value[0])
	for _, p := range preview.Value {
		require.NotContains(t, []time.Weekday{time.Saturday, time.Sunday}, p.In(berlin).Weekday())
	}

	t.Run("more often than the Free sku's hourly is refused", func(t *testing.T) {
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/often", cronJob("0,30 * * * *", nil))
		require.Equal(t, http.StatusConflict, status, body)
		require.Equal(t, "QuotaExceeded", path(body, "error", "code"))
	})
	t.Run("a bad field is a 400 with its path", func(t *testing.T) {
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/bad", cronJob("0 25 * * *", nil))
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Equal(t, "properties.recurrence.cron", path(body, "error", "target"))
		require.Contains(t, path(body, "error", "message"), "hour field: 25 is out of 0-23")
	})
	t.Run("cron and frequency together are a 400", func(t *testing.T) {
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/both", cronJob("0 3 * * *", map[string]any{"frequency": "Day"}))
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Equal(t, "properties.recurrence.frequency", path(body, "error", "target"))
	})
}
