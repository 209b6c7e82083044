package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/internal/servicebusfake"
)

// TestServiceBusTopicAsErrorAction: a job whose HTTP action fails for
// good sends its error action to a Service Bus topic (a local server that
// checks the SAS signature, as the real service's REST send API does);
// the response never shows the SAS key.
func TestServiceBusTopicAsErrorAction(t *testing.T) {
	bus := servicebusfake.Start(t)
	bus.AddKey("RootManageSharedAccessKey", "s3cr3t-key")
	bus.AddEntity("recurtest", "alerts")
	s := newStack(t, func(a *activities.Activities) { a.ServiceBusEndpoint = bus.Endpoint() })
	status, _ := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status)

	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	status, body := s.do(t, http.MethodPut, collectionPath+"/jobs/alerting", map[string]any{"properties": map[string]any{
		"startTime": start.Format(time.RFC3339),
		"action": map[string]any{
			"type": "Http", "request": map[string]any{"uri": "http://127.0.0.1:9/down", "method": "GET"},
			"retryPolicy": map[string]any{"retryType": "None"},
			"errorAction": map[string]any{"type": "serviceBusTopic", "serviceBusTopicMessage": map[string]any{
				"namespace": "recurtest", "topicPath": "alerts", "message": "the nightly job failed",
				"authentication":            map[string]any{"sasKeyName": "RootManageSharedAccessKey", "sasKey": "s3cr3t-key", "type": "SharedAccessKey"},
				"brokeredMessageProperties": map[string]any{"label": "alert"},
				"customMessageProperties":   map[string]string{"Severity": "high"},
			}},
		},
	}})
	require.Equal(t, http.StatusCreated, status, body)
	raw := strings.ToLower(strings.Join(strings.Fields(strings.TrimSpace(toJSON(t, body))), ""))
	require.NotContains(t, raw, "s3cr3t-key", "the SAS key is never echoed")

	require.Eventually(t, func() bool { return len(bus.Messages()) == 1 }, 30*time.Second, 200*time.Millisecond)
	m := bus.Messages()[0]
	require.Equal(t, "the nightly job failed", m.Body)
	require.Equal(t, "alert", m.BrokerProperties["Label"])
	require.Equal(t, "job:sub1/rg1/coll1/alerting@"+start.Format(time.RFC3339)+"/errorAction", m.BrokerProperties["MessageId"],
		"the occurrence ID is the idempotency key Service Bus duplicate detection uses")
	require.Equal(t, "high", m.Properties["Severity"])
	require.Eventually(t, func() bool {
		_, job := s.do(t, http.MethodGet, collectionPath+"/jobs/alerting", nil)
		return path(job, "properties", "state") == "faulted"
	}, 20*time.Second, 200*time.Millisecond)
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}
