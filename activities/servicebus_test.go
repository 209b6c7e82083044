package activities

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/recurhq/recur/internal/servicebusfake"
	"github.com/recurhq/recur/jobs"
)

const (
	sbOccurrence = "job:s/rg/c/j@2026-01-01T00:00:00Z"
	sbKeyName    = "send"
	sbKey        = "k3y+/=secret"
)

// newServiceBus returns a fake Service Bus with namespace contoso-ns, the
// queue orders, the topic events and the key sbKey, and Activities using it.
func newServiceBus(t *testing.T) (*servicebusfake.Server, *Activities) {
	t.Helper()
	sb := servicebusfake.Start(t)
	sb.AddKey(sbKeyName, sbKey)
	sb.AddEntity("contoso-ns", "orders")
	sb.AddEntity("contoso-ns", "events")
	return sb, &Activities{Client: sb.Client(), ServiceBusEndpoint: sb.Endpoint()}
}

// sbAction returns a validated Service Bus action: a topic's when topic.
func sbAction(t *testing.T, topic bool, edit func(*jobs.ServiceBusMessage)) jobs.ActionSpec {
	t.Helper()
	m := &jobs.ServiceBusMessage{Namespace: "contoso-ns", Message: "hello",
		Authentication: &jobs.ServiceBusAuthentication{SasKeyName: sbKeyName, SasKey: sbKey}}
	spec := jobs.ActionSpec{Type: jobs.ActionServiceBusQueue, ServiceBusQueueMessage: m}
	m.QueueName = "orders"
	if topic {
		m.QueueName, m.TopicPath = "", "events"
		spec = jobs.ActionSpec{Type: jobs.ActionServiceBusTopic, ServiceBusTopicMessage: m}
	}
	if edit != nil {
		edit(m)
	}
	j := jobs.Job{Properties: jobs.Properties{Action: &jobs.Action{ActionSpec: spec}}}
	require.NoError(t, j.Accept(jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}, time.Now()))
	return j.Properties.Action.ActionSpec
}

// runServiceBus runs the ServiceBus activity of a as a worker would.
func runServiceBus(t *testing.T, a *Activities, spec jobs.ActionSpec, action string) (jobs.HTTPResponse, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	val, err := env.ExecuteActivity(a.ServiceBus, jobs.ActionInput{
		ActionName: action, Spec: spec, OccurrenceID: sbOccurrence,
		Key: jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}, Timeout: 10 * time.Second,
	})
	var out jobs.HTTPResponse
	if err == nil {
		require.NoError(t, val.Get(&out))
	}
	return out, err
}

func TestServiceBusSASTokenKnownAnswer(t *testing.T) {
	// Worked by hand from the documented algorithm (and checked with
	// Python's hmac, base64 and urllib.parse.quote_plus):
	//   sr  = lower(urlencode("https://Contoso-NS.servicebus.windows.net/Orders/Sub"))
	//   sig = base64(HMAC-SHA256("k3y+/=secret", sr + "\n" + "1767225600"))
	const sr = "https%3a%2f%2fcontoso-ns.servicebus.windows.net%2forders%2fsub"
	const sig = "goGhEjWLRv9zciRN13tUlCZRTc1lvvk4OCsbj5vR0/w="
	mac := hmac.New(sha256.New, []byte(sbKey))
	mac.Write([]byte(sr + "\n1767225600"))
	require.Equal(t, sig, base64.StdEncoding.EncodeToString(mac.Sum(nil)), "the known answer itself")

	token, gotSig := SASToken("https://Contoso-NS.servicebus.windows.net/Orders/Sub", "RootManageSharedAccessKey", sbKey,
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	require.Equal(t, sig, gotSig)
	require.Equal(t, "SharedAccessSignature sr="+sr+
		"&sig=goGhEjWLRv9zciRN13tUlCZRTc1lvvk4OCsbj5vR0%2Fw%3D&se=1767225600&skn=RootManageSharedAccessKey", token)

	// Any key name is taken, as Azure Scheduler took it: one that is not
	// Azure's kind cannot add a parameter to the token.
	token, _ = SASToken("https://contoso-ns.servicebus.windows.net/orders", "a&sig=x\r\nX: 1", sbKey, time.Unix(1767225600, 0))
	require.True(t, strings.HasSuffix(token, "&se=1767225600&skn=a%26sig%3Dx%0D%0AX%3A+1"), token)
	require.Equal(t, 1, strings.Count(token, "&sig="))
}

func TestServiceBusQueueSend(t *testing.T) {
	sb, a := newServiceBus(t)
	spec := sbAction(t, false, func(m *jobs.ServiceBusMessage) {
		m.BrokeredMessageProperties = map[string]any{"Label": "nightly", "contentType": "application/json",
			"timeToLive": "PT1M30S", "scheduledEnqueueTimeUtc": "2026-01-01T02:00:00+02:00", "forcePersistence": true}
		m.CustomMessageProperties = map[string]string{"Priority": "High", "Customer": `12345,"ABC"`}
	})
	out, err := runServiceBus(t, a, spec, jobs.MainAction)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, out.StatusCode)
	require.Equal(t, 1, out.Attempt)

	msgs := sb.Messages()
	require.Len(t, msgs, 1)
	m := msgs[0]
	require.Equal(t, "orders", m.Entity)
	require.Equal(t, "hello", m.Body)
	require.Equal(t, "application/json", m.ContentType)
	require.Equal(t, map[string]any{
		"MessageId": sbOccurrence, "Label": "nightly", "TimeToLive": 90.0,
		"ScheduledEnqueueTimeUtc": "Thu, 01 Jan 2026 00:00:00 GMT", "ForcePersistence": true,
	}, m.BrokerProperties)
	require.Equal(t, map[string]string{"Priority": "High", "Customer": `12345,"ABC"`}, m.Properties)
}

