// Package everyseconds runs a job every 2 seconds through the
// continue-as-new its run makes after 100 occurrences: three and a half
// minutes of waiting on timers, in a package of its own so that go test
// ./... runs it beside the e2e package instead of inside that package's
// ten-minute budget.
package everyseconds

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/recurhq/recur/internal/recurproc"
	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/lifecycle"
)

const collectionPath = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/coll1"

// arrival is one delivery of the job.
type arrival struct {
	key      string    // Idempotency-Key
	expected string    // x-ms-scheduler-expected-execution-time
	at       time.Time // when it arrived
}

// TestAnEverySecondsJobFiresOnceOnTimeAcrossAContinueAsNew: with the
// floor lowered to a second, a job every 2 seconds delivers each of its
// occurrences once, at or after its nominal time and within its period
// (its catch-up window), through the continue-as-new its run makes after
// lifecycle.MaxOccurrencesPerRun occurrences and beyond.
func TestAnEverySecondsJobFiresOnceOnTimeAcrossAContinueAsNew(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three and a half minutes of an every-2-seconds job; go test ./... runs it")
	}
	st, err := recurtest.StartWith(recurtest.Config{MinInterval: time.Second})
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	var mu sync.Mutex
	var arrivals []arrival
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, arrival{r.Header.Get("Idempotency-Key"), r.Header.Get("x-ms-scheduler-expected-execution-time"), time.Now()})
		mu.Unlock()
	}))
	t.Cleanup(target.Close)
	api := recurproc.NewClient(st.API.URL)
	require.NoError(t, api.Do(t.Context(), http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{"sku": map[string]any{"name": "Standard"},
		"quota": map[string]any{"maxRecurrence": map[string]any{"frequency": "Second", "interval": 1}}}}, nil, http.StatusCreated))
	start := time.Now().UTC().Add(3 * time.Second).Truncate(time.Second)
	require.NoError(t, api.Do(t.Context(), http.MethodPut, collectionPath+"/jobs/pinger", map[string]any{"properties": map[string]any{
		"startTime":  start.Format(time.RFC3339),
		"action":     map[string]any{"type": "Http", "request": map[string]any{"uri": target.URL, "method": "GET"}},
		"recurrence": map[string]any{"frequency": "Second", "interval": 2},
	}}, nil, http.StatusCreated))

	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "pinger"}
	query := fmt.Sprintf(`WorkflowId = %q AND ExecutionStatus = "ContinuedAsNew"`, k.JobWorkflowID())
	c := st.Temporal.GetDefaultClient()
	require.Eventually(t, func() bool {
		resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		return err == nil && len(resp.GetExecutions()) >= 1
	}, 6*time.Minute, time.Second, "the job's run continued as new after its %dth occurrence", lifecycle.MaxOccurrencesPerRun)
	mu.Lock()
	atNew := len(arrivals)
	mu.Unlock()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(arrivals) >= atNew+5
	}, time.Minute, 200*time.Millisecond, "the new run goes on delivering")

	mu.Lock()
	got := slices.Clone(arrivals)
	mu.Unlock()
	require.GreaterOrEqual(t, len(got), lifecycle.MaxOccurrencesPerRun+5)
	var lateness []time.Duration
	for i, a := range got {
		nominal := start.Add(time.Duration(2*i) * time.Second)
		require.Equal(t, "job:sub1/rg1/coll1/pinger@"+nominal.Format(time.RFC3339), a.key,
			"delivery %d: each occurrence once, in order, none missed", i)
		require.Equal(t, nominal.Format(time.RFC3339), a.expected)
		require.False(t, a.at.Before(nominal), "delivery %d came before its time", i)
		require.Less(t, a.at.Sub(nominal), 2*time.Second, "delivery %d: later than its period would have been a miss", i)
		lateness = append(lateness, a.at.Sub(nominal))
	}
	slices.Sort(lateness)
	t.Logf("%d deliveries; lateness median %s, max %s", len(got), lateness[len(lateness)/2], lateness[len(lateness)-1])
}
