package recurrence

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Definition is the part of an Azure Scheduler job that decides when it runs:
// the job's startTime and recurrence, as they appear in the job's properties.
type Definition struct {
	StartTime  *DateTime   `json:"startTime,omitempty"`
	Recurrence *Recurrence `json:"recurrence,omitempty"`
}

// Clone returns a deep copy of d.
func (d Definition) Clone() Definition {
	if d.StartTime != nil {
		st := *d.StartTime
		d.StartTime = &st
	}
	if d.Recurrence != nil {
		r := *d.Recurrence
		r.Interval, r.Count = cloneInt(r.Interval), cloneInt(r.Count)
		r.Exclusions = slices.Clone(r.Exclusions)
		r.Schedule = r.Schedule.clone()
		if r.Rules != nil {
			r.Rules = slices.Clone(r.Rules)
			for i := range r.Rules {
				r.Rules[i].Interval = cloneInt(r.Rules[i].Interval)
				r.Rules[i].Schedule = r.Rules[i].Schedule.clone()
			}
		}
		if r.DST != nil {
			dst := *r.DST
			r.DST = &dst
		}
		if r.EndTime != nil {
			end := *r.EndTime
			r.EndTime = &end
		}
		d.Recurrence = &r
	}
	return d
}

// clone returns a deep copy of s (nil for nil).
func (s *Schedule) clone() *Schedule {
	if s == nil {
		return nil
	}
	c := *s
	c.Minutes, c.Hours, c.MonthDays = slices.Clone(c.Minutes), slices.Clone(c.Hours), slices.Clone(c.MonthDays)
	c.WeekDays = slices.Clone(c.WeekDays)
	c.MonthlyOccurrences = slices.Clone(c.MonthlyOccurrences)
	for i := range c.MonthlyOccurrences {
		c.MonthlyOccurrences[i].Occurrence = cloneInt(c.MonthlyOccurrences[i].Occurrence)
	}
	return &c
}

// RuleSpec is one rule of a recurrence's Rules (recur's extension): Azure's
// Frequency, Interval and Schedule, or a Cron, or an RRule. The zone,
// count, endTime, exclusions and DST policy are the recurrence's.
type RuleSpec struct {
	Frequency Frequency `json:"frequency,omitempty"`
	Interval  *int      `json:"interval,omitempty"`
	Schedule  *Schedule `json:"schedule,omitempty"`
	Cron      string    `json:"cron,omitempty"`
	RRule     string    `json:"rrule,omitempty"`
}

func cloneInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Recurrence is a job's recurrence object. TimeZone, Cron, RRule, Rules
// and Exclusions are recur's extensions: Azure Scheduler read every
// schedule field in UTC, and knew no cron, RRULE, list of rules nor
// exclusion. Cron or RRule replaces Frequency, Interval and Schedule;
// Rules replaces all of them with a list of such rules, whose
// occurrences are the union.
type Recurrence struct {
	Cron string `json:"cron,omitempty"`
	// RRule is RFC 5545 text: an RRULE value, or DTSTART, RRULE, RDATE
	// and EXDATE lines.
	RRule     string     `json:"rrule,omitempty"`
	Rules     []RuleSpec `json:"rules,omitempty"`
	Frequency Frequency  `json:"frequency,omitempty"`
	Interval  *int       `json:"interval,omitempty"`
	Schedule  *Schedule  `json:"schedule,omitempty"`
	Count     *int       `json:"count,omitempty"`
	EndTime   *DateTime  `json:"endTime,omitempty"`
	TimeZone  string     `json:"timeZone,omitempty"`
	// Exclusions are days without occurrences, in TimeZone (recur's
	// extension).
	Exclusions []Exclusion `json:"exclusions,omitempty"`
	// DST says how the wall-clock times a DST transition skips or repeats
	// run (recur's extension); nil is DefaultDST.
	DST *DSTPolicy `json:"dst,omitempty"`
}

