package recurrence

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cronFrequency is the generator's frequency of a cron recurrence: its
// days come from the expression, its times of the day are its hours x
// minutes (x seconds). Never a frequency of the API (normalize refuses it).
const cronFrequency Frequency = "cron"

// cronSpec is a parsed cron expression: minute hour day-of-month month
// day-of-week, with Quartz's L, W and #, and a seconds field before them
// when there are six fields, as Quartz and croner read six.
type cronSpec struct {
	seconds uint64 // bit s, 0..59; 0 for five fields: at whole minutes
	minutes uint64 // bit m, 0..59
	hours   uint32 // bit h, 0..23
	months  uint16 // bit m, 1..12

	// Day of month: days (bit d, 1..31), days before the last (bit n for
	// L-n, L itself is n = 0), the weekday nearest to a day (bit d for dW)
	// and the last weekday of the month (LW). domAny is * or ?.
	domDays    uint32
	domLast    uint32
	domNearest uint32
	domLastW   bool
	domAny     bool

	// Day of week (bit 0 = Sunday): every such day, the last of the month
	// (wL), the k-th of the month (w#k, bit k). dowAny is * or ?.
	dowDays uint8
	dowLast uint8
	dowNth  [7]uint8
	dowAny  bool
}

// cronShorthands are the predefined expressions.
var cronShorthands = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

var (
	monthNames = []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}
	dayAbbrevs = []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}
)

// cronField describes one of the fields.
type cronField struct {
	name     string
	min, max int
	names    []string // names of min, min+1, ...
}

var cronFields = [5]cronField{
	{name: "minute", min: 0, max: 59},
	{name: "hour", min: 0, max: 23},
	{name: "day-of-month", min: 1, max: 31},
	{name: "month", min: 1, max: 12, names: monthNames},
	{name: "day-of-week", min: 0, max: 7, names: dayAbbrevs},
}

// secondField is the first of six fields.
var secondField = cronField{name: "second", min: 0, max: 59}

// parseCron parses expr: five fields separated by spaces, six with
// seconds first, or one of the @ shorthands. Errors are *ValidationError
// at recurrence.cron.
func parseCron(expr string) (*cronSpec, error) {
	text := strings.TrimSpace(expr)
	if full, ok := cronShorthands[strings.ToLower(text)]; ok {
		text = full
	}
	fields := strings.Fields(text)
	if len(fields) != 5 && len(fields) != 6 {
		return nil, cronError("has %d fields; a cron expression has 5 (minute hour day-of-month month day-of-week), 6 with a second field first, or is one of @yearly, @monthly, @weekly, @daily, @hourly", len(fields))
	}
	c := &cronSpec{}
	var err error
	if len(fields) == 6 {
		if c.seconds, _, err = parseCronField(fields[0], secondField, nil); err != nil {
			return nil, err
		}
		fields = fields[1:]
	}
	var minutes, hours, months uint64
	if minutes, _, err = parseCronField(fields[0], cronFields[0], nil); err != nil {
		return nil, err
	}
	if hours, _, err = parseCronField(fields[1], cronFields[1], nil); err != nil {
		return nil, err
	}
	if months, _, err = parseCronField(fields[3], cronFields[3], nil); err != nil {
		return nil, err
	}
	c.minutes, c.hours, c.months = minutes, uint32(hours), uint16(months)
	var dom, dow uint64
	if dom, c.domAny, err = parseCronField(fields[2], cronFields[2], c.domSpecial); err != nil {
		return nil, err
	}
	if dow, c.dowAny, err = parseCronField(fields[4], cronFields[4], c.dowSpecial); err != nil {
		return nil, err
	}
	c.domDays = uint32(dom)
	// 7 is Sunday too.
	c.dowDays = uint8(dow&0x7f) | uint8(dow>>7&1)
	return c, nil
}

func cronError(format string, args ...any) *ValidationError {
	return invalid("recurrence.cron", CodeInvalidValue, fmt.Sprintf(format, args...))
}

