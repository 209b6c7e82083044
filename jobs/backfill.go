package jobs

import (
	"fmt"
	"time"

	"github.com/recurhq/recur/recurrence"
)

// DefaultBackfillPace is the least time between the starts of two of a
// job's backfill occurrences unless the operator sets another: one a
// second, so that one backfill aims no more at a target than one polite
// client does, and the largest (MaxBackfill) still runs within 17
// minutes.
const DefaultBackfillPace = time.Second

// BackfillTimes returns rule's occurrences in [start, end], in order: at
// most MaxBackfill, and one more when the range holds more, which a
// backfill refuses. A nil rule (one that no longer compiles) has none.
func BackfillTimes(rule *recurrence.Rule, start, end time.Time) []time.Time {
	out := []time.Time{}
	if rule == nil {
		return out
	}
	// Past occurrences may come before the rule's first run: the
	// occurrence set reaches back to the anchor.
	for t, ok := rule.Next(start.Add(-time.Nanosecond)); ok && !t.After(end); t, ok = rule.Next(t) {
		out = append(out, t)
		if len(out) > MaxBackfill {
			break
		}
	}
	return out
}

// BackfillCount returns how many occurrences a backfill of [start, end]
// queues on job as defined at created (JobView.PlannedFrom), as BackfillTimes
// counts them: the API's count, to charge a subscription before it asks
// the job's workflow.
func BackfillCount(job Job, created, start, end time.Time) int {
	rule, err := recurrence.Compile(job.Properties.Schedule(), created)
	if err != nil {
		return 0
	}
	return len(BackfillTimes(rule, start, end))
}

// TooLongBackfill refuses a backfill whose range holds more than
// MaxBackfill occurrences.
func TooLongBackfill() *Error {
	return &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("the range holds more than %d occurrences: backfill a shorter one", MaxBackfill)}
}
