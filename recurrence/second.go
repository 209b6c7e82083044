package recurrence

import "math"

// nextSecond: the instants A + k*interval seconds whose wall-clock hour
// and minute pass the filters. A step lands in a minute the filters
// refuse: the walk jumps to the start of the next allowed minute, where a
// step of at most a minute always lands, a longer one may not.
func (g *generator) nextSecond(minSec int64) (int64, bool) {
	step := g.interval
	k := ceilDiv(minSec-g.aSec, step)
	if g.minuteDist == nil {
		return g.aSec + k*step, true
	}
	// While the offset holds, the minutes of the day the steps land in
	// repeat every lcm(step, a day) seconds: a walk that long without a
	// match proves there is none before the offset changes.
	cycle := step / gcd(step, secondsPerDay) * secondsPerDay
	for range maxSpans {
		s := g.aSec + k*step
		if s > maxUnix {
			return 0, false
		}
		sp := g.zone.span(s)
		for start := s; s < sp.end && s-start <= cycle; s = g.aSec + k*step {
			minute := floorDiv(s+sp.off, secondsPerMinute)
			j := g.minuteDist[floorMod(minute, 24*60)]
			switch {
			case j < 0:
				return 0, false
			case j == 0:
				return s, true
			}
			// Past the span's end the new offset decides which minute a
			// step is in.
			next := min((minute+int64(j))*secondsPerMinute-sp.off, sp.end)
			if next > maxUnix {
				return 0, false
			}
			k = ceilDiv(next-g.aSec, step)
		}
		if s < sp.end {
			if sp.end == math.MaxInt64 {
				return 0, false
			}
			k = ceilDiv(sp.end-g.aSec, step)
		}
	}
	return 0, false
}