// parseCronField parses a comma-separated list of *, ?, values, ranges
// and steps (a, a-b, */s, a/s, a-b/s); special, when set, takes the items
// it knows (L, W, #) first. It returns the bits of the values and whether
// the field is just * or ?.
func parseCronField(text string, f cronField, special func(item string) (bool, error)) (uint64, bool, error) {
	if text == "*" || (text == "?" && special != nil) {
		return bits64(f.min, f.max, 1), true, nil
	}
	var set uint64
	for _, item := range strings.Split(text, ",") {
		if special != nil {
			taken, err := special(strings.ToUpper(item))
			if err != nil {
				return 0, false, err
			}
			if taken {
				continue
			}
		}
		lo, hi, step := f.min, f.max, 1
		rangePart, stepPart, hasStep := strings.Cut(item, "/")
		if hasStep {
			n, err := strconv.Atoi(stepPart)
			if err != nil || n < 1 {
				return 0, false, cronError("%s field: step %q in %q is not a positive number", f.name, stepPart, item)
			}
			step = n
		}
		switch {
		case rangePart == "*":
		case strings.Contains(rangePart, "-"):
			a, b, _ := strings.Cut(rangePart, "-")
			var err error
			if lo, err = f.value(a, item); err != nil {
				return 0, false, err
			}
			if hi, err = f.value(b, item); err != nil {
				return 0, false, err
			}
			if lo > hi {
				return 0, false, cronError("%s field: range %q runs backwards", f.name, item)
			}
		default:
			v, err := f.value(rangePart, item)
			if err != nil {
				return 0, false, err
			}
			lo = v
			if !hasStep {
				hi = v
			}
		}
		set |= bits64(lo, hi, step)
	}
	return set, false, nil
}

