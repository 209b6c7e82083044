package recurrence

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxRules bounds a recurrence's rules: each adds its cost to every Next.
const maxRules = 10

// source is an occurrence set the Rule walks: Azure's fields and cron
// (generator), an rrule (rruleSource), or the union of rules.
type source interface {
	// after returns the first occurrence strictly after t.
	after(t time.Time) (time.Time, bool)
	// atOrAfter returns the first occurrence at or after t.
	atOrAfter(t time.Time) (time.Time, bool)
	// shift reports how a DST transition placed occurrence t.
	shift(t time.Time) (Shift, bool)
}

// union is the occurrences of several rules: an instant two rules reach
// is one occurrence.
type union struct{ members []source }

func (u *union) after(t time.Time) (time.Time, bool) {
	return u.first(func(m source) (time.Time, bool) { return m.after(t) })
}

func (u *union) atOrAfter(t time.Time) (time.Time, bool) {
	return u.first(func(m source) (time.Time, bool) { return m.atOrAfter(t) })
}

func (u *union) first(next func(source) (time.Time, bool)) (time.Time, bool) {
	var best time.Time
	found := false
	for _, m := range u.members {
		if t, ok := next(m); ok && (!found || t.Before(best)) {
			best, found = t, true
		}
	}
	return best, found
}

// shift reports the shift of the first rule that has occurrence t and
// was moved or repeated there, a move before a repeat.
func (u *union) shift(t time.Time) (Shift, bool) {
	var found Shift
	for _, m := range u.members {
		if at, ok := m.atOrAfter(t); !ok || !at.Equal(t) {
			continue
		}
		if s, ok := m.shift(t); ok && (found.Kind == "" || s.Kind == ShiftMoved) {
			found = s
		}
	}
	return found, found.Kind != ""
}

// hasRules reports whether r is an rrule or a list of rules, which
// validateRules checks instead of Azure's fields and cron.
func (r *Recurrence) hasRules() bool { return r.RRule != "" || r.Rules != nil }

