// Package bench compares the recurrence engine of recur with
// github.com/teambition/rrule-go and github.com/robfig/cron/v3. It is a
// separate module so that the product's go.mod never depends on the peers.
package bench

import (
	"fmt"
	"time"

	"github.com/recurhq/recur/recurrence"
	"github.com/robfig/cron/v3"
	"github.com/teambition/rrule-go"
)

// defaultNow is the "now" of every rule but the leap-day one: on whole
// seconds past a quarter hour, so that a start 1 s, 5 years or 50 years
// before it falls on second 0 of a quarter hour. recur takes the second
// from the start, rrule-go from DTSTART and cron always runs at second 0;
// anchoring on :00 makes the three describe the same occurrence set.
var defaultNow = time.Date(2026, 11, 21, 10, 15, 1, 0, time.UTC)

// leapNow is one second past a yearly Feb 29 09:00 occurrence.
var leapNow = time.Date(2028, 2, 29, 9, 0, 1, 0, time.UTC)

// engineRule is one rule written for each engine. cron is empty when the
// rule cannot be written as a cron expression.
type engineRule struct {
	name  string
	now   time.Time
	recur string        // the "recurrence" object of a job definition
	rrule rrule.ROption // without Dtstart, which is the start
	cron  string        // standard 5-field spec; "" = not expressible
	why   string        // why cron cannot express it, or why it can
	leap  bool          // starts are the latest Feb 29 09:00 at or before now-offset
	cronN int           // how many of the next 20 occurrences cron finds (0 = all)
}

// engineRules are the compared rules, all in UTC.
var engineRules = []engineRule{
	{
		name:  "EveryMinute",
		recur: `{"frequency":"Minute","interval":1}`,
		rrule: rrule.ROption{Freq: rrule.MINUTELY, Interval: 1},
		cron:  "* * * * *",
		why:   "the start is on second 0",
	},
	{
		name:  "Every15Minutes",
		recur: `{"frequency":"Minute","interval":15}`,
		rrule: rrule.ROption{Freq: rrule.MINUTELY, Interval: 15},
		cron:  "*/15 * * * *",
		why:   "the start is on a quarter hour; from any other start it is not expressible",
	},
	{
		name:  "Every7Minutes",
		recur: `{"frequency":"Minute","interval":7}`,
		rrule: rrule.ROption{Freq: rrule.MINUTELY, Interval: 7},
		why:   "7 does not divide the hour: the occurrences depend on the start, cron has none",
	},
	{
		name:  "HourlyAt30",
		recur: `{"frequency":"Hour","schedule":{"minutes":[30]}}`,
		rrule: rrule.ROption{Freq: rrule.HOURLY, Byminute: []int{30}, Bysecond: []int{0}},
		cron:  "30 * * * *",
	},
	{
		name:  "Daily0900",
		recur: `{"frequency":"Day","schedule":{"hours":[9],"minutes":[0]}}`,
		rrule: rrule.ROption{Freq: rrule.DAILY, Byhour: []int{9}, Byminute: []int{0}, Bysecond: []int{0}},
		cron:  "0 9 * * *",
	},
	{
		name: "Weekdays0900And1700",
		recur: `{"frequency":"Week","schedule":{"weekDays":["monday","tuesday","wednesday","thursday","friday"],` +
			`"hours":[9,17],"minutes":[0]}}`,
		rrule: rrule.ROption{Freq: rrule.WEEKLY, Byweekday: []rrule.Weekday{rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR},
			Byhour: []int{9, 17}, Byminute: []int{0}, Bysecond: []int{0}},
		cron: "0 9,17 * * 1-5",
	},
	{
		name:  "WeeklyMonWedFri1000",
		recur: `{"frequency":"Week","schedule":{"weekDays":["monday","wednesday","friday"],"hours":[10],"minutes":[0]}}`,
		rrule: rrule.ROption{Freq: rrule.WEEKLY, Byweekday: []rrule.Weekday{rrule.MO, rrule.WE, rrule.FR},
			Byhour: []int{10}, Byminute: []int{0}, Bysecond: []int{0}},
		cron: "0 10 * * 1,3,5",
	},
	{
		name:  "Monthly1stAnd15th",
		recur: `{"frequency":"Month","schedule":{"monthDays":[1,15],"hours":[9],"minutes":[0]}}`,
		rrule: rrule.ROption{Freq: rrule.MONTHLY, Bymonthday: []int{1, 15}, Byhour: []int{9}, Byminute: []int{0}, Bysecond: []int{0}},
		cron:  "0 9 1,15 * *",
	},
	{
		name:  "MonthlyLastFriday",
		recur: `{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"friday","occurrence":-1}],"hours":[9],"minutes":[0]}}`,
		rrule: rrule.ROption{Freq: rrule.MONTHLY, Byweekday: []rrule.Weekday{rrule.FR.Nth(-1)},
			Byhour: []int{9}, Byminute: []int{0}, Bysecond: []int{0}},
		why: "robfig/cron has no L (last) or # (nth weekday) syntax",
	},
	{
		name:  "YearlyFeb29",
		now:   leapNow,
		recur: `{"frequency":"Year","schedule":{"hours":[9],"minutes":[0]}}`,
		rrule: rrule.ROption{Freq: rrule.YEARLY, Bymonth: []int{2}, Bymonthday: []int{29},
			Byhour: []int{9}, Byminute: []int{0}, Bysecond: []int{0}},
		cron: "0 9 29 2 *",
		why: "recur takes the date of a yearly rule from its start, so the starts are Feb 29; " +
			"robfig/cron looks 5 years ahead only, so it stops at 2096 (2100 is no leap year)",
		leap:  true,
		cronN: 17,
	},
}

