package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/jobs"
)

func httpJob(uri string, recurrence map[string]any) map[string]any {
	props := map[string]any{
		"startTime": time.Now().UTC().Add(time.Hour).Truncate(time.Second).Format(time.RFC3339),
		"action":    map[string]any{"type": "Http", "request": map[string]any{"uri": uri, "method": "GET"}},
	}
	if recurrence != nil {
		props["recurrence"] = recurrence
	}
	return map[string]any{"properties": props}
}

func TestFreeSkuQuotas(t *testing.T) {
	s := newStack(t)
	status, coll := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{"sku": map[string]any{"name": "free"}}})
	require.Equal(t, http.StatusCreated, status, coll)
	require.EqualValues(t, 5, path(coll, "properties", "quota", "maxJobCount"))
	require.Equal(t, "Hour", path(coll, "properties", "quota", "maxRecurrence", "frequency"))

	t.Run("a job more often than hourly is refused, even when frequency x interval looks fine", func(t *testing.T) {
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/often", httpJob("http://127.0.0.1:9/", map[string]any{
			"frequency": "Day", "schedule": map[string]any{"hours": []int{5}, "minutes": []int{15, 45}},
		}))
		require.Equal(t, http.StatusConflict, status, body)
		require.Equal(t, "QuotaExceeded", path(body, "error", "code"))
	})
	t.Run("the sixth job is refused", func(t *testing.T) {
		for i := range 5 {
			status, body := s.do(t, http.MethodPut, fmt.Sprintf("%s/jobs/j%d", collectionPath, i), httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"}))
			require.Equal(t, http.StatusCreated, status, body)
		}
		status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/j5", httpJob("http://127.0.0.1:9/", nil))
		require.Equal(t, http.StatusConflict, status, body)
		require.Contains(t, path(body, "error", "message"), "maximum of 5 jobs")
		status, _ = s.do(t, http.MethodPut, collectionPath+"/jobs/j0", httpJob("http://127.0.0.1:9/", nil))
		require.Equal(t, http.StatusOK, status, "redefining an existing job does not count twice")
	})
	t.Run("a quota above the sku's is a 400", func(t *testing.T) {
		status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{
			"sku": map[string]any{"name": "Free"}, "quota": map[string]any{"maxJobCount": 6}}})
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Equal(t, "properties.quota.maxJobCount", path(body, "error", "target"))
	})
}

// TestConcurrentPutsRespectMaxJobCount: 50 PUTs at once into a collection
// allowing 10 jobs; exactly 10 succeed, the rest get 409.
func TestConcurrentPutsRespectMaxJobCount(t *testing.T) {
	s := newStack(t)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{
		"sku": map[string]any{"name": "Standard"}, "quota": map[string]any{"maxJobCount": 10}}})
	require.Equal(t, http.StatusCreated, status, body)

	var wg sync.WaitGroup
	statuses := make([]int, 50)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var body map[string]any
			statuses[i], body = s.do(t, http.MethodPut, fmt.Sprintf("%s/jobs/race-%02d", collectionPath, i), httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"}))
			if statuses[i] >= 500 {
				t.Logf("PUT %d: %d %v", i, statuses[i], body)
			}
		}()
	}
	wg.Wait()
	counts := map[int]int{}
	for _, st := range statuses {
		counts[st]++
	}
	require.Equal(t, map[int]int{http.StatusCreated: 10, http.StatusConflict: 40}, counts)
	require.Eventually(t, func() bool {
		_, list := s.do(t, http.MethodGet, collectionPath+"/jobs", nil)
		items, _ := list["value"].([]any)
		return len(items) == 10
	}, 20*time.Second, 250*time.Millisecond, "a later list shows 10 jobs")
}

