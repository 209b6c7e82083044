package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPreviewOfASavedJob(t *testing.T) {
	s := newStack(t)
	status, _ := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status)
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/three", map[string]any{"properties": map[string]any{
		"startTime":  start.Format(time.RFC3339),
		"action":     map[string]any{"type": "Http", "request": map[string]any{"uri": "http://127.0.0.1:9/", "method": "GET"}},
		"recurrence": map[string]any{"frequency": "Hour", "interval": 2, "count": 3},
	}})
	require.Equal(t, http.StatusCreated, status, body)

	resp, err := http.Get(s.api.URL + "/recur/v1/subscriptions/sub1/resourceGroups/rg1/jobCollections/coll1/jobs/three/preview?count=10")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var got struct{ Value []time.Time }
	require.NoError(t, json.Unmarshal(data, &got), string(data))
	require.Equal(t, []time.Time{start, start.Add(2 * time.Hour), start.Add(4 * time.Hour)}, got.Value, "count 3 leaves three runs")

	resp, err = http.Get(s.api.URL + "/recur/v1/subscriptions/sub1/resourceGroups/rg1/jobCollections/coll1/jobs/none/preview")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// savedPreview GETs the preview of job name of coll1 (count runs) and
// returns the times it lists.
func savedPreview(t *testing.T, s *stack, name string, count int) previewAnswer {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/recur/v1/subscriptions/sub1/resourceGroups/rg1/jobCollections/coll1/jobs/%s/preview?count=%d", s.api.URL, name, count))
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(data))
	var preview previewAnswer
	require.NoError(t, json.Unmarshal(data, &preview))
	return preview
}

// previewAnswer is a preview's answer: the times, and those a DST
// transition moved or repeated.
type previewAnswer struct {
	Value []time.Time
	DST   []struct {
		Time              time.Time
		WallClock, Change string
	}
}