// value reads a number or a name of the field, in range.
func (f cronField) value(s, item string) (int, error) {
	for i, name := range f.names {
		if strings.EqualFold(s, name) {
			return f.min + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, cronError("%s field: %q in %q is not a number", f.name, s, item)
	}
	if v < f.min || v > f.max {
		return 0, cronError("%s field: %d is out of %d-%d", f.name, v, f.min, f.max)
	}
	return v, nil
}

func bits64(lo, hi, step int) uint64 {
	var set uint64
	for v := lo; v <= hi; v += step {
		set |= 1 << v
	}
	return set
}

// domSpecial takes L, L-n, nW and LW.
func (c *cronSpec) domSpecial(item string) (bool, error) {
	switch {
	case item == "L":
		c.domLast |= 1
	case item == "LW":
		c.domLastW = true
	case strings.HasPrefix(item, "L-"):
		n, err := strconv.Atoi(item[2:])
		if err != nil || n < 0 || n > 30 {
			return false, cronError("day-of-month field: %q: L-n takes n from 0 to 30", item)
		}
		c.domLast |= 1 << n
	case strings.HasSuffix(item, "W"):
		n, err := strconv.Atoi(item[:len(item)-1])
		if err != nil || n < 1 || n > 31 {
			return false, cronError("day-of-month field: %q: nW takes a day from 1 to 31", item)
		}
		c.domNearest |= 1 << n
	default:
		return false, nil
	}
	return true, nil
}

// dowSpecial takes wL and w#k.
func (c *cronSpec) dowSpecial(item string) (bool, error) {
	f := cronFields[4]
	switch {
	case strings.HasSuffix(item, "L") && len(item) > 1:
		w, err := f.value(item[:len(item)-1], item)
		if err != nil {
			return false, err
		}
		c.dowLast |= 1 << (w % 7)
	case strings.Contains(item, "#"):
		a, b, _ := strings.Cut(item, "#")
		w, err := f.value(a, item)
		if err != nil {
			return false, err
		}
		k, err := strconv.Atoi(b)
		if err != nil || k < 1 || k > 5 {
			return false, cronError("day-of-week field: %q: w#k takes k from 1 to 5", item)
		}
		c.dowNth[w%7] |= 1 << k
	default:
		return false, nil
	}
	return true, nil
}

// times returns the wall-clock seconds of the day the expression runs at,
// sorted.
func (c *cronSpec) times() []int32 {
	var out []int32
	for h := uint32(c.hours); h != 0; h &= h - 1 {
		for m := c.minutes; m != 0; m &= m - 1 {
			out = append(out, int32(bits.TrailingZeros32(h)*secondsPerHour+bits.TrailingZeros64(m)*secondsPerMinute))
		}
	}
	return out
}

// monthMask returns the days of month m of year y the expression selects,
// as bits 1..31. Day-of-month and day-of-week both restricted select the
// days either selects, as cron has it; one of them * or ? leaves the
// other alone.
func (c *cronSpec) monthMask(y int, m time.Month) uint32 {
	if c.months&(1<<m) == 0 {
		return 0
	}
	dim := daysIn(y, m)
	wd1 := (mondayIndex(civilDays(y, m, 1)) + 1) % 7 // weekday of the 1st, Sunday = 0
	weekday := func(d int) int { return (wd1 + d - 1) % 7 }
	valid := uint32(1)<<(dim+1) - 2

	dom := c.domDays & valid
	for last := c.domLast; last != 0; last &= last - 1 {
		if d := dim - bits.TrailingZeros32(last); d >= 1 {
			dom |= 1 << d
		}
	}
	for near := c.domNearest; near != 0; near &= near - 1 {
		if d := bits.TrailingZeros32(near); d <= dim {
			dom |= 1 << nearestWeekday(d, dim, weekday)
		}
	}
	if c.domLastW {
		dom |= 1 << nearestWeekday(dim, dim, weekday)
	}

	var dow uint32
	for d := 1; d <= dim; d++ {
		w := weekday(d)
		switch {
		case c.dowDays&(1<<w) != 0,
			c.dowLast&(1<<w) != 0 && d+7 > dim,
			c.dowNth[w]&(1<<((d-1)/7+1)) != 0:
			dow |= 1 << d
		}
	}
	switch {
	case c.domAny && c.dowAny:
		return valid
	case c.domAny:
		return dow
	case c.dowAny:
		return dom
	default:
		return dom | dow
	}
}

// nearestWeekday is the weekday (Monday to Friday) nearest to day d of a
// month of dim days, within the month: a Saturday moves to the Friday
// before, a Sunday to the Monday after, unless that leaves the month.
func nearestWeekday(d, dim int, weekday func(int) int) int {
	switch weekday(d) {
	case 6: // Saturday
		if d > 1 {
			return d - 1
		}
		return d + 2
	case 0: // Sunday
		if d < dim {
			return d + 1
		}
		return d - 2
	}
	return d
}

// newCronGenerator returns the generator of cron expression expr (valid)
// read in zone z, from anchor a on: the expression's times of the day on
// its days, at whole minutes (or at its seconds), placed across offset
// changes as a daily schedule's are.
func newCronGenerator(expr string, z zone, a time.Time) (generator, error) {
	c, err := parseCron(expr)
	if err != nil {
		return generator{}, err
	}
	g := generator{freq: cronFrequency, interval: 1, zone: z, aSec: a.Unix(), times: c.times(), secs: c.seconds}
	if a.Nanosecond() != 0 {
		// Runs are at whole seconds: none at A's own second.
		g.aSec++
	}
	aWall := z.wall(g.aSec)
	g.aDay = floorDiv(aWall, secondsPerDay)
	g.days = daySelector{freq: cronFrequency, interval: 1, aDay: g.aDay, cron: c}
	firstDay, _ := g.days.next(g.aDay)
	g.anchorRuns = firstDay == g.aDay && g.hasTime(aWall-g.aDay*secondsPerDay)
	return g, nil
}

// nextCronDay returns the first day at or after d the expression selects,
// and false when none is left within a whole calendar cycle.
func (s *daySelector) nextCronDay(d int64) (int64, bool) {
	y, m, dd := civilDate(d)
	i := monthIndex(y, m)
	// The days of a month repeat every 4800 months (400 years).
	for range 12*cycleYears + 1 {
		y, m := monthOf(i)
		if mask := s.cron.monthMask(y, m) >> dd << dd; mask != 0 {
			return civilDays(y, m, bits.TrailingZeros32(mask)), true
		}
		i, dd = i+1, 1
	}
	return 0, false
}

// cronPeriods caches CronPeriod by expression.
var cronPeriods sync.Map

// CronPeriod returns the shortest time between two runs of the cron
// expression expr in UTC over its first 500 runs of the year 2001 on, and
// false when expr does not parse or never runs. It is the cron's period,
// as a frequency and interval have one.
func CronPeriod(expr string) (time.Duration, bool) {
	if v, ok := cronPeriods.Load(expr); ok {
		d := v.(time.Duration)
		return d, d > 0
	}
	var d time.Duration
	from := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if r, err := Compile(Definition{Recurrence: &Recurrence{Cron: expr}}, from); err == nil {
		d, _ = r.ShortestGap(from, 500)
	}
	cronPeriods.Store(expr, d)
	return d, d > 0
}