func TestServiceBusTopicSend(t *testing.T) {
	sb, a := newServiceBus(t)
	spec := sbAction(t, true, func(m *jobs.ServiceBusMessage) {
		m.BrokeredMessageProperties = map[string]any{"messageId": "mine", "correlationId": "c-1"}
	})
	_, err := runServiceBus(t, a, spec, jobs.MainAction)
	require.NoError(t, err)
	msgs := sb.Messages()
	require.Len(t, msgs, 1)
	require.Equal(t, "events", msgs[0].Entity)
	require.Equal(t, "text/plain", msgs[0].ContentType, "the default content type")
	require.Equal(t, map[string]any{"MessageId": "mine", "CorrelationId": "c-1"}, msgs[0].BrokerProperties,
		"the job's messageId wins over the occurrence ID")
	require.Empty(t, msgs[0].Properties)
}

func TestServiceBusMessageIDMakesRetriesDuplicates(t *testing.T) {
	sb, a := newServiceBus(t)
	sb.DuplicateDetection = true
	spec := sbAction(t, false, nil)
	for range 2 {
		_, err := runServiceBus(t, a, spec, jobs.MainAction)
		require.NoError(t, err)
	}
	_, err := runServiceBus(t, a, spec, jobs.ErrorAction)
	require.NoError(t, err)
	msgs := sb.Messages()
	require.Len(t, msgs, 2, "the second send of the occurrence is a duplicate; the error action's is not")
	require.Equal(t, sbOccurrence, msgs[0].BrokerProperties["MessageId"])
	require.Equal(t, sbOccurrence+"/errorAction", msgs[1].BrokerProperties["MessageId"])
}

func TestServiceBusMessageIDFitsServiceBus(t *testing.T) {
	long := "job:" + strings.Repeat("x", 200) + "@2026-01-01T00:00:00Z"
	id := ServiceBusMessageID(long, jobs.MainAction)
	require.LessOrEqual(t, len(id), 128)
	require.True(t, strings.HasPrefix(id, "sha256:"), id)
	require.NotEqual(t, id, ServiceBusMessageID(long, jobs.ErrorAction))
	require.Equal(t, id, ServiceBusMessageID(long, jobs.MainAction), "deterministic")
}

