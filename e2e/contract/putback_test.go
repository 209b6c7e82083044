package contract

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWhatGetAnswersPutsBack: clients change a resource by GET, edit and
// PUT, and Azure's SDKs send every member of the model they read. recur
// refuses member names it does not know, so each member a GET answers
// must be one it takes back: the read-only id, type, name, etag and
// status, a client certificate's computed fields under both their names,
// and what recur keeps without acting on it (tags, maxJobOccurrence,
// transportType). Only the secrets, which no GET shows, are given again.
func TestWhatGetAnswersPutsBack(t *testing.T) {
	s := newStack(t)
	coll := armPrefix + "/jobCollections/" + unique("put-back")
	status, body := s.do(t, http.MethodPut, coll, map[string]any{"location": "westus", "tags": map[string]string{"team": "reports"},
		"properties": map[string]any{"sku": map[string]any{"name": "Standard"}, "quota": map[string]any{
			"maxJobCount": 10, "maxJobOccurrence": 100, "maxRecurrence": map[string]any{"frequency": "Minute", "interval": 1}}}})
	require.Equal(t, http.StatusCreated, status, body)
	putBack(t, s, coll, nil, "id", "type", "name", "etag", "location", "tags", "properties.quota.maxJobOccurrence")

	const pfxPassword, sasKey = "Password1!", "sas-key"
	pfx := testPFX(t, time.Date(2031, 1, 1, 7, 0, 0, 0, time.UTC), pfxPassword)
	status, body = s.do(t, http.MethodPut, coll+"/jobs/j", map[string]any{"properties": map[string]any{
		"startTime": time.Now().UTC().Add(24 * time.Hour).Truncate(time.Hour).Format(time.RFC3339),
		"action": map[string]any{"type": "Https",
			"request": map[string]any{"uri": "https://example.com/run", "method": "POST", "body": "b", "headers": map[string]string{"X-A": "1"},
				"authentication": map[string]any{"type": "ClientCertificate", "pfx": pfx, "password": pfxPassword}},
			"retryPolicy": map[string]any{"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2},
			"errorAction": map[string]any{"type": "ServiceBusQueue", "serviceBusQueueMessage": map[string]any{
				"namespace": "scheduler-sdktest", "queueName": "queue1", "message": "failed", "transportType": "NetMessaging",
				"authentication":            map[string]any{"type": "SharedAccessKey", "sasKeyName": "RootManageSharedAccessKey", "sasKey": sasKey},
				"brokeredMessageProperties": map[string]any{"label": "alert"}, "customMessageProperties": map[string]string{"appname": "recur"}}}},
		"recurrence": map[string]any{"frequency": "Month", "interval": 1,
			"schedule": map[string]any{"hours": []int{2}, "minutes": []int{30}, "monthlyOccurrences": []any{map[string]any{"day": "Monday", "occurrence": 1}}}},
	}})
	require.Equal(t, http.StatusCreated, status, body)
	putBack(t, s, coll+"/jobs/j", func(job map[string]any) {
		field(job, "properties", "action", "request", "authentication").(map[string]any)["pfx"] = pfx
		field(job, "properties", "action", "request", "authentication").(map[string]any)["password"] = pfxPassword
		field(job, "properties", "action", "errorAction", "serviceBusQueueMessage", "authentication").(map[string]any)["sasKey"] = sasKey
	}, "id", "type", "name", "etag", "properties.status.executionCount", "properties.status.nextExecutionTime",
		"properties.action.request.authentication.certificateThumbprint", "properties.action.request.authentication.certificateSubjectName",
		"properties.action.request.authentication.certificateExpirationDate", "properties.action.request.authentication.certificateExpiration",
		"properties.action.errorAction.serviceBusQueueMessage.transportType")
}

// putBack GETs the resource at path, checks that the answer has each
// member of members (dotted paths), gives back its secrets with
// withSecrets, PUTs it and requires a 200 answering the same resource,
// but for its ETag and status, which the PUT makes anew.
func putBack(t *testing.T, s *stack, path string, withSecrets func(map[string]any), members ...string) {
	t.Helper()
	status, got := s.do(t, http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, status, got)
	for _, m := range members {
		require.NotNil(t, dotted(got, m), "GET answers %s: %v", m, got)
	}
	sent := deepCopy(got)
	if withSecrets != nil {
		withSecrets(sent)
	}
	status, put := s.do(t, http.MethodPut, path, sent)
	require.Equal(t, http.StatusOK, status, "a body read by GET is put back: %v", put)
	for _, body := range []map[string]any{got, put} {
		delete(body, "etag")
		delete(field(body, "properties").(map[string]any), "status")
	}
	assert.Equal(t, got, put)
}

// dotted is field of a path written a.b.c.
func dotted(m map[string]any, path string) any { return field(m, strings.Split(path, ".")...) }

// deepCopy copies a decoded JSON object, its objects and arrays too.
func deepCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return deepCopy(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}
