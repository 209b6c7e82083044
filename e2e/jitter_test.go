package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// TestJitterThroughTheAPI: a job's jitter is stored and shown, the
// preview of the saved job lists when each occurrence starts (its nominal
// time plus its own offset), and a jitter past the rule's shortest gap
// is refused with its path.
func TestJitterThroughTheAPI(t *testing.T) {
	s := newStack(t)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, body)
	job := httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"})
	start, err := time.Parse(time.RFC3339, job["properties"].(map[string]any)["startTime"].(string))
	require.NoError(t, err)
	job["properties"].(map[string]any)["jitter"] = "PT10M"
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/spread", job)
	require.Equal(t, http.StatusCreated, status, body)
	require.Equal(t, "PT10M", path(body, "properties", "jitter"))
	require.Equal(t, start.Format(time.RFC3339), path(body, "properties", "status", "nextExecutionTime"), "the next nominal time")

	preview := savedPreview(t, s, "spread", 3)
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "spread"}
	var want []time.Time
	for i := range 3 {
		nominal := start.Add(time.Duration(i) * time.Hour)
		want = append(want, nominal.Add(jobs.JitterOffset(jobs.OccurrenceID(k.JobWorkflowID(), nominal), 10*time.Minute)))
	}
	require.Equal(t, want, preview.Value)

	job["properties"].(map[string]any)["jitter"] = "PT2H"
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/spread", job)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "properties.jitter", path(body, "error", "target"))
}
