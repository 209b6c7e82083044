package recurrence

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Limits of the rrule text: its whole length, its RRULE lines, its RDATE
// and EXDATE values, an RRULE's INTERVAL and COUNT. They keep one rule's
// cost bounded; real calendars stay far below them.
const (
	maxRRuleText   = 8192
	maxRRuleLines  = 10
	maxRRuleDates  = 1000
	maxRRuleEvery  = 1000
	maxRRuleCount  = 10000
	rrulePath      = "recurrence.rrule"
	rruleUntilNone = int64(1<<63 - 1)
)

// rfreq is an RRULE's FREQ, from the shortest period to the longest.
type rfreq int

const (
	secondly rfreq = iota
	minutely
	hourly
	daily
	weekly
	monthly
	yearly
)

var rfreqNames = []string{"SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"}

// rruleDays are the two-letter weekday names of RFC 5545, Monday first
// (the package's mondayIndex).
var rruleDays = []string{"MO", "TU", "WE", "TH", "FR", "SA", "SU"}

// weekdayNum is a BYDAY item: a weekday (Monday = 0) and its ordinal
// within the month or year (0 = every such weekday).
type weekdayNum struct{ n, wd int }

// rruleSpec is one parsed RRULE.
type rruleSpec struct {
	freq     rfreq
	interval int
	count    int // 0: none
	until    *icalTime

	// Masks of BYSECOND (bits 0..60; 60 is a leap second, never
	// produced), BYMINUTE and BYHOUR; zero when the part is absent.
	bySecond, byMinute uint64
	byHour             uint32
	byMonth            uint16 // bits 1..12
	byDay              []weekdayNum
	byMonthDay         []int
	byYearDay          []int
	byWeekNo           []int
	bySetPos           []int
	wkst               int // Monday = 0
}

// icalTime is a DATE or DATE-TIME value of DTSTART, UNTIL, RDATE or
// EXDATE: wall-clock seconds, read in UTC (utc), in a zone (loc), or in
// the rule's own zone (floating: neither).
type icalTime struct {
	wall int64
	date bool
	utc  bool
	loc  *time.Location
	zone string // the TZID as written
}

// rruleText is the parsed text of recurrence.rrule: an optional DTSTART,
// its RRULE lines, and RDATE and EXDATE values.
type rruleText struct {
	dtstart *icalTime
	rules   []*rruleSpec
	rdates  []icalTime
	exdates []icalTime
}

// rruleError is a parse error naming the text at fault and its position
// (1-based, in characters of the whole rrule text).
func rruleError(text string, pos int, quoted, format string, args ...any) *ValidationError {
	return invalid(rrulePath, CodeInvalidValue, fmt.Sprintf("%s at character %d: %s",
		quoted, utf8.RuneCountInString(text[:min(pos, len(text))])+1, fmt.Sprintf(format, args...)))
}

// logicalLine is one content line after unfolding, with the position in
// the text of each of its bytes.
type logicalLine struct {
	text string
	pos  []int
}

// at is the text position of byte i of the line (its end for i past it).
func (l logicalLine) at(i int) int {
	if i < len(l.pos) {
		return l.pos[i]
	}
	if len(l.pos) == 0 {
		return 0
	}
	return l.pos[len(l.pos)-1] + 1
}

// unfold splits text into content lines: CRLF or LF ends a line, and a
// line that starts with a space or a tab continues the one before (RFC
// 5545's folding). Blank lines are dropped.
func unfold(text string) []logicalLine {
	var out []logicalLine
	var cur *logicalLine
	start := 0
	for start <= len(text) {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		line := strings.TrimSuffix(text[start:end], "\r")
		switch {
		case cur != nil && line != "" && (line[0] == ' ' || line[0] == '\t'):
			for i := 1; i < len(line); i++ {
				cur.text += line[i : i+1]
				cur.pos = append(cur.pos, start+i)
			}
		case strings.TrimSpace(line) != "":
			out = append(out, logicalLine{})
			cur = &out[len(out)-1]
			lead := len(line) - len(strings.TrimLeft(line, " \t"))
			trimmed := strings.TrimRight(line[lead:], " \t")
			cur.text = trimmed
			for i := range trimmed {
				cur.pos = append(cur.pos, start+lead+i)
			}
		}
		start = end + 1
	}
	return out
}

