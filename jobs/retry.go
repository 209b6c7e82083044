package jobs

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Retry policy types and limits (Azure Scheduler's documented defaults).
const (
	RetryNone        = "None"
	RetryFixed       = "Fixed"
	RetryExponential = "Exponential" // recur's extension

	DefaultRetryCount    = 4
	MaxRetryCount        = 20
	DefaultRetryInterval = 30 * time.Second
	MinRetryInterval     = 15 * time.Second
	// DefaultMaxInterval caps the waits of Exponential retries.
	DefaultMaxInterval = time.Hour
)

// Retries is a retry policy resolved to numbers: how many attempts in all
// and how long between them (Backoff 1: always Interval; 2: doubling up
// to MaxInterval).
type Retries struct {
	Attempts    int
	Interval    time.Duration
	Backoff     float64
	MaxInterval time.Duration
}

// Resolve validates p (nil is the default policy) and returns its numbers,
// spelling retryType as the service did. path is p's JSON path.
func (p *RetryPolicy) Resolve(path string) (Retries, error) {
	out := Retries{Attempts: DefaultRetryCount + 1, Interval: DefaultRetryInterval, Backoff: 1, MaxInterval: DefaultRetryInterval}
	if p == nil {
		return out, nil
	}
	typ, ok := canonical(p.RetryType, []string{RetryNone, RetryFixed, RetryExponential})
	if p.RetryType == "" {
		typ, ok = RetryFixed, true
	}
	if !ok {
		return out, invalidf(path+".retryType", "retryType %q is not None, Fixed or Exponential", p.RetryType)
	}
	p.RetryType = typ
	if typ == RetryNone {
		return Retries{Attempts: 1, Backoff: 1}, nil
	}
	if p.RetryCount != nil {
		if n := *p.RetryCount; n < 0 || n > MaxRetryCount {
			return out, invalidf(path+".retryCount", "retryCount must be between 0 and %d, not %d", MaxRetryCount, n)
		}
		out.Attempts = *p.RetryCount + 1
	}
	if p.RetryInterval != "" {
		d, err := ParseInterval(p.RetryInterval)
		if err != nil {
			return out, invalidf(path+".retryInterval", "%v", err)
		}
		if d < MinRetryInterval {
			return out, invalidf(path+".retryInterval", "retryInterval %s is shorter than the minimum of %s", p.RetryInterval, DescribeDuration(MinRetryInterval))
		}
		out.Interval = d
	}
	out.MaxInterval = out.Interval
	if typ == RetryExponential {
		out.Backoff, out.MaxInterval = 2, DefaultMaxInterval
		if p.MaximumInterval != "" {
			d, err := ParseInterval(p.MaximumInterval)
			if err != nil {
				return out, invalidf(path+".maximumInterval", "%v", err)
			}
			if d < out.Interval {
				return out, invalidf(path+".maximumInterval", "maximumInterval %s is shorter than retryInterval", p.MaximumInterval)
			}
			out.MaxInterval = d
		}
	}
	return out, nil
}

var (
	isoDuration = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)
	timeSpan    = regexp.MustCompile(`^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2}(?:\.\d+)?)$`)
)

// ParseInterval reads an interval as ISO 8601 (PT30S, P1DT2H) or as a
// .NET TimeSpan ([d.]hh:mm:ss), the two forms Azure Scheduler accepted,
// at most a year.
func ParseInterval(s string) (time.Duration, error) {
	d, err := parseInterval(s)
	if err == nil && d > 366*24*time.Hour {
		return 0, fmt.Errorf("interval %q is longer than a year", s)
	}
	return d, err
}

// parseInterval is ParseInterval of any length.
func parseInterval(s string) (time.Duration, error) {
	var days, hours, minutes, seconds string
	if m := isoDuration.FindStringSubmatch(strings.ToUpper(s)); m != nil && strings.Join(m[1:], "") != "" {
		days, hours, minutes, seconds = m[1], m[2], m[3], m[4]
	} else if m := timeSpan.FindStringSubmatch(s); m != nil {
		days, hours, minutes, seconds = m[1], m[2], m[3], m[4]
	} else {
		return 0, fmt.Errorf("interval %q is neither ISO 8601 (PT30S) nor a TimeSpan (00:00:30)", s)
	}
	var total float64
	for _, part := range []struct {
		v    string
		unit float64
	}{{days, 86400}, {hours, 3600}, {minutes, 60}, {seconds, 1}} {
		if part.v == "" {
			continue
		}
		n, err := strconv.ParseFloat(part.v, 64)
		if err != nil {
			return 0, fmt.Errorf("interval %q: %w", s, err)
		}
		total += n * part.unit
	}
	if total >= float64(math.MaxInt64)/float64(time.Second) {
		return 0, fmt.Errorf("interval %q is too long", s)
	}
	return time.Duration(total * float64(time.Second)), nil
}

// checkTimeSpan refuses a TimeSpan whose fields are out of .NET's ranges:
// minutes and seconds 00 to 59, hours 00 to 23 when days are given.
// ParseInterval carries them over (99:99:99 is 100:40:39), as it must for
// definitions stored before this check; only new definitions meet it (see
// Job.Accept). ISO 8601 durations have no such ranges: PT90M is
// fine.
func checkTimeSpan(s string) error {
	m := timeSpan.FindStringSubmatch(s)
	if m == nil {
		return nil
	}
	hours, _ := strconv.Atoi(m[2])
	minutes, _ := strconv.Atoi(m[3])
	seconds, _ := strconv.Atoi(m[4][:2])
	switch {
	case minutes > 59 || seconds > 59:
		return fmt.Errorf("TimeSpan %q: minutes and seconds go from 00 to 59", s)
	case m[1] != "" && hours > 23:
		return fmt.Errorf("TimeSpan %q: with days, hours go from 00 to 23", s)
	}
	return nil
}
