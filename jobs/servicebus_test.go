package jobs_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// serviceBusJob decodes a job whose action is action (JSON), as a PUT would.
func serviceBusJob(t *testing.T, action string) jobs.Job {
	t.Helper()
	var j jobs.Job
	require.NoError(t, json.Unmarshal([]byte(`{"properties":{"action":`+action+`}}`), &j))
	return j
}

func normalizeServiceBus(t *testing.T, action string) (jobs.Job, error) {
	t.Helper()
	j := serviceBusJob(t, action)
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	return j, j.Accept(k, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

const serviceBusQueueAction = `{"type":"serviceBusQueue","serviceBusQueueMessage":{
	"namespace":"contoso-ns","queueName":"orders/incoming","message":"hello",
	"transportType":"amqp",
	"authentication":{"sasKeyName":"RootManageSharedAccessKey","sasKey":"k3y-s3cret","type":"sharedaccesskey"},
	"brokeredMessageProperties":{"LABEL":"nightly","contenttype":"application/json","timeToLive":"PT1H",
		"scheduledEnqueueTimeUtc":"2026-01-01T02:00:00+02:00","forcePersistence":true,"SessionId":"s1","partitionKey":"s1"},
	"customMessageProperties":{"Priority":"High","x-tenant":"42"}}}`

func TestServiceBusQueueNormalize(t *testing.T) {
	j, err := normalizeServiceBus(t, serviceBusQueueAction)
	require.NoError(t, err)
	a := j.Properties.Action
	require.Equal(t, jobs.ActionServiceBusQueue, a.Type)
	m := a.ServiceBusQueueMessage
	require.Equal(t, "AMQP", m.TransportType)
	require.Equal(t, jobs.ServiceBusSharedAccessKey, m.Authentication.Type)
	require.Equal(t, map[string]any{
		"label": "nightly", "contentType": "application/json", "timeToLive": "PT1H",
		"scheduledEnqueueTimeUtc": "2026-01-01T00:00:00Z", "forcePersistence": true,
		"sessionId": "s1", "partitionKey": "s1",
	}, m.BrokeredMessageProperties, "names spelled as the swagger does, times in UTC")
	require.Equal(t, map[string]string{"Priority": "High", "x-tenant": "42"}, m.CustomMessageProperties)
}

func TestServiceBusTopicNormalize(t *testing.T) {
	j, err := normalizeServiceBus(t, `{"type":"ServiceBusTopic","serviceBusTopicMessage":{
		"namespace":"contoso-ns","topicPath":"events","queueName":"stray","message":"m",
		"authentication":{"sasKeyName":"send","sasKey":"k"}}}`)
	require.NoError(t, err)
	m := j.Properties.Action.ServiceBusTopicMessage
	require.Equal(t, jobs.ServiceBusSharedAccessKey, m.Authentication.Type, "the default type")
	require.Equal(t, "events", m.TopicPath)
	require.Empty(t, m.QueueName, "a topic action sends to its topic only")
}

func TestServiceBusValidateTargets(t *testing.T) {
	const q = "properties.action.serviceBusQueueMessage"
	for _, tc := range []struct {
		name, action, target string
	}{
		{"missing message object", `{"type":"ServiceBusQueue"}`, q},
		{"topic action with a queue message", `{"type":"ServiceBusTopic","serviceBusQueueMessage":{}}`, "properties.action.serviceBusTopicMessage"},
		{"short namespace", queueWith(`"namespace":"abc"`), q + ".namespace"},
		{"namespace starting with a digit", queueWith(`"namespace":"1contoso"`), q + ".namespace"},
		{"namespace ending with a hyphen", queueWith(`"namespace":"contoso-"`), q + ".namespace"},
		{"namespace with a dot", queueWith(`"namespace":"contoso.evil.com"`), q + ".namespace"},
		{"long namespace", queueWith(`"namespace":"a` + strings.Repeat("b", 50) + `"`), q + ".namespace"},
		{"no queue name", queueWith(`"queueName":""`), q + ".queueName"},
		{"queue name leaving the namespace", queueWith(`"queueName":"../other"`), q + ".queueName"},
		{"queue name with a query", queueWith(`"queueName":"q?x=1"`), q + ".queueName"},
		{"no authentication", queueWith(`"authentication":null`), q + ".authentication"},
		{"other authentication type", queueWith(`"authentication":{"type":"Basic","sasKeyName":"n","sasKey":"k"}`), q + ".authentication.type"},
		{"no key name", queueWith(`"authentication":{"sasKey":"k"}`), q + ".authentication.sasKeyName"},
		{"no key", queueWith(`"authentication":{"sasKeyName":"n"}`), q + ".authentication.sasKey"},
		{"no message", queueWith(`"message":""`), q + ".message"},
		{"message too large", queueWith(`"message":"` + strings.Repeat("x", jobs.MaxServiceBusMessage+1) + `"`), q + ".message"},
		{"unknown transport", queueWith(`"transportType":"carrier pigeon"`), q + ".transportType"},
		{"unknown broker property", queueWith(`"brokeredMessageProperties":{"deliveryCount":2}`), q + ".brokeredMessageProperties.deliveryCount"},
		{"broker property twice", queueWith(`"brokeredMessageProperties":{"label":"a","Label":"b"}`), q + ".brokeredMessageProperties.label"},
		{"number label", queueWith(`"brokeredMessageProperties":{"label":1}`), q + ".brokeredMessageProperties.label"},
		{"string forcePersistence", queueWith(`"brokeredMessageProperties":{"forcePersistence":"yes"}`), q + ".brokeredMessageProperties.forcePersistence"},
		{"bad time to live", queueWith(`"brokeredMessageProperties":{"timeToLive":"soon"}`), q + ".brokeredMessageProperties.timeToLive"},
		{"bad enqueue time", queueWith(`"brokeredMessageProperties":{"scheduledEnqueueTimeUtc":"tomorrow"}`), q + ".brokeredMessageProperties.scheduledEnqueueTimeUtc"},
		{"bad content type", queueWith(`"brokeredMessageProperties":{"contentType":"text/plain\r\nX-Evil: 1"}`), q + ".brokeredMessageProperties.contentType"},
		{"long message id", queueWith(`"brokeredMessageProperties":{"messageId":"` + strings.Repeat("m", 129) + `"}`), q + ".brokeredMessageProperties.messageId"},
		{"session and partition differ", queueWith(`"brokeredMessageProperties":{"sessionId":"a","partitionKey":"b"}`), q + ".brokeredMessageProperties.partitionKey"},
		{"custom property not a header name", queueWith(`"customMessageProperties":{"bad name":"v"}`), q + ".customMessageProperties.bad name"},
		{"custom property taking a header", queueWith(`"customMessageProperties":{"authorization":"v"}`), q + ".customMessageProperties.authorization"},
		{"custom property value injecting a header", queueWith(`"customMessageProperties":{"x-tenant":"42\r\nAuthorization: stolen"}`), q + ".customMessageProperties.x-tenant"},
		{"custom properties too large", queueWith(`"customMessageProperties":{"big":"` + strings.Repeat("v", jobs.MaxServiceBusPropertyBytes) + `"}`), q + ".customMessageProperties"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := normalizeServiceBus(t, tc.action)
			var e *jobs.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, jobs.CodeInvalidRequest, e.Code)
			require.Equal(t, tc.target, e.Target, e.Message)
			require.NotContains(t, e.Message, "k3y-s3cret", "no message quotes the key")
		})
	}
}

