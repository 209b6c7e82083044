package jobs_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

var (
	jobType        = reflect.TypeFor[jobs.Job]()
	collectionType = reflect.TypeFor[jobs.Collection]()
)

// inAction returns a job body whose action has these members besides its
// type.
func inAction(typ, members string) string {
	return `{"properties":{"action":{"type":"` + typ + `",` + members + `}}}`
}

// TestUnknownMembersAreRefusedAtTheirPath: a typo at any level of a job or
// a collection is an UnknownProperty at its JSON path, naming the member
// meant.
func TestUnknownMembersAreRefusedAtTheirPath(t *testing.T) {
	sb := func(kind, members string) string {
		return inAction("ServiceBus"+kind, `"serviceBus`+kind+`Message":{"namespace":"ns-one","message":"m",`+members+`}`)
	}
	for _, tc := range []struct {
		name, body, target, meant string
		t                         reflect.Type
	}{
		{"the issue's properties typo", `{"properties":{"maxConcurentRuns":2}}`, "properties.maxConcurentRuns", "maxConcurrentRuns", jobType},
		{"the issue's retry policy typo", inAction("Http", `"retryPolicy":{"retryType":"Fixed","retryIntervall":"00:01:00"}`),
			"properties.action.retryPolicy.retryIntervall", "retryInterval", jobType},
		{"job", `{"propertis":{}}`, "propertis", "properties", jobType},
		{"properties in another letter case", `{"properties":{"StartTme":"2026-01-01T00:00:00Z"}}`, "properties.StartTme", "startTime", jobType},
		{"action", inAction("Http", `"retryPolicyy":{}`), "properties.action.retryPolicyy", "retryPolicy", jobType},
		{"action's embedded spec", inAction("Http", `"timeuot":"PT1M"`), "properties.action.timeuot", "timeout", jobType},
		{"request", inAction("Http", `"request":{"uri":"http://a.example/","method":"GET","header":{}}`),
			"properties.action.request.header", "headers", jobType},
		{"authentication", inAction("Https", `"request":{"authentication":{"type":"Basic","usename":"u"}}`),
			"properties.action.request.authentication.usename", "username", jobType},
		{"error action", inAction("Http", `"errorAction":{"type":"Http","requets":{}}`), "properties.action.errorAction.requets", "request", jobType},
		{"error action's retry policy", inAction("Http", `"errorAction":{"retryPolicy":{"retryCont":2}}`),
			"properties.action.errorAction.retryPolicy.retryCont", "retryCount", jobType},
		{"queue message", inAction("StorageQueue", `"queueMessage":{"storageAcount":"a"}`),
			"properties.action.queueMessage.storageAcount", "storageAccount", jobType},
		{"service bus queue message", sb("Queue", `"queuename":"q","transportTyp":"AMQP"`),
			"properties.action.serviceBusQueueMessage.transportTyp", "transportType", jobType},
		{"service bus topic authentication", sb("Topic", `"authentication":{"sasKeyNam":"k"}`),
			"properties.action.serviceBusTopicMessage.authentication.sasKeyNam", "sasKeyName", jobType},
		{"workflow", inAction("Workflow", `"workflow":{"workflowType":"w","taskQueu":"q"}`),
			"properties.action.workflow.taskQueu", "taskQueue", jobType},
		{"recurrence", `{"properties":{"recurrence":{"frequency":"Day","intervall":2}}}`, "properties.recurrence.intervall", "interval", jobType},
		{"schedule", `{"properties":{"recurrence":{"schedule":{"hour":[2]}}}}`, "properties.recurrence.schedule.hour", "hours", jobType},
		{"monthly occurrence", `{"properties":{"recurrence":{"schedule":{"monthlyOccurrences":[{"day":"Monday"},{"day":"Friday","ocurrence":-1}]}}}}`,
			"properties.recurrence.schedule.monthlyOccurrences[1].ocurrence", "occurrence", jobType},
		{"exclusion", `{"properties":{"recurrence":{"exclusions":[{"form":"2026-12-24","to":"2026-12-26"}]}}}`,
			"properties.recurrence.exclusions[0].form", "from", jobType},
		{"dst", `{"properties":{"recurrence":{"dst":{"repeats":"both"}}}}`, "properties.recurrence.dst.repeats", "repeat", jobType},
		{"status", `{"properties":{"status":{"executionCont":3}}}`, "properties.status.executionCont", "executionCount", jobType},
		{"a member after a free-form one", inAction("Http", `"request":{"headers":{"X-Typo":"1"},"methd":"GET"}`),
			"properties.action.request.methd", "method", jobType},
		{"collection", `{"locaton":"westus","properties":{}}`, "locaton", "location", collectionType},
		{"collection properties", `{"properties":{"stat":"Enabled"}}`, "properties.stat", "state", collectionType},
		{"sku", `{"properties":{"sku":{"nam":"Standard"}}}`, "properties.sku.nam", "name", collectionType},
		{"quota", `{"properties":{"quota":{"maxJobCounts":5}}}`, "properties.quota.maxJobCounts", "maxJobCount", collectionType},
		{"max recurrence", `{"properties":{"quota":{"maxRecurrence":{"frequency":"Hour","intervall":1}}}}`,
			"properties.quota.maxRecurrence.intervall", "interval", collectionType},
		{"a patch's null", `{"properties":{"maxConcurentRuns":null}}`, "properties.maxConcurentRuns", "maxConcurrentRuns", jobType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := jobs.CheckMembers([]byte(tc.body), tc.t)
			var e *jobs.Error
			require.True(t, errors.As(err, &e), "%v", err)
			require.Equal(t, jobs.CodeUnknownProperty, e.Code)
			require.Equal(t, tc.target, e.Target)
			require.True(t, strings.HasPrefix(e.Message, tc.target+": is not a property of "), e.Message)
			require.Contains(t, e.Message, "did you mean "+tc.meant+"?")
		})
	}
}

