package recurrence_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/recurrence"
)

func TestExclusionsRemoveOccurrences(t *testing.T) {
	now := at(t, "2026-12-24T00:00:00Z")
	t.Run("days and ranges, inclusive", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2026-12-24T09:00:00Z","recurrence":{"frequency":"Day",
			"exclusions":[{"date":"2026-12-25"},{"from":"2026-12-27","to":"2026-12-29"},{"from":"2026-12-28","to":"2027-01-01"}]}}`)
		require.Equal(t, []string{"2026-12-24T09:00:00Z", "2026-12-26T09:00:00Z", "2027-01-02T09:00:00Z", "2027-01-03T09:00:00Z"},
			runs(t, def, now, now, 4))
	})
	t.Run("an excluded occurrence does not count", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2026-12-24T09:00:00Z","recurrence":{"frequency":"Day","count":2,
			"exclusions":[{"date":"2026-12-24"}]}}`)
		got, err := recurrence.Preview(def, now, now, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"2026-12-25T09:00:00Z", "2026-12-26T09:00:00Z"}, formatAll(got))
	})
	t.Run("days are the job's zone's", func(t *testing.T) {
		// 00:30 in Berlin on the 25th is 23:30 UTC on the 24th: excluded,
		// while 23:30 UTC on the 25th is the 26th there.
		def := defOf(t, `{"startTime":"2026-12-23T00:30:00+01:00","recurrence":{"frequency":"Day","timeZone":"Europe/Berlin",
			"exclusions":[{"date":"2026-12-25"}]}}`)
		require.Equal(t, []string{"2026-12-23T23:30:00Z", "2026-12-25T23:30:00Z"}, nextAfter(t, def, now, at(t, "2026-12-23T00:00:00Z"), 2))
	})
	t.Run("a minute rule resumes the next day", func(t *testing.T) {
		def := defOf(t, `{"startTime":"2026-12-24T23:58:00Z","recurrence":{"frequency":"Minute","interval":1,
			"exclusions":[{"from":"2026-12-25","to":"2026-12-31"}]}}`)
		require.Equal(t, []string{"2026-12-24T23:58:00Z", "2026-12-24T23:59:00Z", "2027-01-01T00:00:00Z"}, runs(t, def, now, now, 3))
	})
	t.Run("the run at creation is excluded too", func(t *testing.T) {
		def := defOf(t, `{"recurrence":{"frequency":"Hour","exclusions":[{"date":"2026-12-24"}]}}`)
		created := at(t, "2026-12-24T10:15:00Z")
		require.Equal(t, []string{"2026-12-25T00:15:00Z", "2026-12-25T01:15:00Z"}, runs(t, def, created, created, 2))
	})
	t.Run("with cron", func(t *testing.T) {
		def := defOf(t, `{"recurrence":{"cron":"0 9 * * MON-FRI","exclusions":[{"from":"2026-12-24","to":"2026-12-31"}]}}`)
		require.Equal(t, []string{"2027-01-01T09:00:00Z", "2027-01-04T09:00:00Z"}, runs(t, def, now, now, 2))
	})
}

func TestExclusionsValidation(t *testing.T) {
	for _, tc := range []struct {
		props, path, code string
	}{
		{`{"recurrence":{"frequency":"Day","exclusions":[{"date":"2026-12-25","from":"2026-12-01","to":"2026-12-02"}]}}`, "recurrence.exclusions[0]", recurrence.CodeInvalidValue},
		{`{"recurrence":{"frequency":"Day","exclusions":[{"date":"2026-12-25"},{"date":"25.12.2026"}]}}`, "recurrence.exclusions[1].date", recurrence.CodeInvalidDateTime},
		{`{"recurrence":{"frequency":"Day","exclusions":[{"from":"2026-12-25"}]}}`, "recurrence.exclusions[0]", recurrence.CodeRequired},
		{`{"recurrence":{"frequency":"Day","exclusions":[{"from":"2026-12-25","to":"2026-12-24"}]}}`, "recurrence.exclusions[0].to", recurrence.CodeEndBeforeStart},
		{`{"recurrence":{"frequency":"Day","exclusions":[{"day":"2026-12-25"}]}}`, "recurrence.exclusions[0].day", recurrence.CodeUnknownProperty},
	} {
		t.Run(tc.path, func(t *testing.T) {
			requireInvalid(t, tc.props, tc.path, tc.code, "")
		})
	}
}

// formatAll formats times RFC 3339 in UTC.
func formatAll(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.UTC().Format(time.RFC3339)
	}
	return out
}
