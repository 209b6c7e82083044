package recurrence

import (
	"slices"
	"time"
)

// compile builds the Rule of a validated definition.
func compile(def Definition, created time.Time) (*Rule, error) {
	r := &Rule{created: created, anchor: created}
	if def.StartTime != nil {
		r.anchor = def.StartTime.t
	}
	rec := def.Recurrence
	if rec == nil {
		r.once = true
		r.zone = newZone(time.UTC)
		return r, nil
	}
	// A cron, an rrule or a list of rules runs at its times only: without
	// startTime, not at C too.
	r.immediate = def.StartTime == nil && rec.Cron == "" && !rec.hasRules()
	loc, err := rec.location()
	if err != nil {
		return nil, err
	}
	r.zone = newZone(loc)
	if p := rec.DST; p != nil {
		r.zone.gap, r.zone.repeat = p.Gap, p.Repeat
	}
	if rec.Count != nil {
		r.count = *rec.Count
	}
	if rec.EndTime != nil {
		r.end = rec.EndTime.In(loc)
	}
	r.excluded = excludedDays(rec.Exclusions)
	switch {
	case rec.hasRules():
		r.gen, r.anchor, err = compileRules(rec, r.zone, r.anchor)
	case rec.Cron != "":
		var g generator
		g, err = newCronGenerator(rec.Cron, r.zone, r.anchor)
		r.gen = &g
	default:
		g := newGenerator(rec, r.zone, r.anchor)
		r.gen = &g
	}
	return r, err
}

func newGenerator(rec *Recurrence, z zone, a time.Time) generator {
	g := generator{
		freq:     rec.Frequency,
		interval: 1,
		zone:     z,
		aSec:     a.Unix(),
		nanos:    a.Nanosecond(),
	}
	if rec.Interval != nil {
		g.interval = int64(*rec.Interval)
	}
	sched := rec.Schedule
	if sched == nil {
		sched = &Schedule{}
	}
	aWall := z.wall(g.aSec)
	g.aDay = floorDiv(aWall, secondsPerDay)
	aSecOfDay := aWall - g.aDay*secondsPerDay
	aHour, aMinute, aSecond := aSecOfDay/secondsPerHour, aSecOfDay/secondsPerMinute%60, aSecOfDay%60

	switch g.freq {
	case Second:
		// Steps of seconds reach every minute of the day: how far the next
		// allowed minute is, in minutes.
		g.minuteDist = minuteDistances(sched.Hours, sched.Minutes, 1)
	case Minute:
		g.minuteDist = minuteDistances(sched.Hours, sched.Minutes, g.interval)
	case Hour:
		g.hourStart = g.aSec - aMinute*secondsPerMinute - aSecond
		for _, m := range valuesOr(sched.Minutes, int(aMinute)) {
			g.hourOffsets = append(g.hourOffsets, int32(m*secondsPerMinute+int(aSecond)))
		}
		for _, h := range sched.Hours {
			g.hourFilter |= 1 << h
		}
	default:
		hours := valuesOr(sched.Hours, int(aHour))
		if len(sched.Hours) == 0 && len(sched.Minutes) > 0 {
			hours = allHours
		}
		for _, h := range hours {
			for _, m := range valuesOr(sched.Minutes, int(aMinute)) {
				g.times = append(g.times, int32(h*secondsPerHour+m*secondsPerMinute+int(aSecond)))
			}
		}
		slices.Sort(g.times)
		g.times = slices.Compact(g.times)
		g.days = newDaySelector(g.freq, g.interval, g.aDay, sched)
		firstDay, _ := g.days.next(g.aDay)
		g.anchorRuns = firstDay == g.aDay && slices.Contains(g.times, int32(aSecOfDay))
	}
	return g
}

var allHours = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}

// valuesOr returns the sorted distinct values, or def alone when empty.
func valuesOr(values []int, def int) []int {
	if len(values) == 0 {
		return []int{def}
	}
	out := slices.Clone(values)
	slices.Sort(out)
	return slices.Compact(out)
}

func newDaySelector(f Frequency, interval, aDay int64, sched *Schedule) daySelector {
	y, m, d := civilDate(aDay)
	s := daySelector{
		freq: f, interval: interval, aDay: aDay,
		weekStart: aDay - int64(mondayIndex(aDay)),
		aMonth:    monthIndex(y, m),
		aYear:     y, aMonthY: m, aDayM: d,
	}
	switch f {
	case Week:
		if len(sched.WeekDays) == 0 {
			s.weekMask = 1 << mondayIndex(aDay)
		}
		for _, wd := range sched.WeekDays {
			w, _ := wd.Weekday()
			s.weekMask |= 1 << ((int(w) + 6) % 7)
		}
	case Month:
		if len(sched.MonthDays) > 0 || len(sched.MonthlyOccurrences) > 0 {
			s.aDayM = 0
		}
		for _, md := range sched.MonthDays {
			if md > 0 {
				s.monthDays |= 1 << md
			} else {
				s.lastDays |= 1 << -md
			}
		}
		for _, o := range sched.MonthlyOccurrences {
			w, _ := o.Day.Weekday()
			switch {
			case o.Occurrence == nil:
				s.everyWeek |= 1 << w
			case *o.Occurrence > 0:
				s.occFirst[w] |= 1 << *o.Occurrence
			default:
				s.occLast[w] |= 1 << -*o.Occurrence
			}
		}
	}
	return s
}

// minuteDistances returns, for the Minute frequency's hour and minute
// filters, the table of generator.minuteDist; nil when nothing is filtered.
// Stepping by interval minutes walks gcd(interval, 1440) cycles over the
// minutes of the day; going round each cycle twice backwards gives every
// position its distance to the next allowed one.
func minuteDistances(hours, minutes []int, interval int64) []int16 {
	if len(hours) == 0 && len(minutes) == 0 {
		return nil
	}
	const day = 24 * 60
	var hourOK [24]bool
	var minuteOK [60]bool
	for h := range hourOK {
		hourOK[h] = len(hours) == 0 || slices.Contains(hours, h)
	}
	for m := range minuteOK {
		minuteOK[m] = len(minutes) == 0 || slices.Contains(minutes, m)
	}
	var allowed [day]bool
	for i := range allowed {
		allowed[i] = hourOK[i/60] && minuteOK[i%60]
	}
	dist := make([]int16, day)
	step := int(interval % day)
	cycles := int(gcd(int64(step), day))
	length := day / cycles
	for c := range cycles {
		run := -1
		for i := 2*length - 1; i >= 0; i-- {
			pos := (c + i*step) % day
			switch {
			case allowed[pos]:
				run = 0
			case run >= 0:
				run++
			}
			if i < length {
				dist[pos] = int16(run)
			}
		}
	}
	return dist
}
