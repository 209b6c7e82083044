package recurrence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Parse reads job properties ({"startTime": ..., "recurrence": {...}},
// other properties are ignored), normalizes their letter case and
// validates them. Errors are *ValidationError with the JSON path of the
// bad field.
func Parse(data []byte) (Definition, error) {
	if trimmed := bytes.TrimSpace(data); len(trimmed) == 0 || trimmed[0] != '{' {
		what := "empty input"
		if len(trimmed) > 0 {
			what = strconv.Quote(string(trimmed[:min(len(trimmed), 20)]))
		}
		return Definition{}, invalid("", CodeInvalidJSON, "must be a JSON object with startTime and recurrence, not "+what)
	}
	var def Definition
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&def); err != nil {
		return Definition{}, jsonError(err)
	}
	if dec.More() {
		return Definition{}, invalid("", CodeInvalidJSON, "invalid JSON: more than one value")
	}
	if err := checkUnknownFields(data); err != nil {
		return Definition{}, err
	}
	if err := def.Validate(); err != nil {
		return Definition{}, err
	}
	return def, nil
}

// PreviewJob is Preview of the job properties, or of a whole job definition
// ({"properties": {...}}, the member name in any letter case), in data,
// with the Shifts among the times; for the latter, error paths start with
// "properties".
func PreviewJob(data []byte, created, from time.Time, n int) ([]time.Time, []Shifted, error) {
	props, prefix := splitJob(data)
	def, err := Parse(props)
	if err != nil {
		return nil, nil, withPrefix(err, prefix)
	}
	r, err := Compile(def, created)
	if err != nil {
		return nil, nil, withPrefix(err, prefix)
	}
	times := r.Preview(from, n)
	return times, r.Shifts(times), nil
}

// splitJob returns the job properties in data and their JSON path.
func splitJob(data []byte) ([]byte, string) {
	var job struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(data, &job) == nil && job.Properties != nil {
		return job.Properties, "properties"
	}
	return data, ""
}

func withPrefix(err error, prefix string) error {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return ve.WithPrefix(prefix)
	}
	return err
}

// jsonError turns a decoding error into a ValidationError that names the
// field when encoding/json knows it.
func jsonError(err error) *ValidationError {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return invalid(typeErr.Field, CodeInvalidValue,
			fmt.Sprintf("must be %s, not a JSON %s", describeType(typeErr.Type.String()), typeErr.Value))
	}
	return invalid("", CodeInvalidJSON, "invalid JSON: "+strings.TrimPrefix(err.Error(), "json: "))
}

func describeType(goType string) string {
	switch {
	case strings.Contains(goType, "[]"):
		return "an array"
	case strings.HasSuffix(goType, "int"):
		return "an integer"
	case strings.Contains(goType, "string"), strings.Contains(goType, "Frequency"), strings.Contains(goType, "DayOfWeek"):
		return "a string"
	default:
		return "an object"
	}
}

// Validate checks d against every rule of docs/recurrence.md's validation
// section except "never occurs" (which Compile checks), rewrites frequency
// and day names to the service's lower case, and turns a date-only endTime
// into the instant it names (midnight in the recurrence's zone). The error is the
// first *ValidationError found, in document order.
func (d *Definition) Validate() error {
	if d.StartTime != nil && d.StartTime.invalid != "" {
		return invalid("startTime", CodeInvalidDateTime, badDateTime(d.StartTime.invalid))
	}
	r := d.Recurrence
	if r == nil {
		return nil
	}
	if err := r.validateBasics(); err != nil {
		return err
	}
	loc, err := LoadLocation(r.TimeZone)
	if err != nil {
		return err.(*ValidationError).WithPrefix("recurrence.timeZone")
	}
	if r.hasRules() {
		if err := d.checkDTStarts(loc); err != nil {
			return err
		}
		loc, _ = r.location()
	}
	if r.EndTime != nil && r.EndTime.dateOnly {
		// A date alone is midnight in the zone; from here on it is that
		// instant, written back as a date-time like every other.
		r.EndTime = At(r.EndTime.In(loc))
	}
	if r.EndTime != nil && d.StartTime != nil && r.EndTime.In(loc).Before(d.StartTime.t) {
		return invalid("recurrence.endTime", CodeEndBeforeStart,
			fmt.Sprintf("%s is before startTime %s", r.EndTime, d.StartTime))
	}
	if err := validateExclusions(r.Exclusions); err != nil {
		return err
	}
	if err := r.DST.validate(); err != nil {
		return err
	}
	if r.Schedule != nil {
		return r.Schedule.validate(r.Frequency)
	}
	return nil
}