// TestFreeFormMembersTakeAnyName: a workflow input is the user's own JSON,
// headers, tags and Service Bus properties are maps: names there are
// anybody's. Names beside them are still checked (the test above).
func TestFreeFormMembersTakeAnyName(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		t          reflect.Type
	}{
		{"workflow input", inAction("Workflow", `"workflow":{"workflowType":"w","taskQueue":"q","input":{"anything":{"deeper":[null,{"a":1,"A":2}]}}}`), jobType},
		{"error action's workflow input", inAction("Http", `"errorAction":{"type":"Workflow","Workflow":{"Input":{"retryIntervall":1}}}`), jobType},
		{"headers", inAction("Http", `"request":{"uri":"http://a.example/","method":"GET","headers":{"X-Anything":"1","retryIntervall":"2"}}`), jobType},
		{"custom message properties", inAction("ServiceBusQueue", `"serviceBusQueueMessage":{"customMessageProperties":{"appname":"FromScheduler"}}`), jobType},
		{"brokered message properties, which jobs validates", inAction("ServiceBusTopic",
			`"serviceBusTopicMessage":{"brokeredMessageProperties":{"label":"x","forcePersistence":true}}`), jobType},
		{"tags", `{"location":"westus","tags":{"team":"reports","cost-centre":"42"},"properties":{}}`, collectionType},
		{"a patch's nulls", `{"properties":{"recurrence":null,"action":{"request":{"headers":{"X-Gone":null}}}}}`, jobType},
	} {
		require.NoError(t, jobs.CheckMembers([]byte(tc.body), tc.t), tc.name)
	}
}

