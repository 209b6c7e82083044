package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/temporal"

	"github.com/recurhq/recur/internal/recurtest"
	"github.com/recurhq/recur/jobs"
)

// TestAWriteWhoseClientLeftDoesNotStallItsJob: a client sends a PUT to a
// job its worker holds and hangs up before the answer, while the server
// hands the update's workflow task to its matching service (held there a
// moment, as a busy matching service holds it). Temporal makes that task
// in the update's own call, and a call canceled then leaves it in no queue
// until its sticky schedule-to-start timeout: here 2 minutes, as recur
// dev's 5, with every later write to the job waiting behind it. The next
// PUT answers, and both took effect.
func TestAWriteWhoseClientLeftDoesNotStallItsJob(t *testing.T) {
	holds := &serverHolds{}
	s := newStackWith(t, recurtest.Config{StickyTimeout: 2 * time.Minute,
		ServerOptions: []temporal.ServerOption{temporal.WithClientFactoryProvider(holds)}})
	s.putCollection(t)
	const name = collectionPath + "/jobs/left"
	define := func(frequency string) map[string]any {
		return httpJob("http://127.0.0.1:9/", map[string]any{"frequency": frequency})
	}
	k := s.defineHeld(t, "left", define("Hour"))

	holds.holdAdds(2 * time.Second)
	ctx, hangUp := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer hangUp()
	data, err := json.Marshal(define("Day"))
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, s.api.URL+name+"?api-version=2016-03-01", bytes.NewReader(data))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("the PUT answered %d within 500 ms: its task was not held", resp.StatusCode)
	}
	holds.holdAdds(0)

	status, body := s.do(t, http.MethodPut, name, define("Week"))
	require.Equal(t, http.StatusOK, status, "the next write to the job: %v", body)
	require.Equal(t, "week", path(body, "properties", "recurrence", "frequency"))
	var updates int
	iter := s.temporal.GetDefaultClient().GetWorkflowHistory(context.Background(), k.JobWorkflowID(), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED {
			updates++
		}
	}
	require.Equal(t, 3, updates, "the first PUT, the one whose client left and the next (the creation is a start)")
}

// defineHeld creates the job name of collectionPath as job defines it and
// returns its key once its worker holds it: a job due in an hour delays
// its first task, and a second PUT runs it.
func (s *stack) defineHeld(t *testing.T, name string, job map[string]any) jobs.Key {
	t.Helper()
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/"+name, job)
	require.Equal(t, http.StatusCreated, status, body)
	status, body = s.do(t, http.MethodPut, collectionPath+"/jobs/"+name, job)
	require.Equal(t, http.StatusOK, status, body)
	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: name}
	require.Eventually(t, func() bool {
		return slices.Contains(s.lastOccurrence(t, k.JobWorkflowID()), enumspb.EVENT_TYPE_TIMER_STARTED)
	}, 10*time.Second, 50*time.Millisecond, "the job's first task ran: its worker holds it")
	return k
}
