package api

import (
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// unknownMemberCases are bodies with a name recur does not know, on every
// route that reads a body: each is a 400 UnknownProperty at the name's
// path that names the member meant (or, for a name near none, lists them),
// before the handler checks anything else (these routers have no Temporal
// to reach).
var unknownMemberCases = []struct {
	name, method, path, body, target, meant string
}{
	{"the issue's properties typo", http.MethodPut, badJob, `{"properties":{"startTime":"2099-01-01T00:00:00Z",` +
		`"action":{"type":"Http","request":{"uri":"http://a.example/","method":"GET"}},"maxConcurentRuns":2}}`,
		"properties.maxConcurentRuns", "maxConcurrentRuns"},
	{"the issue's retry policy typo", http.MethodPut, badJob, `{"properties":{"startTime":"2099-01-01T00:00:00Z",` +
		`"action":{"type":"Http","request":{"uri":"http://a.example/","method":"GET"},"retryPolicy":{"retryType":"Fixed","retryIntervall":"00:01:00"}}}}`,
		"properties.action.retryPolicy.retryIntervall", "retryInterval"},
	{"a typo after a semantic error", http.MethodPut, badJob,
		`{"properties":{"recurrence":{"frequency":"Fortnight"},"action":{"type":"Carrier pigeon"},"maxConcurentRuns":2}}`,
		"properties.maxConcurentRuns", "maxConcurrentRuns"},
	{"a job's PATCH", http.MethodPatch, badJob, `{"properties":{"action":{"retryPolicy":{"retryIntervall":"00:01:00"}}}}`,
		"properties.action.retryPolicy.retryIntervall", "retryInterval"},
	{"a job's PATCH deleting an unknown member", http.MethodPatch, badJob, `{"properties":{"maxConcurentRuns":null}}`,
		"properties.maxConcurentRuns", "maxConcurrentRuns"},
	{"a job's PATCH with status too", http.MethodPatch, badJob, `{"properties":{"status":{"executionCount":0},"stat":"Disabled"}}`,
		"properties.stat", "state"},
	{"a job's PATCH of the error action's request", http.MethodPatch, badJob,
		`{"properties":{"action":{"errorAction":{"request":{"authentication":{"type":"Basic","usernme":"u"}}}}}}`,
		"properties.action.errorAction.request.authentication.usernme", "username"},
	{"a job's PATCH of a monthly occurrence", http.MethodPatch, badJob,
		`{"properties":{"recurrence":{"schedule":{"monthlyOccurrences":[{"day":"Monday","occurence":1}]}}}}`,
		"properties.recurrence.schedule.monthlyOccurrences[0].occurence", "occurrence"},
	{"a collection's PUT", http.MethodPut, badCollection, `{"location":"westus","properties":{"sku":{"name":"Standard"},"qouta":{}}}`,
		"properties.qouta", "quota"},
	{"a collection's max recurrence", http.MethodPut, badCollection,
		`{"properties":{"quota":{"maxRecurrence":{"frequency":"Hour","intreval":1}}}}`, "properties.quota.maxRecurrence.intreval", "interval"},
	{"a collection's PATCH", http.MethodPatch, badCollection, `{"tag":{"team":"reports"}}`, "tag", "tags"},
	{"a collection's PATCH of its sku", http.MethodPatch, badCollection, `{"properties":{"sku":{"Nmae":"Free"}}}`, "properties.sku.Nmae", "name"},
	{"a backfill", http.MethodPost, badJob + "/backfill", `{"startTime":"2026-01-01T00:00:00Z","endtim":"2026-01-02T00:00:00Z"}`,
		"endtim", "endTime"},
	{"a preview of job properties", http.MethodPost, "/recur/v1/preview",
		`{"startTime":"2099-01-01T00:00:00Z","recurrence":{"frequency":"Day","schedule":{"hour":[2]}}}`, "recurrence.schedule.hour", "hours"},
	{"a preview of a whole job", http.MethodPost, "/recur/v1/preview",
		`{"properties":{"startTme":"2099-01-01T00:00:00Z","recurrence":{"frequency":"Day"}}}`, "properties.startTme", "startTime"},
	{"a preview of properties beside a whole job's", http.MethodPost, "/recur/v1/preview",
		`{"properties":{"recurrence":{"frequency":"Day"}},"recurrence":{"frequency":"Minute"}}`, "recurrence", ""},
}

func TestUnknownMembersAreRefusedOnEveryRoute(t *testing.T) {
	for _, tc := range unknownMemberCases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if strings.HasPrefix(path, "/subscriptions/") {
				path += badVersion
			}
			rec := serve(t, tc.method, path, "application/json", tc.body)
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			answer := armAnswer(t, rec)
			require.Equal(t, jobs.CodeUnknownProperty, answer.Code)
			require.Equal(t, tc.target, answer.Target)
			require.Contains(t, answer.Message, tc.target+": is not a property of ")
			if tc.meant == "" {
				require.Contains(t, answer.Message, "(known: id, type, name, etag, properties)")
				return
			}
			require.Contains(t, answer.Message, "did you mean "+tc.meant+"?")
		})
	}
}