// validateRules checks an rrule or a list of rules: what may come with
// them, the list's length, and each rule.
func (r *Recurrence) validateRules() error {
	top, hint := "recurrence.rrule", "either rrule or frequency"
	if r.Rules != nil {
		top, hint = "recurrence.rules", "the rule inside rules"
		if r.RRule != "" {
			return invalid("recurrence.rrule", CodeNotAllowed, "is not allowed with recurrence.rules: put the rrule in the list")
		}
	}
	for _, f := range []struct {
		path  string
		given bool
	}{{"recurrence.cron", r.Cron != ""}, {"recurrence.frequency", r.Frequency != ""},
		{"recurrence.interval", r.Interval != nil}, {"recurrence.schedule", r.Schedule != nil}} {
		if f.given {
			return invalid(f.path, CodeNotAllowed, "is not allowed with "+top+": give "+hint)
		}
	}
	if r.Rules == nil {
		_, err := parseRRuleText(r.RRule)
		return err
	}
	if len(r.Rules) == 0 || len(r.Rules) > maxRules {
		return invalid("recurrence.rules", CodeOutOfRange, fmt.Sprintf("has %d rules; give 1 to %d", len(r.Rules), maxRules))
	}
	for i := range r.Rules {
		if err := r.Rules[i].validate(fmt.Sprintf("recurrence.rules[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

// validate checks one rule of a list at path: exactly one of Azure's
// fields, cron and rrule, each as the recurrence's own would be checked.
func (m *RuleSpec) validate(path string) error {
	kinds := 0
	for _, given := range []bool{m.Frequency != "" || m.Interval != nil || m.Schedule != nil, m.Cron != "", m.RRule != ""} {
		if given {
			kinds++
		}
	}
	if kinds != 1 {
		given := "several"
		if kinds == 0 {
			given = "none"
		}
		return invalid(path, CodeInvalidValue, "is one rule: give frequency (with interval and schedule), or cron, or rrule; not "+given)
	}
	var err error
	switch {
	case m.RRule != "":
		_, err = parseRRuleText(m.RRule)
	case m.Cron != "":
		_, err = parseCron(m.Cron)
	default:
		rec := Recurrence{Frequency: m.Frequency, Interval: m.Interval, Schedule: m.Schedule}
		if err = rec.validateFrequency(); err == nil && rec.Schedule != nil {
			err = rec.Schedule.validate(rec.Frequency)
		}
		m.Frequency = rec.Frequency
	}
	return rulePath(err, path)
}

// rulePath moves an error at recurrence.x to path.x.
func rulePath(err error, path string) error {
	ve, ok := err.(*ValidationError)
	if !ok {
		return err
	}
	c := *ve
	c.Path = path + strings.TrimPrefix(c.Path, "recurrence")
	return &c
}

// rruleTexts returns each rrule of r with its JSON path.
func (r *Recurrence) rruleTexts() (paths, texts []string) {
	if r.RRule != "" {
		return []string{"recurrence.rrule"}, []string{r.RRule}
	}
	for i, m := range r.Rules {
		if m.RRule != "" {
			paths = append(paths, fmt.Sprintf("recurrence.rules[%d].rrule", i))
			texts = append(texts, m.RRule)
		}
	}
	return paths, texts
}

// location returns the zone r is read in: timeZone; without it, the TZID
// of its rrules' DTSTART; else UTC. r is valid.
func (r *Recurrence) location() (*time.Location, error) {
	if r.TimeZone != "" {
		return LoadLocation(r.TimeZone)
	}
	_, texts := r.rruleTexts()
	for _, text := range texts {
		if t, err := parseRRuleText(text); err == nil && t.dtstart != nil && t.dtstart.loc != nil {
			return t.dtstart.loc, nil
		}
	}
	return time.UTC, nil
}

// checkDTStarts checks each rrule's DTSTART against the recurrence's
// timeZone (loc, when given), the other rrules' zones and startTime: a
// DTSTART is the rule's anchor and zone, so one that says otherwise than
// they do is refused, naming both.
func (d *Definition) checkDTStarts(loc *time.Location) error {
	r := d.Recurrence
	paths, texts := r.rruleTexts()
	var zoneFrom string
	var zoneLoc *time.Location
	for i, text := range texts {
		t, err := parseRRuleText(text)
		if err != nil || t.dtstart == nil {
			continue
		}
		dt := t.dtstart
		switch {
		case dt.loc != nil && r.TimeZone != "" && dt.loc.String() != loc.String():
			return invalid(paths[i], CodeInvalidValue, fmt.Sprintf("DTSTART;TZID=%s is not recurrence.timeZone %s: give the zone once, or the same in both", dt.zone, r.TimeZone))
		case dt.utc && loc != time.UTC:
			return invalid(paths[i], CodeInvalidValue, fmt.Sprintf("DTSTART in UTC (Z) is not read in recurrence.timeZone %s: give a local DTSTART, or DTSTART;TZID=%s", loc, loc))
		case dt.loc != nil && r.TimeZone == "":
			if zoneLoc != nil && dt.loc.String() != zoneLoc.String() {
				return invalid(paths[i], CodeInvalidValue, fmt.Sprintf("DTSTART;TZID=%s is not the zone of %s (%s): give recurrence.timeZone", dt.zone, zoneFrom, zoneLoc))
			}
			zoneFrom, zoneLoc = paths[i], dt.loc
		}
		if d.StartTime != nil {
			at := time.Unix(icalInstant(*dt, newZone(cmpLoc(zoneLoc, loc))), 0)
			if !at.Equal(d.StartTime.t) {
				return invalid(paths[i], CodeInvalidValue, fmt.Sprintf("%s is not startTime %s: give one of them, or both the same",
					dtstartText(dt, newZone(cmpLoc(zoneLoc, loc))), d.StartTime))
			}
		}
	}
	return nil
}

// compileRules returns the source of an rrule or of a list of rules,
// read in zone z from anchor a (startTime, else C), and the anchor of
// the whole: a single rrule's DTSTART when it has one. A rule that never
// occurs is refused at its path.
func compileRules(rec *Recurrence, z zone, a time.Time) (source, time.Time, error) {
	if rec.Rules == nil {
		text, err := parseRRuleText(rec.RRule)
		if err != nil {
			return nil, a, err
		}
		src := newRRuleSource(text, rruleZone(z), a)
		anchor := anchorOf(text, rruleZone(z), a).anchor
		return src, anchor, neverOccurs(src, anchor, "recurrence.rrule")
	}
	u := &union{}
	for i, m := range rec.Rules {
		path := fmt.Sprintf("recurrence.rules[%d]", i)
		var src source
		anchor := a
		switch {
		case m.RRule != "":
			text, err := parseRRuleText(m.RRule)
			if err != nil {
				return nil, a, rulePath(err, path)
			}
			src = newRRuleSource(text, rruleZone(z), a)
			anchor = anchorOf(text, rruleZone(z), a).anchor
		case m.Cron != "":
			g, err := newCronGenerator(m.Cron, z, a)
			if err != nil {
				return nil, a, rulePath(err, path)
			}
			src = &g
		default:
			g := newGenerator(&Recurrence{Frequency: m.Frequency, Interval: m.Interval, Schedule: m.Schedule}, z, a)
			src = &g
		}
		if err := neverOccurs(src, anchor, path); err != nil {
			return nil, a, err
		}
		u.members = append(u.members, src)
	}
	return u, a, nil
}

// rruleZone is z as an rrule reads it: RFC 5545 ignores instances at a
// wall-clock time the clocks skip, unless the job's DST policy says
// otherwise.
func rruleZone(z zone) zone {
	if z.gap == "" {
		z.gap = DSTSkip
	}
	return z
}

func neverOccurs(src source, anchor time.Time, path string) error {
	if _, ok := src.atOrAfter(anchor); !ok {
		return invalid(path, CodeNeverOccurs, "this rule never occurs: no instance at or after its start within the years the search covers (to 9999)")
	}
	return nil
}

// cmpLoc returns a, or b when a is nil.
func cmpLoc(a, b *time.Location) *time.Location {
	if a != nil {
		return a
	}
	return b
}

// rulePeriods caches RulesPeriod by definition, cleared when it holds
// rulePeriodsMax: its keys are whole definitions, one per job at most.
var (
	rulePeriods     sync.Map
	rulePeriodsSize atomic.Int64
)

const rulePeriodsMax = 4096

// RulesPeriod returns the shortest time between two runs of a definition
// whose recurrence is an rrule or a list of rules, over its first 500
// runs from its start (startTime or DTSTART, else the year 2001), and
// false when it does not compile or runs fewer than twice. It is their
// period, as a frequency and interval have one, and as CronPeriod is a
// cron's.
func RulesPeriod(def Definition) (time.Duration, bool) {
	key := periodKey(def)
	if v, ok := rulePeriods.Load(key); ok {
		d := v.(time.Duration)
		return d, d > 0
	}
	var d time.Duration
	from := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if def.StartTime != nil {
		from = def.StartTime.t
	}
	if r, err := Compile(def, from); err == nil {
		d, _ = r.ShortestGap(r.anchor, 500)
	}
	if rulePeriodsSize.Add(1) > rulePeriodsMax {
		rulePeriods.Clear()
		rulePeriodsSize.Store(0)
	}
	rulePeriods.Store(key, d)
	return d, d > 0
}

// periodKey writes out what RulesPeriod's answer depends on. It avoids
// encoding/json and fmt, which workflowcheck refuses in workflow code
// (the job workflow reads the catch-up window).
func periodKey(def Definition) string {
	var b strings.Builder
	add := func(parts ...string) {
		for _, p := range parts {
			b.WriteString(p)
			b.WriteByte('|')
		}
	}
	ints := func(v []int) {
		for _, x := range v {
			add(strconv.Itoa(x))
		}
		add(";")
	}
	if def.StartTime != nil {
		add("start", def.StartTime.String())
	}
	r := def.Recurrence
	add(r.RRule, r.TimeZone)
	if r.DST != nil {
		add("dst", r.DST.Gap, r.DST.Repeat)
	}
	if r.Count != nil {
		add("count", strconv.Itoa(*r.Count))
	}
	if r.EndTime != nil {
		add("end", r.EndTime.String())
	}
	for _, e := range r.Exclusions {
		add("except", e.Date, e.From, e.To)
	}
	for _, m := range r.Rules {
		add("rule", string(m.Frequency), m.Cron, m.RRule)
		if m.Interval != nil {
			add("interval", strconv.Itoa(*m.Interval))
		}
		if sc := m.Schedule; sc != nil {
			add("schedule")
			ints(sc.Minutes)
			ints(sc.Hours)
			ints(sc.MonthDays)
			for _, d := range sc.WeekDays {
				add("day", string(d))
			}
			for _, o := range sc.MonthlyOccurrences {
				add("monthly", string(o.Day))
				if o.Occurrence != nil {
					add("occurrence", strconv.Itoa(*o.Occurrence))
				}
			}
		}
	}
	return b.String()
}

// Zone returns the name of the zone r is read in: its timeZone, else the
// TZID of its rrules' DTSTART, else "" (UTC).
func (r *Recurrence) Zone() string {
	if r.TimeZone != "" {
		return r.TimeZone
	}
	if loc, err := r.location(); err == nil && loc != time.UTC {
		return loc.String()
	}
	return ""
}