// parsedTexts caches parseRRuleText's results by text: Compile reads the
// text several times (validation, zone, DTSTART checks, the rule), and
// the job workflow compiles its rule for every occurrence it plans. A
// parsed text is never changed after parsing.
var (
	parsedTexts sync.Map // string -> *rruleText
	parsedSize  atomic.Int64
)

const parsedTextsMax = 1024

// parseRRuleText parses recurrence.rrule: one RRULE value
// ("FREQ=DAILY;BYHOUR=9"), or content lines: DTSTART, RRULE, RDATE and
// EXDATE. Errors are *ValidationError at recurrence.rrule naming the
// part and its position.
func parseRRuleText(text string) (*rruleText, error) {
	if v, ok := parsedTexts.Load(text); ok {
		return v.(*rruleText), nil
	}
	t, err := parseRRuleTextOnce(text)
	if err != nil {
		return nil, err
	}
	if parsedSize.Add(1) > parsedTextsMax {
		parsedTexts.Clear()
		parsedSize.Store(0)
	}
	parsedTexts.Store(text, t)
	return t, nil
}

// parseRRuleTextOnce is parseRRuleText without the cache.
func parseRRuleTextOnce(text string) (*rruleText, error) {
	if len(text) > maxRRuleText {
		return nil, invalid(rrulePath, CodeOutOfRange, fmt.Sprintf("has %d characters; at most %d", len(text), maxRRuleText))
	}
	lines := unfold(text)
	if len(lines) == 0 {
		return nil, invalid(rrulePath, CodeRequired, "is empty: give an RRULE such as FREQ=WEEKLY;BYDAY=MO")
	}
	out := &rruleText{}
	for _, l := range lines {
		name, params, value, vpos, ok := splitContentLine(l)
		if !ok {
			// A bare rule value, without "RRULE:".
			name, value, vpos = "RRULE", l.text, 0
		}
		if err := out.addLine(text, l, strings.ToUpper(name), params, value, vpos); err != nil {
			return nil, err
		}
	}
	if len(out.rules) == 0 && len(out.rdates) == 0 {
		return nil, invalid(rrulePath, CodeRequired, "has no RRULE and no RDATE: nothing would run")
	}
	return out, nil
}

// contentParam is a property parameter (TZID=Europe/Berlin) and where it
// starts in its line.
type contentParam struct {
	name, value string
	pos         int
}

// splitContentLine splits NAME;PARAM=V;...:VALUE; ok is false for a line
// without a colon (a bare RRULE value). vpos is where the value starts.
func splitContentLine(l logicalLine) (name string, params []contentParam, value string, vpos int, ok bool) {
	colon := strings.IndexByte(l.text, ':')
	if colon < 0 {
		return "", nil, "", 0, false
	}
	head := l.text[:colon]
	parts := strings.Split(head, ";")
	name = parts[0]
	p := len(parts[0]) + 1
	for _, part := range parts[1:] {
		n, v, _ := strings.Cut(part, "=")
		params = append(params, contentParam{name: strings.ToUpper(n), value: strings.Trim(v, `"`), pos: p})
		p += len(part) + 1
	}
	return name, params, l.text[colon+1:], colon + 1, true
}

