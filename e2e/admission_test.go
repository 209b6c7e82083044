package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/recurhq/recur/jobs"
)

// TestACreatedJobWakesForNothing: once created, a job due in an hour has
// no timer but its next occurrence's: the admission's patience timer
// (10 s) is gone with the answer, so no workflow task wakes the job for
// nothing after it. Its history, read 12 s after the PUT, has no timer
// that fired and one timer running.
func TestACreatedJobWakesForNothing(t *testing.T) {
	s := newStack(t)
	s.putCollection(t)
	put := time.Now()
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/quiet", httpJob("https://example.com/", map[string]any{"frequency": "Hour"}))
	require.Equal(t, http.StatusCreated, status, body)
	time.Sleep(time.Until(put.Add(admitPatience + 2*time.Second))) // past the patience timer, had it run

	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "quiet"}
	iter := s.temporal.GetDefaultClient().GetWorkflowHistory(context.Background(), k.JobWorkflowID(), "", false,
		enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	started, ended := 0, 0
	var types []string
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		types = append(types, e.GetEventType().String())
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			started++
		case enumspb.EVENT_TYPE_TIMER_FIRED:
			t.Errorf("a timer fired: %v", types)
		case enumspb.EVENT_TYPE_TIMER_CANCELED:
			ended++
		}
	}
	t.Logf("%d events: %v", len(types), types)
	require.Equal(t, 1, started-ended, "the next occurrence's timer runs, no other: %v", types)
}

// admitPatience is workflows.admitPatience, how long a job waits for its
// collection's answer before it asks again.
const admitPatience = 10 * time.Second