// DSTPolicy says how a schedule's wall-clock times meet DST transitions:
// a time the clocks skip (Gap) runs shifted forward by the gap's length,
// not at all, or at the transition; a time they repeat (Repeat) runs at
// its first instant, its last, or both. It applies to the times of the
// day a Day, Week, Month, Year or cron recurrence places; Second, Minute
// and Hour step in absolute time and meet no such time.
type DSTPolicy struct {
	Gap    string `json:"gap,omitempty"`
	Repeat string `json:"repeat,omitempty"`
}

// DST policy values.
const (
	DSTShiftForward = "shiftForward"
	DSTSkip         = "skip"
	DSTAtTransition = "atTransition"
	DSTFirst        = "first"
	DSTLast         = "last"
	DSTBoth         = "both"
)

// Exclusion is a day (Date) or an inclusive range of days (From, To),
// "2026-12-25", whose occurrences are no occurrences: not run, not
// counted, not recorded.
type Exclusion struct {
	Date string `json:"date,omitempty"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// Schedule is a recurrence's advanced schedule. Each field either limits or
// expands the runs of a period, depending on the frequency
// (docs/recurrence.md).
type Schedule struct {
	Minutes            []int               `json:"minutes,omitempty"`
	Hours              []int               `json:"hours,omitempty"`
	WeekDays           []DayOfWeek         `json:"weekDays,omitempty"`
	MonthDays          []int               `json:"monthDays,omitempty"`
	MonthlyOccurrences []MonthlyOccurrence `json:"monthlyOccurrences,omitempty"`
}

// MonthlyOccurrence selects a weekday in a month: the Occurrence-th one
// (negative counts from the end), or every one when Occurrence is absent.
type MonthlyOccurrence struct {
	Day        DayOfWeek `json:"day,omitempty"`
	Occurrence *int      `json:"occurrence,omitempty"`
}

// Frequency is the unit of a recurrence's interval. Input is accepted in any
// letter case; Parse normalizes it to the lower case the service wrote.
type Frequency string

// The frequencies of docs/recurrence.md. Second is recur's extension:
// Azure Scheduler's smallest frequency was Minute.
const (
	Second Frequency = "second"
	Minute Frequency = "minute"
	Hour   Frequency = "hour"
	Day    Frequency = "day"
	Week   Frequency = "week"
	Month  Frequency = "month"
	Year   Frequency = "year"
)

var frequencies = []Frequency{Second, Minute, Hour, Day, Week, Month, Year}

// normalize returns the canonical spelling of f and whether f names a frequency.
func (f Frequency) normalize() (Frequency, bool) {
	for _, known := range frequencies {
		if strings.EqualFold(string(f), string(known)) {
			return known, true
		}
	}
	return f, false
}

// title returns f as the documents spell it ("Day"), for messages.
func (f Frequency) title() string {
	if f == "" {
		return ""
	}
	return strings.ToUpper(string(f[:1])) + string(f[1:])
}

// maxInterval is the largest interval each frequency accepts. Second
// takes the bound its neighbours Minute and Hour have.
var maxInterval = map[Frequency]int{
	Second: 1000, Minute: 1000, Hour: 1000, Day: 548, Week: 78, Month: 18, Year: 10,
}

// DayOfWeek is an English day name. Input is accepted in any letter case;
// Parse normalizes it to lower case.
type DayOfWeek string

var dayNames = [7]DayOfWeek{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

// Weekday returns d as a time.Weekday and whether d names a day.
func (d DayOfWeek) Weekday() (time.Weekday, bool) {
	for i, name := range dayNames {
		if strings.EqualFold(string(d), string(name)) {
			return time.Weekday(i), true
		}
	}
	return 0, false
}

// DayOfWeekOf returns the DayOfWeek spelling of w.
func DayOfWeekOf(w time.Weekday) DayOfWeek { return dayNames[w] }

// DateTime is an ISO 8601 date-time or date as the service accepted them:
// seconds optional, fractional seconds, a numeric offset or Z, no offset
// meaning UTC, or a date alone. A date alone is midnight in the
// recurrence's time zone, so it is kept as a date until the zone is known.
//
// Unmarshalling never fails on a JSON value: a value that is not a valid
// date-time is kept and reported by Parse with its JSON path.
type DateTime struct {
	t        time.Time
	dateOnly bool
	invalid  string // a value that is not a date-time, quoted as JSON
}

// At returns a DateTime for the instant t.
func At(t time.Time) *DateTime { return &DateTime{t: t} }

// Date returns a DateTime for a date alone (midnight in the recurrence's zone).
func Date(year int, month time.Month, day int) *DateTime {
	return &DateTime{t: time.Date(year, month, day, 0, 0, 0, 0, time.UTC), dateOnly: true}
}

// DateOnly reports whether d was given as a date without a time of day.
func (d DateTime) DateOnly() bool { return d.dateOnly }

// In returns the instant d names when read in zone loc: a date alone is
// midnight in loc (or the first instant after midnight when a DST gap
// swallows it), a date-time is its own instant whatever loc is.
func (d DateTime) In(loc *time.Location) time.Time {
	if !d.dateOnly {
		return d.t
	}
	y, m, day := d.t.Date()
	return time.Unix(newZone(loc).instant(civilDays(y, m, day)*secondsPerDay), 0).UTC()
}

// String formats d the way it is written back: a date alone as a date,
// a date-time in UTC with seconds.
func (d DateTime) String() string {
	switch {
	case d.invalid != "":
		return d.invalid
	case d.dateOnly:
		return d.t.Format(time.DateOnly)
	default:
		return d.t.UTC().Format(time.RFC3339Nano)
	}
}

// MarshalJSON writes d as String does.
func (d DateTime) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON accepts every form of ParseDateTime; see DateTime.
func (d *DateTime) UnmarshalJSON(b []byte) error {
	*d = DateTime{}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		d.invalid = string(b)
		return nil
	}
	parsed, err := ParseDateTime(s)
	if err != nil {
		d.invalid = strconv.Quote(s)
		return nil
	}
	*d = parsed
	return nil
}

// dateTimeLayouts are tried in order; the first that parses wins.
var dateTimeLayouts = []struct {
	layout   string
	dateOnly bool
}{
	{time.RFC3339Nano, false},
	{"2006-01-02T15:04Z07:00", false},
	{"2006-01-02T15:04:05.999999999", false},
	{"2006-01-02T15:04", false},
	{time.DateOnly, true},
}

// badDateTime is the message for a value (quoted as JSON) that is not one.
func badDateTime(value string) string {
	return "must be an ISO 8601 date-time such as 2015-04-07T14:00:00Z or a date such as 2015-04-07, not " + value
}

// ParseDateTime parses the ISO 8601 forms that DateTime accepts.
func ParseDateTime(s string) (DateTime, error) {
	s = strings.TrimSpace(s)
	// time.Parse insists on an upper-case T and Z; ISO 8601 allows both cases.
	norm := strings.Map(func(r rune) rune {
		switch r {
		case 't':
			return 'T'
		case 'z':
			return 'Z'
		}
		return r
	}, s)
	for _, l := range dateTimeLayouts {
		t, err := time.Parse(l.layout, norm)
		if err != nil {
			continue
		}
		// A date-time is written back in UTC: an offset must not move it
		// out of the years RFC 3339 can write (0000-01-01T00:00:00+01:00
		// is in year -1).
		if y := t.UTC().Year(); !l.dateOnly && (y < 0 || y > 9999) {
			break
		}
		return DateTime{t: t, dateOnly: l.dateOnly}, nil
	}
	return DateTime{}, invalid("", CodeInvalidDateTime, badDateTime(strconv.Quote(s)))
}
