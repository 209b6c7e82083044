package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/recurhq/recur/api"
	"github.com/recurhq/recur/jobs"
)

// backfillFlags pace backfills (api.BackfillLimits), the API's to set:
// the pace travels with each backfill to the job's workflow, and the
// budget is counted where backfills are asked for.
type backfillFlags struct {
	pace  time.Duration
	rate  float64
	burst int
}

// The default budget of a subscription: a whole backfill at once, then
// one occurrence a second, as fast as one job's backfill runs at the
// default pace, so that a subscription's backfills run on average no
// faster than one job's however many of its jobs it backfills.
const (
	defaultBackfillRate  = 1
	defaultBackfillBurst = jobs.MaxBackfill
)

// maxBackfillPace bounds --backfill-pace: a backfill of 1000 an hour
// apart already runs for six weeks.
const maxBackfillPace = time.Hour

func (b *backfillFlags) register(fs *flag.FlagSet, e *envDefaults) {
	fs.DurationVar(&b.pace, "backfill-pace", e.duration("RECUR_BACKFILL_PACE", jobs.DefaultBackfillPace),
		"least time between the starts of two of a job's backfill occurrences, at most 1h (RECUR_BACKFILL_PACE)")
	fs.Float64Var(&b.rate, "backfill-rate", e.float("RECUR_BACKFILL_RATE", defaultBackfillRate),
		"backfill occurrences per second a subscription may queue once its --backfill-burst is used; past it a backfill answers 429; 0 for no limit (RECUR_BACKFILL_RATE)")
	fs.IntVar(&b.burst, "backfill-burst", e.int("RECUR_BACKFILL_BURST", defaultBackfillBurst),
		"backfill occurrences a subscription may queue at once (RECUR_BACKFILL_BURST)")
}

// limits checks the flags and returns the API's backfill limits.
func (b *backfillFlags) limits() (api.BackfillLimits, error) {
	switch {
	case b.pace <= 0 || b.pace > maxBackfillPace:
		return api.BackfillLimits{}, fmt.Errorf("--backfill-pace must be more than 0s and at most %s, not %s", maxBackfillPace, b.pace)
	case b.rate < 0:
		return api.BackfillLimits{}, fmt.Errorf("--backfill-rate must be 0 (no limit) or more, not %g", b.rate)
	case b.burst < 1:
		return api.BackfillLimits{}, fmt.Errorf("--backfill-burst must be at least 1, not %d", b.burst)
	}
	return api.BackfillLimits{Pace: b.pace, PerSubscription: api.RateLimit{PerSecond: b.rate, Burst: b.burst}}, nil
}
