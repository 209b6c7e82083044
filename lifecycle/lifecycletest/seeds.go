package lifecycletest

import (
	"time"

	"github.com/recurhq/recur/jobs"
)

// Seed is a sequence worth keeping: each runs in every go test, through
// the machine and through the workflow.
type Seed struct {
	Name   string
	Config Config
	Events []Event
}

// Seeds are the kept sequences.
var Seeds = []Seed{
	// A BufferOne job disabled while its next occurrence waits for a long
	// run: on d38070e the buffered occurrence started once the run ended.
	{"disabled while buffered", Config{Overlap: jobs.OverlapBufferOne, Seed: 0}, // 12:00 runs 160 s
		[]Event{ev(Disable, 65*time.Second), ev(Enable, 149*time.Second)}},
	{"collection disabled while buffered", Config{Overlap: jobs.OverlapBufferOne, Seed: 0},
		[]Event{ev(CollectionDisabled, 65*time.Second), ev(CollectionEnabled, 149*time.Second)}},
	{"backfill then disable", Config{Overlap: jobs.OverlapSkip, Seed: 1},
		[]Event{ev(Backfill, 7*time.Second), ev(Disable, 9*time.Second), ev(Enable, 61*time.Second)}},
	{"runs now beside a limit", Config{Overlap: jobs.OverlapAllowAll, Limit: 2, Count: 5, Seed: 3},
		[]Event{ev(RunNow, 7*time.Second), ev(RunNow, 7*time.Second), ev(Backfill, 11*time.Second), ev(CollectionDisabled, 75*time.Second), ev(RunNow, 7*time.Second), ev(CollectionEnabled, 99*time.Second)}},
	{"a PUT while the collection is disabled", Config{Overlap: jobs.OverlapBufferOne, Count: 4, Seed: 4},
		[]Event{ev(CollectionDisabled, 31*time.Second), ev(Enable, 45*time.Second), ev(Backfill, 7*time.Second), ev(CollectionEnabled, 91*time.Second)}},
	{"deleted amid a backfill and a long run", Config{Overlap: jobs.OverlapAllowAll, Limit: 2, Seed: 0},
		[]Event{ev(Backfill, 65*time.Second), ev(RunNow, 7*time.Second), ev(Delete, 9*time.Second)}},
	{"disabled by its failures, enabled again", Config{Overlap: jobs.OverlapBufferOne, Seed: 2, Failing: 2, DisableAfter: 2},
		[]Event{ev(Backfill, 95*time.Second), ev(Enable, 149*time.Second), ev(RunNow, 31*time.Second)}},
	{"faulted amid a backfill", Config{Overlap: jobs.OverlapAllowAll, Seed: 5, Failing: 1, MaxFaults: 1},
		[]Event{ev(Backfill, 33*time.Second), ev(CollectionDisabled, 121*time.Second), ev(CollectionEnabled, 41*time.Second)}},
	// Failures run again: queued behind the run in flight, and refused
	// while the job is disabled.
	{"a failure run again after a run", Config{Overlap: jobs.OverlapSkip, Seed: 2, Failing: 2},
		[]Event{ev(Rerun, 75*time.Second), ev(Rerun, 13*time.Second), ev(Disable, 31*time.Second), ev(Rerun, 7*time.Second), ev(Enable, 61*time.Second)}},
	// Failures run again beside the schedule's runs, within the limit,
	// and while the collection is disabled (refused).
	{"failures run again", Config{Overlap: jobs.OverlapAllowAll, Limit: 2, Seed: 2, Failing: 2},
		[]Event{ev(Rerun, 95*time.Second), ev(Rerun, 7*time.Second), ev(Disable, 31*time.Second), ev(Rerun, 7*time.Second),
			ev(Enable, 61*time.Second), ev(Rerun, 7*time.Second), ev(CollectionDisabled, 7*time.Second), ev(Rerun, 9*time.Second), ev(CollectionEnabled, 41*time.Second)}},
	// A faulted job runs its failure again: one re-run at once, the next
	// queued behind it and held while the collection is disabled.
	{"a faulted job's failure run again", Config{Overlap: jobs.OverlapSkip, Seed: 2, Failing: 2, MaxFaults: 1},
		[]Event{ev(Rerun, 149*time.Second), ev(Rerun, 7*time.Second), ev(CollectionDisabled, 7*time.Second), ev(Rerun, 7*time.Second), ev(CollectionEnabled, 149*time.Second)}},
}

func ev(k Kind, after time.Duration) Event { return Event{Kind: k, After: after} }

// EncodedSeeds returns the kept sequences' encodings, a fuzz test's
// corpus.
func EncodedSeeds() [][]byte {
	var out [][]byte
	for _, s := range Seeds {
		out = append(out, Encode(s.Config, s.Events...))
	}
	return out
}
