package recurrence_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/recurrence"
)

// TestUnknownPropertyNamesTheClosestKnownName: a typo's error says what
// was meant; a name near nothing known lists the known names instead.
func TestUnknownPropertyNamesTheClosestKnownName(t *testing.T) {
	retry := []string{"retryType", "retryInterval", "retryCount", "maximumInterval"}
	for _, tc := range []struct {
		parent, name string
		known        []string
		path, want   string
	}{
		{"properties.action.retryPolicy", "retryIntervall", retry,
			"properties.action.retryPolicy.retryIntervall", "is not a property of retryPolicy; did you mean retryInterval?"},
		{"properties.action.retryPolicy", "RETRYCOUNTS", retry,
			"properties.action.retryPolicy.RETRYCOUNTS", "did you mean retryCount?"},
		{"properties.action.retryPolicy", "retryIntevral", retry, "", "did you mean retryInterval?"}, // two letters swapped
		{"properties.action.retryPolicy", "retries", retry, "", "is not a property of retryPolicy (known: retryType, retryInterval, retryCount, maximumInterval)"},
		{"recurrence.schedule.monthlyOccurrences[2]", "dya", []string{"day", "occurrence"},
			"recurrence.schedule.monthlyOccurrences[2].dya", "is not a property of monthlyOccurrences; did you mean day?"},
		{"", "startTme", []string{"startTime", "recurrence"}, "startTme", "is not a property of the body; did you mean startTime?"},
		// Short names: one letter off at most.
		{"", "ib", []string{"id", "type"}, "", "did you mean id?"},
		{"", "xy", []string{"id", "type"}, "", "(known: id, type)"},
		{"", "extra", []string{"id", "type", "name", "etag", "properties"}, "", "(known: id, type, name, etag, properties)"},
		// A third of the letters may be wrong, no more.
		{"", "maxConcurentRun", []string{"maxConcurrentRuns"}, "", "did you mean maxConcurrentRuns?"},
		{"", "concurrency", []string{"maxConcurrentRuns"}, "", "(known: maxConcurrentRuns)"},
	} {
		err := recurrence.UnknownProperty(tc.parent, tc.name, tc.known)
		require.Equal(t, recurrence.CodeUnknownProperty, err.Code, tc.name)
		if tc.path != "" {
			require.Equal(t, tc.path, err.Path, tc.name)
		}
		require.Contains(t, err.Message, tc.want, tc.name)
		if tc.want[0] == '(' {
			require.NotContains(t, err.Message, "did you mean", tc.name)
		}
	}
}

// TestParseNamesTheClosestKnownName: Parse's own check of a recurrence
// says what a misspelt member meant, at every level it reads.
func TestParseNamesTheClosestKnownName(t *testing.T) {
	for props, want := range map[string]string{
		`{"recurrence":{"frequency":"Day","intervall":5}}`:                                          "recurrence.intervall: is not a property of recurrence; did you mean interval?",
		`{"recurrence":{"frequency":"Day","schedule":{"minute":[5]}}}`:                              "recurrence.schedule.minute: is not a property of schedule; did you mean minutes?",
		`{"recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"dya":"Monday"}]}}}`: "recurrence.schedule.monthlyOccurrences[0].dya: is not a property of monthlyOccurrences; did you mean day?",
		`{"recurrence":{"frequency":"Day","exclusions":[{"dates":"2026-12-25"}]}}`:                  "recurrence.exclusions[0].dates: is not a property of exclusions; did you mean date?",
		`{"recurrence":{"frequency":"Day","dst":{"gaps":"skip"}}}`:                                  "recurrence.dst.gaps: is not a property of dst; did you mean gap?",
	} {
		_, err := recurrence.Parse([]byte(props))
		var ve *recurrence.ValidationError
		require.True(t, errors.As(err, &ve), "%s: %v", props, err)
		require.Equal(t, recurrence.CodeUnknownProperty, ve.Code, props)
		require.Equal(t, want, ve.Error(), props)
	}
}
