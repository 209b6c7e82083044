package store

import (
	"context"
	"time"

	"github.com/recurhq/recur/jobs"
)

// skewTolerance is how far before its deadline, by this process's clock,
// a write refused as late must be for the refusal to say Temporal's clock
// is ahead: more than a refusal's way back takes.
const skewTolerance = time.Second

// skewWarnEvery spaces the warnings of a clock that stays ahead: every
// write is refused then, and one line a minute says why.
const skewWarnEvery = time.Minute

// noteSkew warns when err is a workflow's refusal of a write taken past
// its deadline (jobs.CodeNotTaken) that this process's clock says is
// still to come. The workflow compares the deadline, set by this
// process's clock, with its task's time, Temporal's: that clock is ahead
// by at least the difference, and beyond jobs.TakeMargin every write is
// refused, answered 503 with nothing in the server's logs to say why.
func (s *Store) noteSkew(ctx context.Context, err error) {
	e, ok := jobs.FromApplicationError(err)
	if !ok || e.Code != jobs.CodeNotTaken {
		return
	}
	now := time.Now()
	ahead := jobs.DeadlineOf(ctx).NotAfter.Sub(now)
	if ahead <= skewTolerance {
		return
	}
	last := s.skewWarned.Load()
	if last != 0 && now.Sub(time.Unix(0, last)) < skewWarnEvery {
		return
	}
	if !s.skewWarned.CompareAndSwap(last, now.UnixNano()) {
		return // another write warns
	}
	s.log.Warn("a write was refused as taken past its deadline that this process's clock says is still to come: the Temporal server's clock is ahead of this one's; by more than takeMargin, every write is refused (503). Check both machines' clocks (NTP)",
		"aheadAtLeast", ahead.Truncate(time.Millisecond), "takeMargin", jobs.TakeMargin)
}
