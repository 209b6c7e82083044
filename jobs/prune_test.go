package jobs_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// TestPruneUnknownLeavesWhatTheAPITakes: every member the API would refuse
// as unknown is cut out, at any depth and in any place of its object, and
// named with what it probably meant; the text left is what CheckMembers
// takes, byte for byte the rest of the body.
func TestPruneUnknownLeavesWhatTheAPITakes(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
		unknown          []jobs.UnknownMember
	}{
		{"the quickstart's retry policy inside request",
			inAction("Http", `"request":{"uri":"http://a.example/","method":"GET","retryPolicy":{"retryType":"None"}}`),
			inAction("Http", `"request":{"uri":"http://a.example/","method":"GET"}`),
			[]jobs.UnknownMember{{"properties.action.request.retryPolicy", "properties.action.retryPolicy"}}},
		{"first of its object", `{"properties":{"bogus":1, "state":"Enabled"}}`, `{"properties":{"state":"Enabled"}}`,
			[]jobs.UnknownMember{{"properties.bogus", ""}}},
		{"last of its object", `{"properties":{"state":"Enabled" , "maxConcurentRuns":2 }}`, `{"properties":{"state":"Enabled"  }}`,
			[]jobs.UnknownMember{{"properties.maxConcurentRuns", "properties.maxConcurrentRuns"}}},
		{"the only one", `{"properties":{ "zzz":{"a":[1,{"b":2}]} }}`, `{"properties":{  }}`,
			[]jobs.UnknownMember{{"properties.zzz", ""}}},
		{"two before a kept one, spaced out", "{\"properties\":{\n  \"a1\": 1,\n  \"a2\": [],\n  \"state\": \"Enabled\"\n}}",
			"{\"properties\":{\n  \"state\": \"Enabled\"\n}}", []jobs.UnknownMember{{"properties.a1", ""}, {"properties.a2", ""}}},
		{"between kept ones, in an array's element",
			`{"properties":{"recurrence":{"schedule":{"monthlyOccurrences":[{"day":"Monday","week":1,"occurrence":1}]}}}}`,
			`{"properties":{"recurrence":{"schedule":{"monthlyOccurrences":[{"day":"Monday","occurrence":1}]}}}}`,
			[]jobs.UnknownMember{{"properties.recurrence.schedule.monthlyOccurrences[0].week", ""}}},
		{"a member of another object's name", `{"properties":{"recurrence":{"frequency":"Day","weekDays":["Monday"]}}}`,
			`{"properties":{"recurrence":{"frequency":"Day"}}}`,
			[]jobs.UnknownMember{{"properties.recurrence.weekDays", "properties.recurrence.schedule.weekDays"}}},
		{"the nearest of several", inAction("Http", `"uri":"http://a.example/"`), `{"properties":{"action":{"type":"Http"}}}`,
			[]jobs.UnknownMember{{"properties.action.uri", "properties.action.request.uri"}}},
		{"in an array, the element's path kept", `{"properties":{"recurrence":{"schedule":{"monthlyOccurrences":[{},{"days":"Monday"}]}}}}`,
			`{"properties":{"recurrence":{"schedule":{"monthlyOccurrences":[{},{}]}}}}`,
			[]jobs.UnknownMember{{"properties.recurrence.schedule.monthlyOccurrences[1].days", "properties.recurrence.schedule.monthlyOccurrences[1].day"}}},
		{"in another letter case", `{"Properties":{"Action":{"type":"Http","Request":{"uri":"http://a.example/","RetryPolicy":{}}}}}`,
			`{"Properties":{"Action":{"type":"Http","Request":{"uri":"http://a.example/"}}}}`,
			[]jobs.UnknownMember{{"Properties.Action.Request.RetryPolicy", "Properties.Action.retryPolicy"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, unknown := jobs.PruneUnknown([]byte(tc.body), jobType)
			require.Equal(t, tc.want, string(got))
			require.Equal(t, tc.unknown, unknown)
			require.NoError(t, jobs.CheckMembers(got, jobType))
			require.True(t, json.Valid(got))
		})
	}
}

// TestPruneUnknownKeepsWhatIsRefusedOtherwise: a member given twice and a
// null in an array are not members Azure ignored; pruning leaves them for
// the API to refuse, and a body with nothing to prune comes back as it is.
func TestPruneUnknownKeepsWhatIsRefusedOtherwise(t *testing.T) {
	for _, body := range []string{
		`{"properties":{"state":"Enabled","State":"Disabled"}}`,
		`{"properties":{"recurrence":{"schedule":{"minutes":[null]}}}}`,
		inAction("Http", `"request":{"uri":"http://a.example/","headers":{"x-any":"1"}}`),
		`{"properties":{"action":{"type":"Workflow","workflow":{"input":{"anything":[null]}}}}}`,
		`{"properties":`,
	} {
		got, unknown := jobs.PruneUnknown([]byte(body), jobType)
		require.Equal(t, body, string(got))
		require.Empty(t, unknown, body)
	}
	got, unknown := jobs.PruneUnknown([]byte(`{"properties":{"stat":"Enabled","sku":{"name":"Free"}},"location":"westus"}`), collectionType)
	require.Equal(t, `{"properties":{"sku":{"name":"Free"}},"location":"westus"}`, string(got))
	require.Equal(t, []jobs.UnknownMember{{"properties.stat", "properties.state"}}, unknown)
}
