package recurrence

import "time"

// Calendar arithmetic on day numbers (days since 1970-01-01 in the
// proleptic Gregorian calendar) and on wall-clock seconds (seconds since
// 1970-01-01T00:00 read on a wall clock, as if the zone were UTC). Working
// in integers keeps Next free of allocations and of time.Date's
// normalisation.

const (
	secondsPerMinute = 60
	secondsPerHour   = 3600
	secondsPerDay    = 86400
	// cycleYears is the period of the Gregorian calendar: 400 years are
	// exactly 146097 days, 20871 weeks and 4800 months.
	cycleYears = 400
)

// civilDays returns the day number of y-m-d (Howard Hinnant's days_from_civil).
func civilDays(y int, m time.Month, d int) int64 {
	yy := int64(y)
	if m <= 2 {
		yy--
	}
	era := floorDiv(yy, 400)
	yoe := yy - era*400
	mp := (int64(m) + 9) % 12
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilDate is the inverse of civilDays.
func civilDate(days int64) (int, time.Month, int) {
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := (mp+2)%12 + 1
	y := yoe + era*400
	if m <= 2 {
		y++
	}
	return int(y), time.Month(m), int(d)
}

// mondayIndex returns the weekday of a day number counted from Monday = 0,
// the first day of the Monday-to-Sunday weeks of docs/recurrence.md.
func mondayIndex(days int64) int { return int(floorMod(days+3, 7)) }

// isLeap reports whether y is a Gregorian leap year.
func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// daysIn returns the number of days of month m in year y.
func daysIn(y int, m time.Month) int {
	switch m {
	case time.February:
		if isLeap(y) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

// monthIndex numbers months continuously: y*12 + (m-1).
func monthIndex(y int, m time.Month) int64 { return int64(y)*12 + int64(m) - 1 }

// monthOf is the inverse of monthIndex.
func monthOf(i int64) (int, time.Month) {
	return int(floorDiv(i, 12)), time.Month(floorMod(i, 12) + 1)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// ceilDiv returns the smallest q with q*b >= a, for b > 0.
func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