// maxExclusions bounds a recurrence's exclusions.
const maxExclusions = 1000

// validateExclusions checks that each exclusion is a date, or a from and
// a to, not after it; dates are YYYY-MM-DD.
func validateExclusions(list []Exclusion) error {
	if len(list) > maxExclusions {
		return invalid("recurrence.exclusions", CodeOutOfRange, fmt.Sprintf("has %d items; at most %d", len(list), maxExclusions))
	}
	for i, e := range list {
		path := fmt.Sprintf("recurrence.exclusions[%d]", i)
		switch {
		case e.Date != "" && (e.From != "" || e.To != ""):
			return invalid(path, CodeInvalidValue, "is either a date or a from and a to, not both")
		case e.Date != "":
			if _, err := time.Parse(time.DateOnly, e.Date); err != nil {
				return invalid(path+".date", CodeInvalidDateTime, fmt.Sprintf("%q is not a date: use YYYY-MM-DD", e.Date))
			}
		case e.From == "" || e.To == "":
			return invalid(path, CodeRequired, "needs a date, or a from and a to")
		default:
			from, err := time.Parse(time.DateOnly, e.From)
			if err != nil {
				return invalid(path+".from", CodeInvalidDateTime, fmt.Sprintf("%q is not a date: use YYYY-MM-DD", e.From))
			}
			to, err := time.Parse(time.DateOnly, e.To)
			if err != nil {
				return invalid(path+".to", CodeInvalidDateTime, fmt.Sprintf("%q is not a date: use YYYY-MM-DD", e.To))
			}
			if to.Before(from) {
				return invalid(path+".to", CodeEndBeforeStart, fmt.Sprintf("%s is before from %s", e.To, e.From))
			}
		}
	}
	return nil
}

func (r *Recurrence) validateBasics() error {
	if r.hasRules() {
		if err := r.validateRules(); err != nil {
			return err
		}
	} else if r.Cron != "" {
		if err := r.validateCron(); err != nil {
			return err
		}
	} else if err := r.validateFrequency(); err != nil {
		return err
	}
	if r.Count != nil && *r.Count < 1 {
		return invalid("recurrence.count", CodeOutOfRange, fmt.Sprintf("must be at least 1, not %d", *r.Count))
	}
	if r.EndTime != nil && r.EndTime.invalid != "" {
		return invalid("recurrence.endTime", CodeInvalidDateTime, badDateTime(r.EndTime.invalid))
	}
	return nil
}

// validateCron checks a cron recurrence: the expression parses, and no
// frequency, interval or schedule comes with it.
func (r *Recurrence) validateCron() error {
	for _, f := range []struct {
		path  string
		given bool
	}{{"recurrence.frequency", r.Frequency != ""}, {"recurrence.interval", r.Interval != nil}, {"recurrence.schedule", r.Schedule != nil}} {
		if f.given {
			return invalid(f.path, CodeNotAllowed, "is not allowed with recurrence.cron: give either cron or frequency")
		}
	}
	_, err := parseCron(r.Cron)
	return err
}

func (r *Recurrence) validateFrequency() error {
	if r.Frequency == "" {
		return invalid("recurrence.frequency", CodeRequired,
			"is required when recurrence is given: one of Second, Minute, Hour, Day, Week, Month, Year (or give recurrence.cron)")
	}
	f, ok := r.Frequency.normalize()
	if !ok {
		return invalid("recurrence.frequency", CodeInvalidFrequency,
			strconv.Quote(string(r.Frequency))+" is not a frequency: use one of Second, Minute, Hour, Day, Week, Month, Year")
	}
	r.Frequency = f
	if r.Interval != nil {
		if iv, limit := *r.Interval, maxInterval[f]; iv < 1 || iv > limit {
			return invalid("recurrence.interval", CodeOutOfRange,
				fmt.Sprintf("must be between 1 and %d for frequency %s, not %d", limit, f.title(), iv))
		}
	}
	return nil
}

// which frequencies accept a schedule field: "expand" or "filter" both
// accept; the rest reject.
var fieldFrequencies = map[string][]Frequency{
	"weekDays":           {Week},
	"monthDays":          {Month},
	"monthlyOccurrences": {Month},
}