// queueWith returns a valid queue action with the fields of override
// (JSON members) replacing its own.
func queueWith(override string) string {
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal([]byte(`{"namespace":"contoso-ns","queueName":"orders","message":"hello",
		"authentication":{"sasKeyName":"send","sasKey":"k3y-s3cret"}}`), &m); err != nil {
		panic(err)
	}
	o := map[string]json.RawMessage{}
	if err := json.Unmarshal([]byte("{"+override+"}"), &o); err != nil {
		panic(err)
	}
	for k, v := range o {
		m[k] = v
	}
	data, _ := json.Marshal(m)
	return `{"type":"ServiceBusQueue","serviceBusQueueMessage":` + string(data) + `}`
}

func TestServiceBusValidSpellingsPass(t *testing.T) {
	for _, override := range []string{
		`"namespace":"abcdef"`,
		`"namespace":"a` + strings.Repeat("b", 49) + `"`,
		`"queueName":"a.b-c_d/e"`,
		`"authentication":{"type":"NotSpecified","sasKeyName":"n","sasKey":"k"}`,
		`"transportType":"netmessaging"`,
		`"brokeredMessageProperties":{"timeToLive":"01:00:00","messageId":"` + strings.Repeat("m", 128) + `"}`,
	} {
		_, err := normalizeServiceBus(t, queueWith(override))
		require.NoError(t, err, override)
	}
}

func TestServiceBusRedacted(t *testing.T) {
	j, err := normalizeServiceBus(t, serviceBusQueueAction)
	require.NoError(t, err)
	topic := *j.Properties.Action.ServiceBusQueueMessage
	topic.TopicPath, topic.QueueName = "events", ""
	j.Properties.Action.ErrorAction = &jobs.ActionSpec{Type: jobs.ActionServiceBusTopic, ServiceBusTopicMessage: &topic}

	for _, shown := range []jobs.Job{j.Redacted(), j.Public()} {
		data, err := json.Marshal(shown)
		require.NoError(t, err)
		require.NotContains(t, string(data), "k3y-s3cret")
		require.NotContains(t, string(data), `"sasKey"`)
		require.Contains(t, string(data), `"sasKeyName":"RootManageSharedAccessKey"`)
	}
	require.Equal(t, "k3y-s3cret", j.Properties.Action.ServiceBusQueueMessage.Authentication.SasKey, "the stored job keeps its key")
	require.Equal(t, "k3y-s3cret", j.Properties.Action.ErrorAction.ServiceBusTopicMessage.Authentication.SasKey)
}
