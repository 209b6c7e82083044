package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/tracing"
)

// TestAHealthyOccurrenceWritesOneUpsert: a healthy occurrence of a job
// that has run before writes its history rows and its status, health
// included, in one upsert of its memo and upserts no search attribute;
// answered within the action's budget it costs its job 7 history events
// (its timer's firing, one workflow task, the next timer, the first
// attempt's marker and the memo's upsert). Each upsert is an event and a
// visibility write at every occurrence of every job. Traced, it costs
// the same events: its trace needs nothing of the workflow.
func TestAHealthyOccurrenceWritesOneUpsert(t *testing.T) {
	t.Parallel()
	t.Run("untraced", func(t *testing.T) {
		t.Parallel()
		healthyOccurrence(t)
	})
	t.Run("traced", func(t *testing.T) {
		t.Parallel()
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(tracing.IDGenerator()))
		t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		healthyOccurrence(t, func(a *activities.Activities) { a.Tracer = tp.Tracer(tracing.Scope) })
		k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "steady"}
		var occurrences int
		for _, s := range exp.GetSpans() {
			if s.Name == "occurrence" && s.SpanContext.TraceID() == tracing.TraceID(jobs.OccurrenceID(k.JobWorkflowID(), s.StartTime)) {
				occurrences++
			}
		}
		require.GreaterOrEqual(t, occurrences, 2, "each occurrence was traced")
	})
}

// healthyOccurrence runs a job twice with activities configured by opts
// and checks the second occurrence's events.
func healthyOccurrence(t *testing.T, opts ...func(*activities.Activities)) {
	s := newStack(t, opts...)
	target, _ := newTarget(t)
	s.putCollection(t)
	// The first occurrence plans the next hundred (a side effect) and sets
	// RecurStatus; the second is the job's steady state.
	start := time.Now().UTC().Add(5 * time.Second).Truncate(time.Second)
	job := httpJob(target.URL, map[string]any{"frequency": "Minute"})
	job["properties"].(map[string]any)["startTime"] = start.Format(time.RFC3339)
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/steady", job)
	require.Equal(t, http.StatusCreated, status, body)
	require.Eventually(t, func() bool {
		status, body = s.do(t, http.MethodGet, collectionPath+"/jobs/steady", nil)
		return status == http.StatusOK && path(body, "properties", "status", "executionCount") == float64(2)
	}, time.Until(start)+100*time.Second, 200*time.Millisecond, "two occurrences ran: %v", body)

	k := jobs.Key{Subscription: "sub1", ResourceGroup: "rg1", Collection: "coll1", Job: "steady"}
	var window []enumspb.EventType
	require.Eventually(t, func() bool {
		window = s.lastOccurrence(t, k.JobWorkflowID())
		// A task's commands are recorded with its completion.
		return slices.Contains(window, enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
	}, 10*time.Second, 100*time.Millisecond, "the second occurrence's task completed")
	counts := map[enumspb.EventType]int{}
	for _, e := range window {
		counts[e]++
	}
	t.Logf("a healthy occurrence: %d events: %s", len(window), eventNames(window))
	require.Equal(t, 1, counts[enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED], "one upsert of the memo: %s", eventNames(window))
	require.Zero(t, counts[enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES], "no search attribute changes: %s", eventNames(window))
	if counts[enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED] == 0 {
		require.Len(t, window, 7, "answered within the budget: %s", eventNames(window))
	}
}

// lastOccurrence returns the types of the events of the workflow's
// present run from its last timer's firing on: the last occurrence of a
// job that does nothing else.
func (s *stack) lastOccurrence(t *testing.T, workflowID string) []enumspb.EventType {
	t.Helper()
	var window []enumspb.EventType
	iter := s.temporal.GetDefaultClient().GetWorkflowHistory(context.Background(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		if e.GetEventType() == enumspb.EVENT_TYPE_TIMER_FIRED {
			window = nil
		}
		window = append(window, e.GetEventType())
	}
	return window
}

func eventNames(types []enumspb.EventType) string {
	names := make([]string, len(types))
	for i, e := range types {
		names[i] = e.String()
	}
	return fmt.Sprint(names)
}
