package recurrence

import (
	"math/bits"
	"time"
)

// daySelector picks the days of the calendar frequencies: every interval-th
// day, the chosen weekdays of every interval-th week, the chosen days of
// every interval-th month, or A's date of every interval-th year.
type daySelector struct {
	freq     Frequency
	interval int64
	aDay     int64 // A's day number

	// Week: the Monday of A's week, and the chosen weekdays (bit 0 = Monday).
	weekStart int64
	weekMask  uint8

	// Month: A's month index; days 1..31 (bit d), days from the end
	// (bit n for -n); weekdays (bit 0 = Sunday) chosen in every week, and
	// per weekday the chosen occurrences from the start and from the end
	// (bit o for the o-th).
	aMonth    int64
	monthDays uint32
	lastDays  uint32
	everyWeek uint8
	occFirst  [7]uint8
	occLast   [7]uint8

	// Year (and Month without a day selection): A's month and day.
	aYear   int
	aMonthY time.Month
	aDayM   int

	// cron: the expression's days (cronFrequency).
	cron *cronSpec
}

// next returns the first selected day at or after d (d >= aDay), and false
// when none is left within a whole calendar cycle.
func (s *daySelector) next(d int64) (int64, bool) {
	switch s.freq {
	case Day:
		return s.aDay + ceilDiv(d-s.aDay, s.interval)*s.interval, true
	case Week:
		return s.nextInWeeks(d), true
	case Month:
		return s.nextInMonths(d)
	case cronFrequency:
		return s.nextCronDay(d)
	default:
		return s.nextInYears(d)
	}
}

func (s *daySelector) nextInWeeks(d int64) int64 {
	w := floorDiv(d-s.weekStart, 7)
	k := ceilDiv(w, s.interval)
	idx := 0
	if k*s.interval == w {
		idx = int(d - (s.weekStart + 7*w))
	}
	for {
		start := s.weekStart + 7*k*s.interval
		if m := s.weekMask >> idx << idx; m != 0 {
			return start + int64(bits.TrailingZeros8(m))
		}
		k, idx = k+1, 0
	}
}

func (s *daySelector) nextInMonths(d int64) (int64, bool) {
	y, m, dd := civilDate(d)
	i := monthIndex(y, m)
	if k := ceilDiv(i-s.aMonth, s.interval); s.aMonth+k*s.interval != i {
		i, dd = s.aMonth+k*s.interval, 1
	}
	// The days of a month repeat every 4800 months (400 years).
	limit := 12*cycleYears/gcd(s.interval, 12*cycleYears) + 1
	for range limit {
		y, m := monthOf(i)
		if mask := s.monthMask(y, m) >> dd << dd; mask != 0 {
			return civilDays(y, m, bits.TrailingZeros32(mask)), true
		}
		i, dd = i+s.interval, 1
	}
	return 0, false
}

// monthMask returns the chosen days of a month as bits 1..31.
func (s *daySelector) monthMask(y int, m time.Month) uint32 {
	dim := daysIn(y, m)
	valid := uint32(1)<<(dim+1) - 2
	mask := s.monthDays & valid
	for last := s.lastDays; last != 0; last &= last - 1 {
		n := bits.TrailingZeros32(last) // -n: the n-th day from the end
		if n <= dim {
			mask |= 1 << (dim + 1 - n)
		}
	}
	if s.everyWeek != 0 || s.hasOccurrences() {
		first := civilDays(y, m, 1)
		wd1 := (mondayIndex(first) + 1) % 7 // Sunday = 0
		for w := range 7 {
			mask |= s.weekdayDays(w, wd1, dim)
		}
	}
	if s.aDayM != 0 && s.aDayM <= dim {
		mask |= 1 << s.aDayM
	}
	return mask
}

// weekdayDays returns the chosen days that fall on weekday w (Sunday = 0)
// in a month of dim days whose first day is weekday wd1.
func (s *daySelector) weekdayDays(w, wd1, dim int) uint32 {
	every := s.everyWeek&(1<<w) != 0
	if !every && s.occFirst[w] == 0 && s.occLast[w] == 0 {
		return 0
	}
	first := 1 + (w-wd1+7)%7
	n := (dim-first)/7 + 1 // how many such weekdays the month has
	var mask uint32
	for o := 1; o <= n; o++ {
		if every || s.occFirst[w]&(1<<o) != 0 || s.occLast[w]&(1<<(n-o+1)) != 0 {
			mask |= 1 << (first + 7*(o-1))
		}
	}
	return mask
}

func (s *daySelector) hasOccurrences() bool {
	for w := range 7 {
		if s.occFirst[w]|s.occLast[w] != 0 {
			return true
		}
	}
	return false
}

func (s *daySelector) nextInYears(d int64) (int64, bool) {
	y, _, _ := civilDate(d)
	k := max(0, ceilDiv(int64(y-s.aYear), s.interval))
	limit := cycleYears/gcd(s.interval, cycleYears) + 2
	for range limit {
		yy := s.aYear + int(k*s.interval)
		if s.aDayM <= daysIn(yy, s.aMonthY) {
			if day := civilDays(yy, s.aMonthY, s.aDayM); day >= d {
				return day, true
			}
		}
		k++
	}
	return 0, false
}
