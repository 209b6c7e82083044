package activities

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/recurhq/recur/internal/azurite"
	"github.com/recurhq/recur/jobs"
)

const sqOccurrence = "job:s/rg/c/j@2026-01-01T00:00:00Z"

// sqHeaders records the headers of the requests an http.Client sends.
type sqHeaders struct {
	mu   sync.Mutex
	seen []http.Header
}

func (h *sqHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.seen = append(h.seen, r.Header.Clone())
	h.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// runStorageQueue runs the StorageQueue activity of a as a worker would.
func runStorageQueue(t *testing.T, a *Activities, m jobs.StorageQueueMessage) (jobs.HTTPResponse, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	val, err := env.ExecuteActivity(a.StorageQueue, jobs.ActionInput{
		ActionName: jobs.MainAction, Spec: jobs.ActionSpec{Type: jobs.ActionStorageQueue, QueueMessage: &m},
		OccurrenceID: sqOccurrence, Key: jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"},
		Timeout: 10 * time.Second,
	})
	var out jobs.HTTPResponse
	if err == nil {
		require.NoError(t, val.Get(&out))
	}
	return out, err
}

// sqFailure returns the application error of a failed attempt and the
// response its details carry.
func sqFailure(t *testing.T, err error) (*temporal.ApplicationError, jobs.HTTPResponse) {
	t.Helper()
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	var out jobs.HTTPResponse
	require.True(t, appErr.HasDetails(), "the failure carries the response")
	require.NoError(t, appErr.Details(&out))
	return appErr, out
}

func TestStorageQueuePutsMessageOnAzurite(t *testing.T) {
	endpoint, account, _ := azurite.Start(t)
	queue := azurite.NewQueue(t, endpoint, "orders")
	token := azurite.SAS(t, "orders", sas.QueuePermissions{Add: true})
	headers := &sqHeaders{}
	a := New(localPolicy)
	a.Client = &http.Client{Transport: headers}
	a.StorageQueueEndpoint = endpoint

	// Not base64, with characters XML escapes: it must arrive as given.
	text := `{"order": 42, "note": "<fish & chips> 'é'"}`
	out, err := runStorageQueue(t, a, jobs.StorageQueueMessage{StorageAccount: account, QueueName: "orders", SasToken: "?" + token, Message: text})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, out.StatusCode, out)
	require.Equal(t, 1, out.Attempt)
	require.NotContains(t, out.Body, "sig=")
	require.NotContains(t, strings.ToLower(out.Body), "popreceipt")
	var result struct {
		MessageID     string     `json:"messageId"`
		InsertionTime *time.Time `json:"insertionTime"`
	}
	require.NoError(t, json.Unmarshal([]byte(out.Body), &result), out.Body)
	require.NotEmpty(t, result.MessageID)
	require.NotNil(t, result.InsertionTime)

	peeked, err := queue.PeekMessages(context.Background(), &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	require.NoError(t, err)
	require.Len(t, peeked.Messages, 1)
	require.Equal(t, text, *peeked.Messages[0].MessageText)
	require.Equal(t, result.MessageID, *peeked.Messages[0].MessageID)

	require.Len(t, headers.seen, 1, "one try: Temporal retries, not the SDK")
	require.Equal(t, sqOccurrence, headers.seen[0].Get(HeaderClientRequestID))

	// A token without its '?' works as well.
	_, err = runStorageQueue(t, a, jobs.StorageQueueMessage{StorageAccount: account, QueueName: "orders", SasToken: token, Message: "second"})
	require.NoError(t, err)
	peeked, err = queue.PeekMessages(context.Background(), &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
	require.NoError(t, err)
	require.Len(t, peeked.Messages, 2)
	require.Equal(t, "second", *peeked.Messages[1].MessageText)
}

func TestStorageQueueRefusedSASFailsForGood(t *testing.T) {
	endpoint, account, _ := azurite.Start(t)
	queue := azurite.NewQueue(t, endpoint, "orders")
	azurite.NewQueue(t, endpoint, "other")
	a := New(localPolicy)
	a.StorageQueueEndpoint = endpoint

	good := azurite.SAS(t, "orders", sas.QueuePermissions{Add: true})
	sig := sasParam(t, good, "sig")
	for name, token := range map[string]string{
		"a forged signature":      strings.Replace(good, "sig=", "sig=AAAA", 1),
		"another queue's token":   azurite.SAS(t, "other", sas.QueuePermissions{Add: true}),
		"a token that only reads": azurite.SAS(t, "orders", sas.QueuePermissions{Read: true}),
		// Azure Scheduler took it at PUT, as recur now does.
		"no signature at all": "ThIsiSmYtOkeNdoyOusEe",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := runStorageQueue(t, a, jobs.StorageQueueMessage{StorageAccount: account, QueueName: "orders", SasToken: token, Message: "m"})
			appErr, out := sqFailure(t, err)
			require.True(t, appErr.NonRetryable(), "a refused token will not get better: %v", err)
			require.Equal(t, ErrTypeHTTPStatus, appErr.Type())
			require.Equal(t, http.StatusForbidden, out.StatusCode)
			require.NotEmpty(t, out.Body, "the error code")
			require.Contains(t, err.Error(), "403")
			require.Contains(t, err.Error(), "the queue service refused the sasToken", "the history says what the 403 means")
			for _, s := range []string{err.Error(), out.Status, out.Body} {
				require.NotContains(t, s, "sig=")
				require.NotContains(t, s, sig)
				if strings.Contains(token, "sig=") {
					require.NotContains(t, s, sasParam(t, token, "sig"))
				} else {
					require.NotContains(t, s, token)
				}
			}
		})
	}
	peeked, err := queue.PeekMessages(context.Background(), nil)
	require.NoError(t, err)
	require.Empty(t, peeked.Messages, "no refused message reached the queue")
}

