package jobs_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

const testSAS = "sv=2018-03-28&se=2030-01-01T00%3A00%3A00Z&sp=a&sig=c2VjcmV0LXNpZ25hdHVyZQ%3D%3D"

func queueJob(m *jobs.StorageQueueMessage) jobs.Job {
	return jobs.Job{Properties: jobs.Properties{Action: &jobs.Action{ActionSpec: jobs.ActionSpec{
		Type: "storagequeue", QueueMessage: m,
	}}}}
}

func validQueueMessage() *jobs.StorageQueueMessage {
	return &jobs.StorageQueueMessage{StorageAccount: "acct01", QueueName: "orders-in-2", SasToken: "?" + testSAS, Message: "hello"}
}

func TestStorageQueueValidate(t *testing.T) {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	t.Run("valid", func(t *testing.T) {
		for name, mutate := range map[string]func(*jobs.StorageQueueMessage){
			"as given":           func(*jobs.StorageQueueMessage) {},
			"sasToken without ?": func(m *jobs.StorageQueueMessage) { m.SasToken = testSAS },
			"shortest names":     func(m *jobs.StorageQueueMessage) { m.StorageAccount, m.QueueName = "abc", "q1z" },
			"longest names": func(m *jobs.StorageQueueMessage) {
				m.StorageAccount, m.QueueName = strings.Repeat("a", 24), strings.Repeat("q", 63)
			},
			"queue starting with a digit":  func(m *jobs.StorageQueueMessage) { m.QueueName = "1queue" },
			"a message of 64 KiB":          func(m *jobs.StorageQueueMessage) { m.Message = strings.Repeat("x", jobs.MaxQueueMessage) },
			"a message that is not base64": func(m *jobs.StorageQueueMessage) { m.Message = `{"order": 42, "note": "<&>"}` },
		} {
			t.Run(name, func(t *testing.T) {
				m := validQueueMessage()
				mutate(m)
				j := queueJob(m)
				require.NoError(t, j.Accept(k, now))
				require.Equal(t, jobs.ActionStorageQueue, j.Properties.Action.Type)
			})
		}
	})

	for _, tc := range []struct {
		name, target string
		mutate       func(*jobs.StorageQueueMessage)
	}{
		{"account too short", "storageAccount", func(m *jobs.StorageQueueMessage) { m.StorageAccount = "ab" }},
		{"account too long", "storageAccount", func(m *jobs.StorageQueueMessage) { m.StorageAccount = strings.Repeat("a", 25) }},
		{"account upper case", "storageAccount", func(m *jobs.StorageQueueMessage) { m.StorageAccount = "Account1" }},
		{"account with a hyphen", "storageAccount", func(m *jobs.StorageQueueMessage) { m.StorageAccount = "my-account" }},
		{"account missing", "storageAccount", func(m *jobs.StorageQueueMessage) { m.StorageAccount = "" }},
		{"queue too short", "queueName", func(m *jobs.StorageQueueMessage) { m.QueueName = "qq" }},
		{"queue too long", "queueName", func(m *jobs.StorageQueueMessage) { m.QueueName = strings.Repeat("q", 64) }},
		{"queue upper case", "queueName", func(m *jobs.StorageQueueMessage) { m.QueueName = "Orders" }},
		{"queue leading hyphen", "queueName", func(m *jobs.StorageQueueMessage) { m.QueueName = "-orders" }},
		{"queue trailing hyphen", "queueName", func(m *jobs.StorageQueueMessage) { m.QueueName = "orders-" }},
		{"queue double hyphen", "queueName", func(m *jobs.StorageQueueMessage) { m.QueueName = "ord--ers" }},
		{"queue underscore", "queueName", func(m *jobs.StorageQueueMessage) { m.QueueName = "ord_ers" }},
		{"queue missing", "queueName", func(m *jobs.StorageQueueMessage) { m.QueueName = "" }},
		{"sasToken missing", "sasToken", func(m *jobs.StorageQueueMessage) { m.SasToken = "" }},
		{"sasToken only ?", "sasToken", func(m *jobs.StorageQueueMessage) { m.SasToken = "?" }},
		{"message missing", "message", func(m *jobs.StorageQueueMessage) { m.Message = "" }},
		{"message over 64 KiB", "message", func(m *jobs.StorageQueueMessage) { m.Message = strings.Repeat("x", jobs.MaxQueueMessage+1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := validQueueMessage()
			tc.mutate(m)
			j := queueJob(m)
			var e *jobs.Error
			require.ErrorAs(t, j.Accept(k, now), &e)
			require.Equal(t, jobs.CodeInvalidRequest, e.Code)
			require.Equal(t, "properties.action.queueMessage."+tc.target, e.Target)
			require.NotContains(t, e.Message, "secretish", "the error never quotes the SAS token")
			require.NotContains(t, e.Message, "c2VjcmV0", "the error never quotes the SAS token")
		})
	}

	// Azure Scheduler took any string as a token (its recorded traffic has
	// "ThIsiSmYtOkeNdoyOusEe"); the queue service judges it at run time.
	for _, token := range []string{"ThIsiSmYtOkeNdoyOusEe", "sv=2018-03-28&sp=a&secretish=1", "sig=%zz-secretish"} {
		m := validQueueMessage()
		m.SasToken = token
		j := queueJob(m)
		require.NoError(t, j.Accept(k, now), token)
		require.Equal(t, token, j.Properties.Action.QueueMessage.SasToken, "kept as given")
	}

	t.Run("queueMessage missing", func(t *testing.T) {
		j := queueJob(nil)
		var e *jobs.Error
		require.ErrorAs(t, j.Accept(k, now), &e)
		require.Equal(t, "properties.action.queueMessage", e.Target)
	})
	t.Run("as the error action", func(t *testing.T) {
		j := queueJob(validQueueMessage())
		m := validQueueMessage()
		m.QueueName = "Bad"
		j.Properties.Action.ErrorAction = &jobs.ActionSpec{Type: "StorageQueue", QueueMessage: m}
		var e *jobs.Error
		require.ErrorAs(t, j.Accept(k, now), &e)
		require.Equal(t, "properties.action.errorAction.queueMessage.queueName", e.Target)
	})
}

func TestStorageQueueRedacted(t *testing.T) {
	j := queueJob(validQueueMessage())
	j.Properties.Action.ErrorAction = &jobs.ActionSpec{Type: "StorageQueue", QueueMessage: validQueueMessage()}
	before, err := json.Marshal(j)
	require.NoError(t, err)
	require.Contains(t, string(before), "c2VjcmV0", "the stored definition keeps the token")

	for name, r := range map[string]jobs.Job{"Redacted": j.Redacted(), "Public": j.Public()} {
		data, err := json.Marshal(r)
		require.NoError(t, err)
		require.NotContains(t, string(data), "c2VjcmV0", name)
		require.NotContains(t, string(data), "sasToken", name)
		require.NotContains(t, string(data), "sig=", name)
		require.Equal(t, "orders-in-2", r.Properties.Action.QueueMessage.QueueName, name)
		require.Equal(t, "acct01", r.Properties.Action.ErrorAction.QueueMessage.StorageAccount, name)
		require.Equal(t, "hello", r.Properties.Action.QueueMessage.Message, name)
	}

	after, err := json.Marshal(j)
	require.NoError(t, err)
	require.JSONEq(t, string(before), string(after), "Redacted leaves the stored definition whole")
}