// TestAdmissionsCarryOnAcrossContinueAsNew: 20 jobs, each created and
// deleted 26 times and created once more, at the same time: their leaves
// alone are more messages than a collection's workflow takes in one run
// (the claims of the creations come in batches): it continues as new
// among them, and every request is answered, the collection holds its 20
// jobs exactly and refuses a 21st.
func TestAdmissionsCarryOnAcrossContinueAsNew(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 1060 creations and deletions (about 20 s)")
	}
	s := newStack(t)
	status, body := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{
		"sku": map[string]any{"name": "Standard"}, "quota": map[string]any{"maxJobCount": 20}}})
	require.Equal(t, http.StatusCreated, status, body)

	const rounds = 27
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[string]int{}
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := fmt.Sprintf("%s/jobs/job-%02d", collectionPath, i)
			for round := range rounds {
				requests := []string{http.MethodPut, http.MethodDelete}
				if round == rounds-1 {
					requests = requests[:1]
				}
				for _, method := range requests {
					var body any
					if method == http.MethodPut {
						body = httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Hour"})
					}
					st, answer := s.do(t, method, path, body)
					if st >= 300 {
						t.Logf("%s %s: %d %v", method, path, st, answer)
					}
					mu.Lock()
					statuses[fmt.Sprintf("%s %d", method, st)]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	require.Equal(t, map[string]int{"PUT 201": 20 * rounds, "DELETE 200": 20 * (rounds - 1)}, statuses)

	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/one-too-many", httpJob("http://127.0.0.1:9/", nil))
	require.Equal(t, http.StatusConflict, status, body)
	_, list := s.do(t, http.MethodGet, collectionPath+"/jobs", nil)
	items, _ := list["value"].([]any)
	require.Len(t, items, 20)

	c := s.temporal.GetDefaultClient()
	query := fmt.Sprintf(`WorkflowId = %q AND ExecutionStatus = "ContinuedAsNew"`, jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1"}.CollectionWorkflowID())
	require.Eventually(t, func() bool {
		resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		return err == nil && len(resp.GetExecutions()) >= 1
	}, 10*time.Second, 200*time.Millisecond, "the collection's workflow continued as new")
}

// TestARedefinitionMeetsTheCollectionsNewMaxRecurrence: a job redefined
// within the terms it last heard of does not ask its collection again; a
// collection PUT that tightens maxRecurrence tells its jobs, after which
// a redefinition more frequent is refused, and one that loosens it admits
// at once a redefinition the job's old terms did not allow (it asks).
func TestARedefinitionMeetsTheCollectionsNewMaxRecurrence(t *testing.T) {
	s := newStack(t)
	quota := func(frequency string) map[string]any {
		return map[string]any{"properties": map[string]any{"sku": map[string]any{"name": "Standard"},
			"quota": map[string]any{"maxRecurrence": map[string]any{"frequency": frequency, "interval": 1}}}}
	}
	status, body := s.do(t, http.MethodPut, collectionPath, quota("Minute"))
	require.Equal(t, http.StatusCreated, status, body)
	jobPath := collectionPath + "/jobs/j"
	every := func(minutes int) map[string]any {
		return httpJob("http://127.0.0.1:9/", map[string]any{"frequency": "Minute", "interval": minutes})
	}
	status, body = s.do(t, http.MethodPut, jobPath, every(120))
	require.Equal(t, http.StatusCreated, status, body)

	status, body = s.do(t, http.MethodPut, collectionPath, quota("Hour"))
	require.Equal(t, http.StatusOK, status, body)
	require.Eventually(t, func() bool {
		status, body = s.do(t, http.MethodPut, jobPath, every(30))
		return status == http.StatusConflict
	}, 10*time.Second, 100*time.Millisecond, "the job hears of the new quota: %d %v", status, body)
	require.Equal(t, "QuotaExceeded", path(body, "error", "code"))
	status, body = s.do(t, http.MethodPut, jobPath, every(90))
	require.Equal(t, http.StatusOK, status, body)

	status, body = s.do(t, http.MethodPut, collectionPath, quota("Minute"))
	require.Equal(t, http.StatusOK, status, body)
	status, body = s.do(t, http.MethodPut, jobPath, every(30))
	require.Equal(t, http.StatusOK, status, "a quota loosened admits at once: %v", body)
}

// TestCollectionsPerSubscriptionCap: with a cap of 3 collections a
// subscription, the fourth PUT that would create one is a 409
// QuotaExceeded naming the cap, and creates nothing; PUT to a collection
// that exists still updates it, another subscription still creates, and
// a DELETE makes room again.
func TestCollectionsPerSubscriptionCap(t *testing.T) {
	s := newStackWith(t, recurtest.Config{MaxCollectionsPerSubscription: 3})
	coll := map[string]any{"location": "westus", "properties": map[string]any{}}
	var created []string
	for _, name := range []string{"c1", "c2", "c3"} {
		status, body := s.do(t, http.MethodPut, rg1Path+"/"+name, coll)
		require.Equal(t, http.StatusCreated, status, "%s: %v", name, body)
		created = append(created, rg1Path+"/"+name)
	}
	s.listEventually(t, subscriptionPath, nil, listIDs, created)

	status, body := s.do(t, http.MethodPut, rg2Path+"/c4", coll)
	require.Equal(t, http.StatusConflict, status, "the fourth collection of sub1: %v", body)
	require.Equal(t, "QuotaExceeded", path(body, "error", "code"))
	require.Contains(t, path(body, "error", "message"), "subscription sub1 has 3 job collections")
	status, body = s.do(t, http.MethodGet, rg2Path+"/c4", nil)
	require.Equal(t, http.StatusNotFound, status, "the refused PUT created nothing: %v", body)

	status, body = s.do(t, http.MethodPut, rg1Path+"/c2", map[string]any{"location": "westus",
		"properties": map[string]any{"sku": map[string]any{"name": "P20Premium"}}})
	require.Equal(t, http.StatusOK, status, "an update at the cap: %v", body)
	status, body = s.do(t, http.MethodPut, "/subscriptions/sub2/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/c1", coll)
	require.Equal(t, http.StatusCreated, status, "another subscription has its own cap: %v", body)

	status, body = s.do(t, http.MethodDelete, rg1Path+"/c1", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Eventually(t, func() bool {
		status, body = s.do(t, http.MethodPut, rg2Path+"/c4", coll)
		return status == http.StatusCreated
	}, 20*time.Second, 200*time.Millisecond, "a DELETE makes room once its workflow has ended: last %d %v", status, body)
}