func TestStorageQueueMissingQueueFailsForGood(t *testing.T) {
	endpoint, account, _ := azurite.Start(t)
	a := New(localPolicy)
	a.StorageQueueEndpoint = endpoint
	token := azurite.SAS(t, "absent", sas.QueuePermissions{Add: true})
	_, err := runStorageQueue(t, a, jobs.StorageQueueMessage{StorageAccount: account, QueueName: "absent", SasToken: token, Message: "m"})
	appErr, out := sqFailure(t, err)
	require.True(t, appErr.NonRetryable())
	require.Equal(t, http.StatusNotFound, out.StatusCode)
	require.Equal(t, "QueueNotFound", out.Body)
	require.NotContains(t, err.Error(), "sig=")
}

func TestStorageQueueServerErrorsAreRetryable(t *testing.T) {
	for _, code := range []int{http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusTooManyRequests, http.StatusRequestTimeout} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("x-ms-error-code", "ServerBusy")
			w.WriteHeader(code)
		}))
		a := New(localPolicy)
		a.StorageQueueEndpoint = srv.URL + "/{account}"
		_, err := runStorageQueue(t, a, jobs.StorageQueueMessage{StorageAccount: "acct", QueueName: "orders", SasToken: "sv=1&sig=s3cr3t", Message: "m"})
		srv.Close()
		appErr, out := sqFailure(t, err)
		require.False(t, appErr.NonRetryable(), "%d is retried", code)
		require.Equal(t, code, out.StatusCode)
		require.Equal(t, "ServerBusy", out.Body)
		require.NotContains(t, err.Error(), "s3cr3t")
	}
}

func TestStorageQueueNoAnswerIsRetryableAndScrubbed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	a := New(localPolicy)
	a.StorageQueueEndpoint = "http://" + addr + "/{account}"
	_, err = runStorageQueue(t, a, jobs.StorageQueueMessage{StorageAccount: "acct", QueueName: "orders", SasToken: "?sv=1&sig=s3cr3t", Message: "m"})
	appErr, _ := sqFailure(t, err)
	require.False(t, appErr.NonRetryable())
	require.Equal(t, ErrTypeTransport, appErr.Type())
	require.Contains(t, err.Error(), "http://"+addr+"/acct/orders", "the message says which queue")
	require.NotContains(t, err.Error(), "s3cr3t")
	require.NotContains(t, err.Error(), "sig=")
}

func TestStorageQueueEndpointDefaultsToAzure(t *testing.T) {
	m := &jobs.StorageQueueMessage{StorageAccount: "acct", QueueName: "orders"}
	require.Equal(t, "https://acct.queue.core.windows.net/orders", (&Activities{}).queueURL(m))
	require.Equal(t, "http://127.0.0.1:10001/acct/orders", (&Activities{StorageQueueEndpoint: "http://127.0.0.1:10001/{account}/"}).queueURL(m))
}

func TestStorageQueueScrubSAS(t *testing.T) {
	const token = "sv=2018-03-28&sp=a&sig=abc%2Bdef%3D"
	for _, s := range []string{
		`Post "http://127.0.0.1:1/acct/orders/messages?sv=2018-03-28&sp=a&sig=abc%2Bdef%3D": dial tcp: refused`,
		`failed: sig=abc+def= rest`,
		`SIG=abc%2Bdef%3D`,
		"token " + token,
	} {
		got := scrubSAS(s, token)
		require.NotContains(t, strings.ToLower(got), "sig=", got)
		require.NotContains(t, got, "abc", got)
	}
	require.Equal(t, `Post "http://127.0.0.1:1/acct/orders/messages": dial tcp: refused`,
		scrubSAS(`Post "http://127.0.0.1:1/acct/orders/messages?sv=1&sig=x": dial tcp: refused`, "nope"))
}

func sasParam(t *testing.T, token, name string) string {
	t.Helper()
	for _, kv := range strings.Split(token, "&") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	t.Fatalf("no %s in the token", name)
	return ""
}
