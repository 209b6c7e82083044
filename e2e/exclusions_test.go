package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestExclusionsThroughTheAPI: a daily job whose first day and two days
// after are excluded is taken and shown as written; its workflow plans its
// first run on the first day left, the saved job's preview and the form's
// skip the excluded days, and a range that ends before it starts is a 400
// at its path.
func TestExclusionsThroughTheAPI(t *testing.T) {
	s := newStack(t)
	s.putCollection(t)
	d := time.Now().UTC().AddDate(0, 0, 1).Truncate(24 * time.Hour).Add(6 * time.Hour)
	day := func(i int) time.Time { return d.AddDate(0, 0, i) }
	date := func(i int) string { return day(i).Format(time.DateOnly) }
	exclusions := []any{map[string]any{"date": date(0)}, map[string]any{"from": date(2), "to": date(3)}}
	job := httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Day", "exclusions": exclusions})
	job["properties"].(map[string]any)["startTime"] = d.Format(time.RFC3339)

	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/daily", job)
	require.Equal(t, http.StatusCreated, status, body)
	require.Equal(t, exclusions, path(body, "properties", "recurrence", "exclusions"))
	require.Equal(t, day(1).Format(time.RFC3339), path(body, "properties", "status", "nextExecutionTime"),
		"the workflow plans past the excluded first day")

	want := []time.Time{day(1), day(4), day(5)}
	require.Equal(t, want, savedPreview(t, s, "daily", 3).Value)
	status, preview := s.do(t, http.MethodPost, "/recur/v1/preview", job)
	require.Equal(t, http.StatusOK, status, preview)
	value, _ := preview["value"].([]any)
	require.GreaterOrEqual(t, len(value), 3, preview)
	require.Equal(t, []any{day(1).Format(time.RFC3339), day(4).Format(time.RFC3339), day(5).Format(time.RFC3339)}, value[:3])

	exclusions[1] = map[string]any{"from": date(3), "to": date(2)}
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/daily", job)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "properties.recurrence.exclusions[1].to", path(body, "error", "target"))
}