func (s *Schedule) validate(f Frequency) error {
	const p = "recurrence.schedule."
	if err := checkRange(p+"minutes", s.Minutes, 0, 59, false); err != nil {
		return err
	}
	if err := checkRange(p+"hours", s.Hours, 0, 23, false); err != nil {
		return err
	}
	for _, field := range []struct {
		name  string
		given bool
	}{
		{"weekDays", len(s.WeekDays) > 0},
		{"monthDays", len(s.MonthDays) > 0},
		{"monthlyOccurrences", len(s.MonthlyOccurrences) > 0},
	} {
		if field.given && !frequencyIn(f, fieldFrequencies[field.name]) {
			return invalid(p+field.name, CodeNotAllowed,
				fmt.Sprintf("can be given only with frequency %s, not %s", fieldFrequencies[field.name][0].title(), f.title()))
		}
	}
	if len(s.WeekDays) > 7 {
		return invalid(p+"weekDays", CodeTooManyWeekDays, fmt.Sprintf("has %d entries; at most 7 are allowed", len(s.WeekDays)))
	}
	// Paths are formatted only on failure: Compile validates on every
	// occurrence the job workflow plans, and a Sprintf per valid entry was
	// most of the cost of compiling a five-weekday rule.
	for i := range s.WeekDays {
		if !normalizeDay(&s.WeekDays[i]) {
			return badDay(fmt.Sprintf("%sweekDays[%d]", p, i), s.WeekDays[i])
		}
	}
	if err := checkRange(p+"monthDays", s.MonthDays, -31, 31, true); err != nil {
		return err
	}
	for i := range s.MonthlyOccurrences {
		if err := s.MonthlyOccurrences[i].validate(p, i); err != nil {
			return err
		}
	}
	return nil
}

// validate checks the i-th monthly occurrence of the schedule at path p.
func (o *MonthlyOccurrence) validate(p string, i int) error {
	path := func(field string) string { return fmt.Sprintf("%smonthlyOccurrences[%d].%s", p, i, field) }
	if o.Day == "" {
		return invalid(path("day"), CodeRequired, "is required: a day name such as Friday")
	}
	if !normalizeDay(&o.Day) {
		return badDay(path("day"), o.Day)
	}
	if o.Occurrence != nil {
		if n := *o.Occurrence; n == 0 || n < -5 || n > 5 {
			return invalid(path("occurrence"), CodeOutOfRange,
				fmt.Sprintf("must be between 1 and 5, or -5 and -1 to count from the end of the month, not %d", n))
		}
	}
	return nil
}

// normalizeDay rewrites d in the canonical lower case and reports whether
// it names a day.
func normalizeDay(d *DayOfWeek) bool {
	w, ok := d.Weekday()
	if ok {
		*d = DayOfWeekOf(w)
	}
	return ok
}

func badDay(path string, d DayOfWeek) error {
	return invalid(path, CodeInvalidValue, strconv.Quote(string(d))+" is not a day: use Monday to Sunday")
}

func checkRange(path string, values []int, lo, hi int, nonZero bool) error {
	for i, v := range values {
		if v < lo || v > hi || (nonZero && v == 0) {
			msg := fmt.Sprintf("must be between %d and %d, not %d", lo, hi, v)
			if nonZero {
				msg = fmt.Sprintf("must be between 1 and %d, or %d and -1 to count from the end of the month, not %d", hi, lo, v)
			}
			return invalid(fmt.Sprintf("%s[%d]", path, i), CodeOutOfRange, msg)
		}
	}
	return nil
}

func frequencyIn(f Frequency, list []Frequency) bool {
	for _, x := range list {
		if x == f {
			return true
		}
	}
	return false
}

func pathSchedule(def Definition) string {
	if def.Recurrence != nil && def.Recurrence.Schedule != nil {
		return "recurrence.schedule"
	}
	return "recurrence"
}

// validate checks the policy's values, written back in their canonical
// case; nil is valid.
func (p *DSTPolicy) validate() error {
	if p == nil {
		return nil
	}
	for _, f := range []struct {
		value *string
		path  string
		known []string
	}{
		{&p.Gap, "recurrence.dst.gap", []string{DSTShiftForward, DSTSkip, DSTAtTransition}},
		{&p.Repeat, "recurrence.dst.repeat", []string{DSTFirst, DSTLast, DSTBoth}},
	} {
		if *f.value == "" {
			continue
		}
		i := slices.IndexFunc(f.known, func(k string) bool { return strings.EqualFold(k, *f.value) })
		if i < 0 {
			return invalid(f.path, CodeInvalidValue, fmt.Sprintf("%q is not one of %s", *f.value, strings.Join(f.known, ", ")))
		}
		*f.value = f.known[i]
	}
	return nil
}
