package jobs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

func TestUpcomingRunsLeftByCountAndState(t *testing.T) {
	created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	count := 5
	job := jobs.Job{Properties: jobs.Properties{State: jobs.Enabled, StartTime: recurrence.At(created),
		Recurrence: &recurrence.Recurrence{Frequency: "Hour", Count: &count}}}
	next := created.Add(3 * time.Hour)
	assert.Equal(t, []time.Time{next, next.Add(time.Hour)}, jobs.Upcoming(job, created, 3, &next, 10), "two of five left")
	assert.Len(t, jobs.Upcoming(job, created, 0, &next, 0), 1, "at least one asked")
	assert.Empty(t, jobs.Upcoming(job, created, 3, nil, 10), "nothing planned")
	job.Properties.State = jobs.Disabled
	assert.Empty(t, jobs.Upcoming(job, created, 3, &next, 10), "disabled")
}