// TestThePreviewRouteRefusesAmbiguousBodies: a preview's body is read as
// a job's is: a member given twice or null in an array is a 400 at its
// path, never read as the last one or as 0.
func TestThePreviewRouteRefusesAmbiguousBodies(t *testing.T) {
	for body, target := range map[string]string{
		`{"recurrence":{"frequency":"Hour","schedule":{"minutes":[null]}}}`:                 "recurrence.schedule.minutes[0]",
		`{"startTime":"2099-01-01T00:00:00Z","StartTime":"2000-01-01T00:00:00Z"}`:           "StartTime",
		`{"properties":{"recurrence":{"frequency":"Hour","frequency":"Day"}}}`:              "properties.recurrence.frequency",
		`{"properties":{"recurrence":{"frequency":"Hour"}},"Properties":{"startTime":"x"}}`: "Properties",
	} {
		rec := serve(t, http.MethodPost, "/recur/v1/preview", "application/json", body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", body, rec.Body)
		answer := armAnswer(t, rec)
		require.Equal(t, jobs.CodeInvalidContent, answer.Code, body)
		require.Equal(t, target, answer.Target, body)
	}
}

// TestAPatchMayDeleteWhatItKnows: null deletes a member in a merge patch,
// and stays allowed for every name the job has; free-form places take any
// name, to set or to delete.
func TestAPatchMayDeleteWhatItKnows(t *testing.T) {
	for _, patch := range []string{
		`{"properties":{"recurrence":null,"maxConcurrentRuns":null}}`,
		`{"properties":{"action":{"request":{"headers":{"X-New":"1","X-Gone":null}},"retryPolicy":null}}}`,
		`{"properties":{"action":{"errorAction":null}},"etag":null}`,
	} {
		f := &patchFake{etags: []string{"e1", "e2"}}
		rec := patchRequest(t, New(f, Options{Logger: slog.New(slog.DiscardHandler)}), patch)
		require.Equal(t, http.StatusOK, rec.Code, "%s: %s", patch, rec.Body)
		require.JSONEq(t, patch, string(f.updates[len(f.updates)-1].Patch), "the patch as given")
	}
	f := &patchFake{etags: []string{"e1", "e2"}}
	rec := patchRequest(t, New(f, Options{Logger: slog.New(slog.DiscardHandler)}), `{"properties":{"maxConcurentRuns":null}}`)
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Empty(t, f.updates, "refused before the job is read or updated")
}

// swaggerSchema is as much of a schema of Azure's OpenAPI file as its
// request bodies need.
type swaggerSchema struct {
	Ref                  string                   `json:"$ref"`
	Type                 string                   `json:"type"`
	Properties           map[string]swaggerSchema `json:"properties"`
	Items                *swaggerSchema           `json:"items"`
	AdditionalProperties *swaggerSchema           `json:"additionalProperties"`
	AllOf                []swaggerSchema          `json:"allOf"`
	Discriminator        string                   `json:"discriminator"`
}

// TestEveryMemberOfAzuresContractIsTaken: a job and a collection with
// every member Azure's contract defines, all the way down (read-only ones
// too, and every kind of authentication's), pass the member check: what
// an Azure client sends, recur reads.
func TestEveryMemberOfAzuresContractIsTaken(t *testing.T) {
	var spec struct {
		Definitions map[string]swaggerSchema `json:"definitions"`
	}
	require.NoError(t, json.Unmarshal(azureSpec, &spec))
	defs := spec.Definitions
	for def, shape := range map[string]reflect.Type{
		"JobDefinition":           reflect.TypeFor[jobs.Job](),
		"JobCollectionDefinition": reflect.TypeFor[jobs.Collection](),
	} {
		data, err := json.Marshal(contractValue(t, defs, def, defs[def], 0))
		require.NoError(t, err)
		require.NoError(t, jobs.CheckMembers(data, shape), "%s: %s", def, data)
		if def == "JobDefinition" {
			for _, name := range []string{"status", "certificateThumbprint", "secret", "transportType", "forcePersistence", "Occurrence"} {
				require.Contains(t, string(data), `"`+name+`"`, "the body has every member")
			}
		}
	}
}

// contractValue returns a value of schema s (definition name, when it
// is one) with every property s and its subtypes define.
func contractValue(t *testing.T, defs map[string]swaggerSchema, name string, s swaggerSchema, depth int) any {
	require.Less(t, depth, 20, "the contract's definitions do not recurse")
	if s.Ref != "" {
		name = strings.TrimPrefix(s.Ref, "#/definitions/")
		return contractValue(t, defs, name, defs[name], depth+1)
	}
	props := maps.Clone(s.Properties)
	for _, parent := range s.AllOf {
		maps.Copy(props, defs[strings.TrimPrefix(parent.Ref, "#/definitions/")].Properties)
	}
	if s.Discriminator != "" {
		// A polymorphic object (authentication) takes any subtype's
		// members: those of every definition deriving from it.
		for _, sub := range slices.Sorted(maps.Keys(defs)) {
			for _, parent := range defs[sub].AllOf {
				if parent.Ref == "#/definitions/"+name {
					maps.Copy(props, defs[sub].Properties)
				}
			}
		}
	}
	switch {
	case len(props) > 0:
		obj := map[string]any{}
		for member, p := range props {
			obj[member] = contractValue(t, defs, "", p, depth+1)
		}
		return obj
	case s.AdditionalProperties != nil:
		return map[string]any{"anyName": contractValue(t, defs, "", *s.AdditionalProperties, depth+1)}
	case s.Type == "array":
		return []any{contractValue(t, defs, "", *s.Items, depth+1)}
	case s.Type == "integer":
		return 1
	case s.Type == "boolean":
		return true
	}
	return "x"
}