// start is how far before now a rule starts.
type start struct {
	name   string
	offset func(time.Time) time.Time
}

// The 5- and 50-year starts are also a second earlier, so that all three
// share the wall clock (second 0) of the 1 s start.
var starts = []start{
	{"1s", func(now time.Time) time.Time { return now.Add(-time.Second) }},
	{"5y", func(now time.Time) time.Time { return now.Add(-time.Second).AddDate(-5, 0, 0) }},
	{"50y", func(now time.Time) time.Time { return now.Add(-time.Second).AddDate(-50, 0, 0) }},
}

// nowOf returns the rule's "now".
func (r engineRule) nowOf() time.Time {
	if r.now.IsZero() {
		return defaultNow
	}
	return r.now
}

// startOf returns the rule's start for s. A leap-day rule starts on the
// latest Feb 29 09:00 at or before now minus the offset (4, 8 and 52 years
// before leapNow), because a yearly recur rule repeats its start's date.
func (r engineRule) startOf(s start) time.Time {
	t := s.offset(r.nowOf())
	if !r.leap {
		return t
	}
	for y := t.Year(); ; y-- {
		c := time.Date(y, 2, 29, 9, 0, 0, 0, time.UTC)
		if c.Month() == time.February && !c.After(t) {
			return c
		}
	}
}

// recurDef returns the job definition for recur.
func (r engineRule) recurDef(from time.Time) (recurrence.Definition, error) {
	js := fmt.Sprintf(`{"startTime":%q,"recurrence":%s}`, from.Format(time.RFC3339), r.recur)
	return recurrence.Parse([]byte(js))
}

// recurRule compiles the rule for recur, created at now.
func (r engineRule) recurRule(from time.Time) (*recurrence.Rule, error) {
	def, err := r.recurDef(from)
	if err != nil {
		return nil, err
	}
	return recurrence.Compile(def, r.nowOf())
}

// rruleOpts returns the rrule-go options with from as DTSTART.
func (r engineRule) rruleOpts(from time.Time) rrule.ROption {
	o := r.rrule
	o.Dtstart = from
	return o
}

// cronSchedule parses the cron spec; the rule must have one.
func (r engineRule) cronSchedule() (cron.Schedule, error) {
	return cron.ParseStandard(r.cron)
}
