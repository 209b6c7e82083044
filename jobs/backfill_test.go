package jobs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// TestBackfillCountIsTheWorkflowsCount: the API's count of a backfill is
// that of the occurrences the job's workflow queues: both ends of the
// range included, none before the job's start, and one past
// MaxBackfill when the range holds more.
func TestBackfillCountIsTheWorkflowsCount(t *testing.T) {
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	job := jobs.Job{Properties: jobs.Properties{StartTime: recurrence.At(start), Recurrence: &recurrence.Recurrence{Frequency: "Hour"}}}
	created := start.Add(50 * 24 * time.Hour)
	rule, err := recurrence.Compile(job.Properties.Schedule(), created)
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		from, to time.Time
		want     int
	}{
		{"both ends", start.Add(time.Hour), start.Add(3 * time.Hour), 3},
		{"between two", start.Add(time.Minute), start.Add(59 * time.Minute), 0},
		{"before the start", start.Add(-48 * time.Hour), start, 1},
		{"past the cap", start, start.Add(45 * 24 * time.Hour), jobs.MaxBackfill + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			times := jobs.BackfillTimes(rule, tc.from, tc.to)
			require.Equal(t, tc.want, len(times))
			require.Equal(t, tc.want, jobs.BackfillCount(job, created, tc.from, tc.to))
			for i := 1; i < len(times); i++ {
				require.True(t, times[i].After(times[i-1]))
			}
		})
	}
	require.Empty(t, jobs.BackfillTimes(nil, start, created), "a rule that no longer compiles has none")
}