func (out *rruleText) addLine(text string, l logicalLine, name string, params []contentParam, value string, vpos int) error {
	switch name {
	case "RRULE":
		if len(out.rules) == maxRRuleLines {
			return rruleError(text, l.at(0), strconv.Quote(l.text), "more than %d RRULE lines", maxRRuleLines)
		}
		if len(params) > 0 {
			return rruleError(text, l.at(params[0].pos), params[0].name, "RRULE takes no parameters")
		}
		spec, err := parseRRule(text, l, value, vpos)
		if err != nil {
			return err
		}
		out.rules = append(out.rules, spec)
	case "DTSTART":
		if out.dtstart != nil {
			return rruleError(text, l.at(0), "DTSTART", "is given twice")
		}
		values, err := parseDateList(text, l, "DTSTART", params, value, vpos)
		if err != nil {
			return err
		}
		if len(values) != 1 {
			return rruleError(text, l.at(vpos), "DTSTART", "takes one date or date-time")
		}
		out.dtstart = &values[0]
	case "RDATE", "EXDATE":
		values, err := parseDateList(text, l, name, params, value, vpos)
		if err != nil {
			return err
		}
		list := &out.rdates
		if name == "EXDATE" {
			list = &out.exdates
		}
		if len(*list)+len(values) > maxRRuleDates {
			return rruleError(text, l.at(0), name, "more than %d values", maxRRuleDates)
		}
		*list = append(*list, values...)
	default:
		return rruleError(text, l.at(0), strconv.Quote(name), "is not a line of an rrule: use DTSTART, RRULE, RDATE or EXDATE")
	}
	return nil
}

// parseDateList reads the comma-separated DATE or DATE-TIME values of a
// DTSTART, RDATE or EXDATE line with their VALUE and TZID parameters.
func parseDateList(text string, l logicalLine, name string, params []contentParam, value string, vpos int) ([]icalTime, error) {
	var loc *time.Location
	var zoneName string
	date := false
	for _, p := range params {
		switch p.name {
		case "TZID":
			var err error
			if loc, err = LoadLocation(p.value); err != nil || p.value == "" {
				return nil, rruleError(text, l.at(p.pos), "TZID="+p.value, "is not a time zone: use an IANA name such as Europe/Berlin")
			}
			zoneName = p.value
		case "VALUE":
			switch strings.ToUpper(p.value) {
			case "DATE":
				date = true
			case "DATE-TIME":
			default:
				return nil, rruleError(text, l.at(p.pos), "VALUE="+p.value, "%s takes VALUE=DATE or VALUE=DATE-TIME", name)
			}
		default:
			return nil, rruleError(text, l.at(p.pos), p.name, "is not a parameter of %s: use TZID or VALUE", name)
		}
	}
	var out []icalTime
	pos := vpos
	for _, item := range strings.Split(value, ",") {
		t, err := parseICalTime(item, date)
		if err != nil {
			return nil, rruleError(text, l.at(pos), name+":"+item, "%v", err)
		}
		if t.utc && loc != nil {
			return nil, rruleError(text, l.at(pos), name+":"+item, "a UTC time (Z) takes no TZID")
		}
		if loc != nil && !t.date {
			t.loc, t.zone = loc, zoneName
		}
		out = append(out, t)
		pos += len(item) + 1
	}
	return out, nil
}

// parseICalTime reads 20260101, 20260101T090000 or 20260101T090000Z;
// date says VALUE=DATE was given.
func parseICalTime(s string, date bool) (icalTime, error) {
	layout, t := "20060102T150405", icalTime{}
	switch {
	case len(s) == 8:
		layout, t.date = "20060102", true
	case len(s) == 16 && (s[15] == 'Z' || s[15] == 'z'):
		s, t.utc = s[:15], true
	case len(s) != 15:
		return t, fmt.Errorf("is not a date (20260131) or date-time (20260131T090000, 20260131T090000Z)")
	}
	if date && !t.date {
		return t, fmt.Errorf("VALUE=DATE takes a date such as 20260131, not a date-time")
	}
	parsed, err := time.Parse(layout, strings.ToUpper(s))
	if err != nil || parsed.Year() < 1 {
		return t, fmt.Errorf("is not a valid date or date-time")
	}
	t.wall = parsed.Unix()
	return t, nil
}