func TestServiceBusWrongKeyFailsForGood(t *testing.T) {
	sb, a := newServiceBus(t)
	sb.EchoToken = true
	spec := sbAction(t, false, func(m *jobs.ServiceBusMessage) { m.Authentication.SasKey = "wr0ng-key" })
	out, err := runServiceBus(t, a, spec, jobs.MainAction)
	appErr := requireAppError(t, err)
	require.True(t, appErr.NonRetryable(), "401 is not retried")
	require.Equal(t, ErrTypeHTTPStatus, appErr.Type())
	var details jobs.HTTPResponse
	require.NoError(t, appErr.Details(&details))
	require.Equal(t, http.StatusUnauthorized, details.StatusCode)
	require.Contains(t, details.Body, "InvalidSignature")
	require.Contains(t, details.Body, "[redacted]", "the fake echoed the token")
	require.Empty(t, sb.Messages())
	require.Zero(t, out.StatusCode)

	tokens := sb.Authorizations()
	require.Len(t, tokens, 1)
	_, rest, ok := strings.Cut(tokens[0], "&sig=")
	require.True(t, ok, tokens[0])
	sig, _, _ := strings.Cut(rest, "&")
	unescaped, err := url.QueryUnescape(sig)
	require.NoError(t, err)
	for _, secret := range []string{"wr0ng-key", sig, unescaped, tokens[0]} {
		require.NotContains(t, appErr.Error(), secret)
		require.NotContains(t, details.Body, secret)
	}
}

func TestServiceBusFakeRejectsBadTokens(t *testing.T) {
	sb, _ := newServiceBus(t)
	entity := sb.URL + "/contoso-ns/orders"
	future := time.Now().Add(time.Hour)
	for name, tc := range map[string]struct {
		header string
		status int
	}{
		"good":             {token(entity, sbKey, future), http.StatusCreated},
		"namespace-wide":   {token(sb.URL+"/contoso-ns", sbKey, future), http.StatusCreated},
		"expired":          {token(entity, sbKey, time.Now().Add(-time.Minute)), http.StatusUnauthorized},
		"other entity":     {token(sb.URL+"/contoso-ns/events", sbKey, future), http.StatusUnauthorized},
		"prefix, not path": {token(sb.URL+"/contoso-ns/ord", sbKey, future), http.StatusUnauthorized},
		"wrong key":        {token(entity, "other", future), http.StatusUnauthorized},
		"no token":         {"", http.StatusUnauthorized},
	} {
		req, err := http.NewRequest(http.MethodPost, entity+"/messages", strings.NewReader("m"))
		require.NoError(t, err)
		req.Header.Set("Authorization", tc.header)
		resp, err := sb.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, tc.status, resp.StatusCode, name)
	}
	missing, _ := SASToken(sb.URL+"/contoso-ns/missing", sbKeyName, sbKey, future)
	req, _ := http.NewRequest(http.MethodPost, sb.URL+"/contoso-ns/missing/messages", strings.NewReader("m"))
	req.Header.Set("Authorization", missing)
	resp, err := sb.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func token(resource, key string, expiry time.Time) string {
	t, _ := SASToken(resource, sbKeyName, key, expiry)
	return t
}

func TestServiceBusUnknownEntityFailsForGood(t *testing.T) {
	_, a := newServiceBus(t)
	spec := sbAction(t, false, func(m *jobs.ServiceBusMessage) { m.QueueName = "missing" })
	_, err := runServiceBus(t, a, spec, jobs.MainAction)
	appErr := requireAppError(t, err)
	require.True(t, appErr.NonRetryable())
}

func TestServiceBusUnavailableIsRetryable(t *testing.T) {
	sb, a := newServiceBus(t)
	sb.FailNext(http.StatusServiceUnavailable)
	spec := sbAction(t, false, nil)
	_, err := runServiceBus(t, a, spec, jobs.MainAction)
	appErr := requireAppError(t, err)
	require.False(t, appErr.NonRetryable(), "503 is retried")
	var details jobs.HTTPResponse
	require.NoError(t, appErr.Details(&details))
	require.Equal(t, http.StatusServiceUnavailable, details.StatusCode)
	require.Empty(t, sb.Messages())

	_, err = runServiceBus(t, a, spec, jobs.MainAction)
	require.NoError(t, err, "the next attempt gets through")
	require.Len(t, sb.Messages(), 1)
}

func TestServiceBusNoAnswerIsRetryable(t *testing.T) {
	sb, a := newServiceBus(t)
	sb.Close()
	_, err := runServiceBus(t, a, sbAction(t, true, nil), jobs.MainAction)
	appErr := requireAppError(t, err)
	require.False(t, appErr.NonRetryable())
	require.Equal(t, ErrTypeTransport, appErr.Type())
}

func requireAppError(t *testing.T, err error) *temporal.ApplicationError {
	t.Helper()
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	return appErr
}