// TestEveryMemberAGetWritesIsTaken: a job and a collection with every
// field set, as GET would write them (status, the certificate fields and
// both names of its expiry included), pass: a GET-modify-PUT needs no
// member removed.
func TestEveryMemberAGetWritesIsTaken(t *testing.T) {
	for v, names := range map[any][]string{
		&jobs.Job{}: {`"etag"`, `"status"`, `"certificateThumbprint"`, `"certificateExpirationDate"`, `"certificateExpiration"`,
			`"transportType"`},
		&jobs.Collection{}: {`"etag"`, `"tags"`, `"maxJobOccurrence"`},
	} {
		fill(reflect.ValueOf(v).Elem())
		data, err := json.Marshal(v)
		require.NoError(t, err)
		for _, name := range names {
			require.Contains(t, string(data), name, "every field is filled")
		}
		require.NoError(t, jobs.CheckMembers(data, reflect.TypeOf(v).Elem()), "%s", data)
	}
}

// fill sets every field of v, all the way down, to a value JSON writes.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				fill(f)
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(`{"x":1}`))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		elem := reflect.New(v.Type().Elem()).Elem()
		fill(elem)
		v.SetMapIndex(reflect.ValueOf("key"), elem)
	case reflect.String:
		v.SetString("x")
	case reflect.Int:
		v.SetInt(1)
	case reflect.Interface:
		v.Set(reflect.ValueOf("x"))
	}
}

// TestPreviewBodiesAreAJobOrItsProperties: a preview's body is checked as
// a whole job when it has properties (in any letter case), else as a
// job's properties, as recurrence.PreviewJob reads it.
func TestPreviewBodiesAreAJobOrItsProperties(t *testing.T) {
	for body, target := range map[string]string{
		`{"startTime":"2026-01-01T00:00:00Z","recurrence":{"frequency":"Day"},"action":{"type":"Http"},"state":"Enabled"}`: "",
		`{"id":"x","name":"c/j","PROPERTIES":{"startTime":"2026-01-01T00:00:00Z"}}`:                                        "",
		`{"startTme":"2026-01-01T00:00:00Z"}`:                                                                              "startTme",
		`{"properties":{"recurrence":{"frequency":"Day"}},"startTime":"2026-01-01T00:00:00Z"}`:                             "startTime",
		`{"name":"c/j","startTime":"2026-01-01T00:00:00Z"}`:                                                                "name",
		`{"recurrence":{"frequency":"Day","schedule":{"minutes":[null]}}}`:                                                 "recurrence.schedule.minutes[0]",
		`{"recurrence":{"frequency":"Day","Frequency":"Week"}}`:                                                            "recurrence.Frequency",
	} {
		err := jobs.CheckPreviewMembers([]byte(body))
		if target == "" {
			require.NoError(t, err, body)
			continue
		}
		var e *jobs.Error
		require.True(t, errors.As(err, &e), "%s: %v", body, err)
		require.Equal(t, target, e.Target, body)
	}
}

// TestWorkflowInputsAreTheRawMembers: CheckMembers takes a job's
// json.RawMessage members as written, mergePatch the paths IsWorkflowInput
// names: both must be the same places.
func TestWorkflowInputsAreTheRawMembers(t *testing.T) {
	var raw [][]string
	var walk func(t reflect.Type, path []string, depth int)
	walk = func(t reflect.Type, path []string, depth int) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == reflect.TypeFor[json.RawMessage]() {
			raw = append(raw, path)
			return
		}
		if t.Kind() != reflect.Struct || depth > 8 {
			return
		}
		for _, f := range reflect.VisibleFields(t) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "" || len(f.Index) > 1 && t.Field(f.Index[0]).Tag.Get("json") != "" {
				continue
			}
			walk(f.Type, append(path[:len(path):len(path)], name), depth+1)
		}
	}
	walk(reflect.TypeFor[jobs.Job](), nil, 0)
	require.Len(t, raw, 2, "%v", raw)
	for _, p := range raw {
		require.True(t, jobs.IsWorkflowInput(p), "%v", p)
	}
}
