package jobs

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A job's health is part of its status (recur's extensions of Azure's
// JobStatus): its failure streak, its last success, how late its last
// scheduled run started and the occurrences it did not run. Each
// occurrence writes it with the rest of the status, in the memo upsert it
// makes anyway; the search attributes that let visibility find unhealthy
// jobs (AttrFailingSince, AttrLateness, AttrLastMissed) change only when
// a job's health does, coarsely, and the API checks the exact values in
// the memo.

// MaxDisableAfterFailures bounds disableAfterFailures: a thousand failed
// runs in a row is more than sixteen hours of an every-minute job.
const MaxDisableAfterFailures = 1000

// FailuresReason is the stateReason of a job disabled after n failed runs
// in a row (disableAfterFailures), the last of which failed with message,
// as its history row says it (secrets redacted): clipped to
// MaxStateReason.
func FailuresReason(n int, message string) string {
	return Clip(fmt.Sprintf("disabled after %d consecutive failures: %s", n, message), MaxStateReason)
}

// latenessBuckets are the lower bounds of the coarse lateness AttrLateness
// holds: a job's last scheduled run started at least that late. A run
// less late than the first holds none, so that a job on time upserts
// nothing.
var latenessBuckets = []time.Duration{time.Minute, 10 * time.Minute, time.Hour, 24 * time.Hour}

// LatenessBucket is the value of AttrLateness for a run that started d
// late: the largest bucket's lower bound d reaches, as an ISO 8601
// duration ("PT10M"), or "" under the first.
func LatenessBucket(d time.Duration) string {
	bucket := ""
	for _, b := range latenessBuckets {
		if d >= b {
			bucket = Duration(b).String()
		}
	}
	return bucket
}

// LatenessBucketsFrom returns the values of AttrLateness of the jobs whose
// last scheduled run may have started d late or later; ok is false when a
// job with no value may have (d is under the first bucket), so the
// attribute cannot narrow the search.
func LatenessBucketsFrom(d time.Duration) (buckets []string, ok bool) {
	if d < latenessBuckets[0] {
		return nil, false
	}
	for i, b := range latenessBuckets {
		if i == len(latenessBuckets)-1 || latenessBuckets[i+1] > d {
			buckets = append(buckets, Duration(b).String())
		}
	}
	return buckets, true
}

// LastMissedLag is how far AttrLastMissed may trail a job's
// lastMissedTime: the attribute moves only once the job misses an
// occurrence more than this after the one it holds, so that a job that
// misses every occurrence upserts it once an hour at most. A job missed
// an occurrence at or after t only if the attribute is at or after
// t - LastMissedLag.
const LastMissedLag = time.Hour

// Duration is a span of time that JSON writes as an ISO 8601 duration, to
// the millisecond ("PT1M30.25S", "P1DT2H"), as the API writes its other
// intervals.
type Duration time.Duration

// String writes d as an ISO 8601 duration, to the millisecond.
func (d Duration) String() string {
	if d < 0 {
		return "-" + (-d).String()
	}
	ms := time.Duration(d).Round(time.Millisecond)
	var b strings.Builder
	b.WriteString("P")
	if days := ms / (24 * time.Hour); days > 0 {
		b.WriteString(strconv.FormatInt(int64(days), 10) + "D")
		ms -= days * 24 * time.Hour
	}
	if ms == 0 && b.Len() > 1 {
		return b.String()
	}
	b.WriteString("T")
	if h := ms / time.Hour; h > 0 {
		b.WriteString(strconv.FormatInt(int64(h), 10) + "H")
		ms -= h * time.Hour
	}
	if m := ms / time.Minute; m > 0 {
		b.WriteString(strconv.FormatInt(int64(m), 10) + "M")
		ms -= m * time.Minute
	}
	if ms > 0 || b.Len() == 2 {
		b.WriteString(strconv.FormatFloat(ms.Seconds(), 'f', -1, 64) + "S")
	}
	return b.String()
}

// MarshalJSON writes d as a JSON string, String's.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.String())
}

// UnmarshalJSON reads an ISO 8601 duration or a TimeSpan, as String
// writes it or ParseInterval reads one, however long.
func (d *Duration) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil // encoding/json's convention
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("a duration must be a string such as \"PT1M30S\": %w", err)
	}
	v, err := parseInterval(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// DurationOf returns d as a *Duration.
func DurationOf(d time.Duration) *Duration {
	v := Duration(d)
	return &v
}