// parseRRule parses an RRULE value (FREQ=...;...) found at byte vpos of
// line l.
func parseRRule(text string, l logicalLine, value string, vpos int) (*rruleSpec, error) {
	spec := &rruleSpec{interval: 1}
	seen := map[string]bool{}
	pos := vpos
	for _, part := range strings.Split(value, ";") {
		partPos := pos
		pos += len(part) + 1
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		upper := strings.ToUpper(name)
		if !ok || val == "" {
			return nil, rruleError(text, l.at(partPos), part, "a rule part is NAME=VALUE, such as FREQ=DAILY")
		}
		reader, known := rruleParts[upper]
		if !known {
			msg := "is not a rule part of RFC 5545"
			if guess := Closest(upper, rrulePartNames); guess != "" {
				msg += "; did you mean " + guess + "?"
			}
			return nil, rruleError(text, l.at(partPos), part, "%s", msg)
		}
		if seen[upper] {
			return nil, rruleError(text, l.at(partPos), part, "%s is given twice", upper)
		}
		seen[upper] = true
		if reason, ok := reader(spec, strings.ToUpper(val)); !ok {
			return nil, rruleError(text, l.at(partPos), part, "%s", reason)
		}
	}
	if !seen["FREQ"] {
		return nil, rruleError(text, l.at(vpos), strconv.Quote(value), "FREQ is required: one of %s", strings.Join(rfreqNames, ", "))
	}
	if reason := spec.check(seen); reason != "" {
		return nil, rruleError(text, l.at(vpos), strconv.Quote(value), "%s", reason)
	}
	return spec, nil
}

// check applies RFC 5545's rules on which parts go together.
func (s *rruleSpec) check(seen map[string]bool) string {
	switch {
	case seen["COUNT"] && seen["UNTIL"]:
		return "COUNT and UNTIL cannot both be given (RFC 5545)"
	case seen["BYWEEKNO"] && s.freq != yearly:
		return "BYWEEKNO is allowed only with FREQ=YEARLY (RFC 5545)"
	case seen["BYYEARDAY"] && (s.freq == daily || s.freq == weekly || s.freq == monthly):
		return "BYYEARDAY is not allowed with FREQ=DAILY, WEEKLY or MONTHLY (RFC 5545)"
	case seen["BYMONTHDAY"] && s.freq == weekly:
		return "BYMONTHDAY is not allowed with FREQ=WEEKLY (RFC 5545)"
	case seen["BYSETPOS"] && !slices.ContainsFunc(rrulePartNames, func(p string) bool { return p != "BYSETPOS" && strings.HasPrefix(p, "BY") && seen[p] }):
		return "BYSETPOS needs another BYxxx part to pick from (RFC 5545)"
	}
	for _, d := range s.byDay {
		if d.n == 0 {
			continue
		}
		if s.freq != monthly && s.freq != yearly {
			return "BYDAY with an ordinal (1MO, -1FR) is allowed only with FREQ=MONTHLY or YEARLY (RFC 5545)"
		}
		if s.freq == yearly && seen["BYWEEKNO"] {
			return "BYDAY with an ordinal is not allowed with BYWEEKNO (RFC 5545)"
		}
		if s.freq == monthly && (d.n > 5 || d.n < -5) {
			return fmt.Sprintf("BYDAY=%d%s: a month has at most 5 of a weekday", d.n, rruleDays[d.wd])
		}
	}
	return ""
}

