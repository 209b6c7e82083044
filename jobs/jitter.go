package jobs

import (
	"hash/fnv"
	"time"

	"github.com/recurhq/recur/recurrence"
)

// MaxOneTimeJitter bounds the jitter of a job without recurrence, which
// has no gap to bound it.
const MaxOneTimeJitter = 24 * time.Hour

// JitterOffset is how much later than its nominal time the occurrence
// occurrenceID starts under a jitter of d: in [0, d), in whole
// milliseconds, derived from the ID alone, so that the same occurrence
// always gets the same offset (retries, replays, previews).
func JitterOffset(occurrenceID string, d time.Duration) time.Duration {
	ms := int64(d / time.Millisecond)
	if ms <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(occurrenceID))
	return time.Duration(h.Sum64()%uint64(ms)) * time.Millisecond
}

// JitterDuration returns the job's jitter, 0 for none.
func (p Properties) JitterDuration() time.Duration {
	if p.Jitter == "" {
		return 0
	}
	d, err := ParseInterval(p.Jitter)
	if err != nil {
		return 0
	}
	return d
}

// StartOf is when the occurrence of the job whose workflow is
// jobWorkflowID due at nominal starts: nominal plus its jitter offset.
func (p Properties) StartOf(jobWorkflowID string, nominal time.Time) time.Time {
	d := p.JitterDuration()
	if d == 0 {
		return nominal
	}
	return nominal.Add(JitterOffset(OccurrenceID(jobWorkflowID, nominal), d))
}

// validateJitter checks that the jitter is a positive duration of at most
// the rule's shortest gap (MaxOneTimeJitter for a one-time job), so that
// an occurrence starts before the next one falls due.
func (p *Properties) validateJitter(rule *recurrence.Rule, created time.Time) error {
	if p.Jitter == "" {
		return nil
	}
	d, err := ParseInterval(p.Jitter)
	if err != nil {
		return invalidf("properties.jitter", "%v", err)
	}
	limit := MaxOneTimeJitter
	if gap, ok := rule.ShortestGap(created, 500); ok {
		limit = gap
	}
	if d <= 0 || d > limit {
		return invalidf("properties.jitter", "jitter %s must be more than 0 and at most %s, the shortest time between two occurrences", p.Jitter, DescribeDuration(limit))
	}
	return nil
}

// UpcomingStarts is Upcoming with each time moved to when the occurrence
// starts under the job's jitter, and those a DST transition moved or
// repeated (their times moved too): what a preview of the saved job k
// shows.
func UpcomingStarts(k Key, job Job, created time.Time, runs int, next *time.Time, n int) ([]time.Time, []recurrence.Shifted) {
	times, rule := upcoming(job, created, runs, next, n)
	var shifts []recurrence.Shifted
	if rule != nil {
		shifts = rule.Shifts(times)
	}
	start := func(t time.Time) time.Time { return job.Properties.StartOf(k.JobWorkflowID(), t) }
	for i, t := range times {
		times[i] = start(t)
	}
	for i := range shifts {
		shifts[i].Time = start(shifts[i].Time)
	}
	return times, shifts
}
