package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/internal/azurite"
)

// queueTexts returns the texts of the messages on q, oldest first.
func queueTexts(t *testing.T, q *azqueue.QueueClient) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := q.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	require.NoError(t, err)
	var texts []string
	for _, m := range resp.Messages {
		texts = append(texts, *m.MessageText)
	}
	return texts
}

// requireNoSASToken fails if v, written as JSON, shows the SAS token.
func requireNoSASToken(t *testing.T, v any, token string) {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	q, err := url.ParseQuery(token)
	require.NoError(t, err)
	require.NotContains(t, string(data), "sasToken")
	require.NotContains(t, string(data), "sig=")
	require.NotContains(t, string(data), q.Get("sig"))
	require.NotContains(t, string(data), url.QueryEscape(q.Get("sig")))
}

// TestStorageQueueActionEndToEnd: a job whose action is storageQueue puts
// its message on a real (Azurite) queue with a real SAS token, and a job
// whose HTTP action fails puts its storageQueue error action's message.
// No API answer shows the token.
func TestStorageQueueActionEndToEnd(t *testing.T) {
	endpoint, account, _ := azurite.Start(t)
	s := newStack(t, func(a *activities.Activities) { a.StorageQueueEndpoint = endpoint })
	mainQueue := azurite.NewQueue(t, endpoint, "recur-main")
	errQueue := azurite.NewQueue(t, endpoint, "recur-errors")
	mainSAS := azurite.SAS(t, "recur-main", sas.QueuePermissions{Add: true})
	errSAS := azurite.SAS(t, "recur-errors", sas.QueuePermissions{Add: true})
	failing := newFailingTarget(t)

	status, _ := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status)
	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)

	mainPath := collectionPath + "/jobs/to-queue"
	status, job := s.do(t, http.MethodPut, mainPath, map[string]any{"properties": map[string]any{
		"startTime": start.Format(time.RFC3339),
		"action": map[string]any{"type": "storageQueue", "queueMessage": map[string]any{
			"storageAccount": account, "queueName": "recur-main", "sasToken": "?" + mainSAS,
			"message": `{"report": "daily", "at": "<now>"}`,
		}},
	}})
	require.Equal(t, http.StatusCreated, status, job)
	requireNoSASToken(t, job, mainSAS)
	require.Equal(t, "recur-main", path(job, "properties", "action", "queueMessage", "queueName"))

	errPath := collectionPath + "/jobs/with-error-action"
	status, job = s.do(t, http.MethodPut, errPath, map[string]any{"properties": map[string]any{
		"startTime": start.Format(time.RFC3339),
		"action": map[string]any{
			"type":        "Http",
			"request":     map[string]any{"uri": failing.URL + "/work", "method": "POST"},
			"retryPolicy": map[string]any{"retryType": "None"},
			"errorAction": map[string]any{"type": "StorageQueue", "queueMessage": map[string]any{
				"storageAccount": account, "queueName": "recur-errors", "sasToken": errSAS, "message": "work failed",
			}},
		},
	}})
	require.Equal(t, http.StatusCreated, status, job)
	requireNoSASToken(t, job, errSAS)

	require.Eventually(t, func() bool { return len(queueTexts(t, mainQueue)) > 0 },
		30*time.Second, 200*time.Millisecond, "the action put no message")
	require.Equal(t, []string{`{"report": "daily", "at": "<now>"}`}, queueTexts(t, mainQueue))
	require.Eventually(t, func() bool { return len(queueTexts(t, errQueue)) > 0 },
		30*time.Second, 200*time.Millisecond, "the error action put no message; the failing target got %d requests", len(failing.hits()))
	require.Equal(t, []string{"work failed"}, queueTexts(t, errQueue))

	require.Eventually(t, func() bool {
		status, job = s.do(t, http.MethodGet, mainPath, nil)
		return status == http.StatusOK && path(job, "properties", "state") == "completed"
	}, 20*time.Second, 200*time.Millisecond, "job: %v", job)
	require.EqualValues(t, 1, path(job, "properties", "status", "executionCount"))
	require.EqualValues(t, 0, path(job, "properties", "status", "failureCount"))
	requireNoSASToken(t, job, mainSAS)

	var body map[string]any
	require.Eventually(t, func() bool {
		status, body = s.get(t, mainPath+"/history", nil)
		return status == http.StatusOK && len(historyRows(t, body)) == 1
	}, 20*time.Second, 200*time.Millisecond, "history: %v", body)
	row := historyRows(t, body)[0]
	require.Equal(t, "Completed", row["status"], "row: %v", row)
	require.Contains(t, row["message"], "201", "row: %v", row)
	require.Contains(t, row["message"], "messageId", "row: %v", row)
	requireNoSASToken(t, body, mainSAS)

	require.Eventually(t, func() bool {
		status, job = s.do(t, http.MethodGet, errPath, nil)
		return status == http.StatusOK && path(job, "properties", "state") == "faulted"
	}, 20*time.Second, 200*time.Millisecond, "job: %v", job)
	requireNoSASToken(t, job, errSAS)
	require.Equal(t, "recur-errors", path(job, "properties", "action", "errorAction", "queueMessage", "queueName"))
	require.Eventually(t, func() bool {
		status, body = s.get(t, errPath+"/history", nil)
		return status == http.StatusOK && len(historyRows(t, body)) == 2
	}, 20*time.Second, 200*time.Millisecond, "history: %v", body)
	rows := historyRows(t, body)
	require.Equal(t, "ErrorAction", rows[0]["actionName"], "rows: %v", rows)
	require.Contains(t, rows[0]["message"], "messageId", "rows: %v", rows)
	requireNoSASToken(t, body, errSAS)
	require.Len(t, failing.hits(), 1, "retryType None: one attempt")
}
