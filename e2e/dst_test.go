package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDSTPolicyThroughTheAPI: a job's DST policy is stored and shown, the
// preview follows it (Berlin skips 02:00-03:00 on 2027-03-28: a 02:30
// that skips the gap has no run that day) and marks the runs a transition
// moved or doubled, and a bad value is refused with its path.
func TestDSTPolicyThroughTheAPI(t *testing.T) {
	s := newStack(t)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	props := map[string]any{
		"startTime": "2027-03-26T00:00:00Z",
		"action":    map[string]any{"type": "Http", "request": map[string]any{"uri": "http://127.0.0.1:9/", "method": "GET"}},
		"recurrence": map[string]any{"frequency": "Day", "timeZone": "Europe/Berlin",
			"schedule": map[string]any{"hours": []int{2}, "minutes": []int{30}}, "dst": map[string]any{"gap": "Skip"}},
	}
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/nightly", map[string]any{"properties": props})
	require.Equal(t, http.StatusCreated, status, body)
	require.Equal(t, "skip", path(body, "properties", "recurrence", "dst", "gap"))

	status, preview := s.do(t, http.MethodPost, "/recur/v1/preview", map[string]any{"properties": props})
	require.Equal(t, http.StatusOK, status, preview)
	times, _ := preview["value"].([]any)
	require.GreaterOrEqual(t, len(times), 3, preview)
	require.Equal(t, []any{"2027-03-26T01:30:00Z", "2027-03-27T01:30:00Z", "2027-03-29T00:30:00Z"}, times[:3])

	require.Nil(t, preview["dst"], "a skipped time leaves nothing to mark")

	// With repeat both, the saved job's preview and the form's mark the
	// run a gap moved and the two of a repeated 02:30 (Berlin repeats
	// 02:00-03:00 on 2027-10-31).
	props["startTime"] = "2027-03-27T00:00:00Z"
	props["recurrence"].(map[string]any)["dst"] = map[string]any{"repeat": "both"}
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/nightly", map[string]any{"properties": props})
	require.Equal(t, http.StatusOK, status, body)
	saved := savedPreview(t, s, "nightly", 300)
	var marks []string
	for _, m := range saved.DST {
		marks = append(marks, m.Time.Format(time.RFC3339)+" "+m.Change+" "+m.WallClock)
	}
	require.Equal(t, []string{
		"2027-03-28T01:30:00Z moved 2027-03-28T02:30:00",
		"2027-10-31T00:30:00Z doubled 2027-10-31T02:30:00",
		"2027-10-31T01:30:00Z doubled 2027-10-31T02:30:00",
	}, marks)
	require.Contains(t, saved.Value, saved.DST[0].Time)
	status, preview = s.do(t, http.MethodPost, "/recur/v1/preview", map[string]any{"properties": props})
	require.Equal(t, http.StatusOK, status, preview)
	require.Equal(t, []any{map[string]any{"time": "2027-03-28T01:30:00Z", "wallClock": "2027-03-28T02:30:00", "change": "moved"}}, preview["dst"])

	props["recurrence"].(map[string]any)["dst"] = map[string]any{"repeat": "twice"}
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/nightly", map[string]any{"properties": props})
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "properties.recurrence.dst.repeat", path(body, "error", "target"))
}