// rruleParts read each rule part's value (upper case) into the spec, or
// say why it is bad.
var rruleParts = map[string]func(s *rruleSpec, value string) (string, bool){
	"FREQ": func(s *rruleSpec, v string) (string, bool) {
		i := slices.Index(rfreqNames, v)
		if i < 0 {
			return "FREQ is one of " + strings.Join(rfreqNames, ", "), false
		}
		s.freq = rfreq(i)
		return "", true
	},
	"INTERVAL": func(s *rruleSpec, v string) (string, bool) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxRRuleEvery {
			return fmt.Sprintf("INTERVAL is a whole number from 1 to %d", maxRRuleEvery), false
		}
		s.interval = n
		return "", true
	},
	"COUNT": func(s *rruleSpec, v string) (string, bool) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxRRuleCount {
			return fmt.Sprintf("COUNT is a whole number from 1 to %d", maxRRuleCount), false
		}
		s.count = n
		return "", true
	},
	"UNTIL": func(s *rruleSpec, v string) (string, bool) {
		t, err := parseICalTime(v, false)
		if err != nil {
			return "UNTIL " + err.Error(), false
		}
		s.until = &t
		return "", true
	},
	"BYSECOND":   maskPart("BYSECOND", 0, 60, func(s *rruleSpec, v int) { s.bySecond |= 1 << v }),
	"BYMINUTE":   maskPart("BYMINUTE", 0, 59, func(s *rruleSpec, v int) { s.byMinute |= 1 << v }),
	"BYHOUR":     maskPart("BYHOUR", 0, 23, func(s *rruleSpec, v int) { s.byHour |= 1 << v }),
	"BYMONTH":    maskPart("BYMONTH", 1, 12, func(s *rruleSpec, v int) { s.byMonth |= 1 << v }),
	"BYMONTHDAY": signedPart("BYMONTHDAY", 31, func(s *rruleSpec) *[]int { return &s.byMonthDay }),
	"BYYEARDAY":  signedPart("BYYEARDAY", 366, func(s *rruleSpec) *[]int { return &s.byYearDay }),
	"BYWEEKNO":   signedPart("BYWEEKNO", 53, func(s *rruleSpec) *[]int { return &s.byWeekNo }),
	"BYSETPOS":   signedPart("BYSETPOS", 366, func(s *rruleSpec) *[]int { return &s.bySetPos }),
	"BYDAY": func(s *rruleSpec, v string) (string, bool) {
		for item := range strings.SplitSeq(v, ",") {
			d, ok := parseByDay(item)
			if !ok {
				return fmt.Sprintf("%q is not a weekday: use MO, TU, WE, TH, FR, SA, SU, with an optional ordinal (1MO, -1FR) from -53 to 53", item), false
			}
			if !slices.Contains(s.byDay, d) {
				s.byDay = append(s.byDay, d)
			}
		}
		return "", true
	},
	"WKST": func(s *rruleSpec, v string) (string, bool) {
		i := slices.Index(rruleDays, v)
		if i < 0 {
			return "WKST is one of MO, TU, WE, TH, FR, SA, SU", false
		}
		s.wkst = i
		return "", true
	},
}

// rrulePartNames are the known parts, for suggestions.
var rrulePartNames = []string{"FREQ", "INTERVAL", "COUNT", "UNTIL", "BYSECOND", "BYMINUTE", "BYHOUR", "BYDAY",
	"BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYMONTH", "BYSETPOS", "WKST"}

// parseByDay reads MO, 2TU, -1FR, +3WE.
func parseByDay(item string) (weekdayNum, bool) {
	if len(item) < 2 {
		return weekdayNum{}, false
	}
	wd := slices.Index(rruleDays, item[len(item)-2:])
	if wd < 0 {
		return weekdayNum{}, false
	}
	d := weekdayNum{wd: wd}
	if num := item[:len(item)-2]; num != "" {
		n, err := strconv.Atoi(num)
		if err != nil || n == 0 || n < -53 || n > 53 {
			return weekdayNum{}, false
		}
		d.n = n
	}
	return d, true
}

// maskPart reads a list of values lo..hi into a mask.
func maskPart(name string, lo, hi int, set func(*rruleSpec, int)) func(*rruleSpec, string) (string, bool) {
	return func(s *rruleSpec, v string) (string, bool) {
		for item := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(item)
			if err != nil || n < lo || n > hi {
				return itemOf(v, item) + fmt.Sprintf("%s values are %d..%d", name, lo, hi), false
			}
			set(s, n)
		}
		return "", true
	}
}

// signedPart reads a list of values -limit..-1, 1..limit.
func signedPart(name string, limit int, list func(*rruleSpec) *[]int) func(*rruleSpec, string) (string, bool) {
	return func(s *rruleSpec, v string) (string, bool) {
		for item := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(item)
			if err != nil || n == 0 || n < -limit || n > limit {
				return itemOf(v, item) + fmt.Sprintf("%s values are -%d..-1 or 1..%d", name, limit, limit), false
			}
			if l := list(s); !slices.Contains(*l, n) {
				*l = append(*l, n)
			}
		}
		return "", true
	}
}

// itemOf names the bad item of a list ("0: "), or nothing when the list
// has one item, which the message quotes already.
func itemOf(list, item string) string {
	if !strings.Contains(list, ",") {
		return ""
	}
	return strconv.Quote(item) + ": "
}
