package recurrence

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestZoneSpansAlwaysMoveForward walks the offset stretches of DST zones
// far past their last listed transitions, where time.Time.ZoneBounds
// reports, near year ends, periods that end before the instant asked
// about. Every span must end after its instant, hold its offset up to its
// end, and the walk must reach every real transition.
func TestZoneSpansAlwaysMoveForward(t *testing.T) {
	for _, name := range []string{"Australia/Sydney", "America/Los_Angeles", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago", "Europe/Dublin"} {
		t.Run(name, func(t *testing.T) {
			loc, err := time.LoadLocation(name)
			require.NoError(t, err)
			z := newZone(loc)
			x := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
			stop := time.Date(2110, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
			changes := 0
			for x < stop {
				s := z.span(x)
				require.Greater(t, s.end, x, "span at %s", time.Unix(x, 0).UTC())
				require.NotEqual(t, int64(math.MaxInt64), s.end)
				require.Equal(t, s.off, z.offset(s.end-1), "offset holds to the end of the span at %s", time.Unix(x, 0).UTC())
				require.Equal(t, s.off, z.offset(x+(s.end-x)/2))
				if z.offset(s.end) != s.off {
					changes++
				}
				x = s.end
			}
			require.Greater(t, changes, 2*70, "two real transitions a year")
		})
	}
}
