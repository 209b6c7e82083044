package lifecycle_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	lt "github.com/recurhq/recur/lifecycle/lifecycletest"
)

// The model test drives the machine alone through sequences of events
// decoded from bytes (a fuzz input): writes that enable and disable the
// job, its collection disabled and enabled, runs now, backfills, runs that
// succeed or fail (with disableAfterFailures and maxConsecutiveFaults),
// time passing and a DELETE. After each step it checks what must hold
// whatever the events and their order (lifecycletest.Simulate and
// Outcome.Check):
//
//   - no occurrence of the schedule or of a backfill starts while the job
//     or its collection is disabled, or the job is deleted, completed or
//     faulted (a run now does: it is asked for);
//   - none starts while the job's limit of runs are in flight;
//   - the machine never wakes in the past, and an enabled job always has
//     a next occurrence until its count is used up;
//   - every occurrence of the schedule that comes while the job waits for
//     it is run, buffered or postponed, once: none lost, none twice;
//   - the status counts what ran, failed and was postponed, as the
//     history rows say;
//   - the same sequence gives the same outcome.
//
// go test runs the kept sequences (seeds) and the fuzz corpus; .ci/run
// fuzzes for a fixed budget, `task fuzz` as long as it is given. The job
// workflow's model test (workflows.FuzzJobModel) runs the same sequences
// through the real workflow and checks it ends where the machine ends.

// seeds are sequences worth keeping: each runs in every go test.
var seeds = []struct {
	name   string
	config lt.Config
	events []lt.Event
}{
	// A BufferOne job disabled while its next occurrence waits for a long
	// run: on d38070e the buffered occurrence started once the run ended.
	{"disabled while buffered", lt.Config{Overlap: jobs.OverlapBufferOne, Seed: 0}, // 12:00 runs 160 s
		[]lt.Event{ev(lt.Disable, 65*time.Second), ev(lt.Enable, 149*time.Second)}},
	{"collection disabled while buffered", lt.Config{Overlap: jobs.OverlapBufferOne, Seed: 0},
		[]lt.Event{ev(lt.CollectionDisabled, 65*time.Second), ev(lt.CollectionEnabled, 149*time.Second)}},
	{"backfill then disable", lt.Config{Overlap: jobs.OverlapSkip, Seed: 1},
		[]lt.Event{ev(lt.Backfill, 7*time.Second), ev(lt.Disable, 9*time.Second), ev(lt.Enable, 61*time.Second)}},
	{"runs now beside a limit", lt.Config{Overlap: jobs.OverlapAllowAll, Limit: 2, Count: 5, Seed: 3},
		[]lt.Event{ev(lt.RunNow, 7*time.Second), ev(lt.RunNow, 7*time.Second), ev(lt.Backfill, 11*time.Second), ev(lt.CollectionDisabled, 75*time.Second), ev(lt.RunNow, 7*time.Second), ev(lt.CollectionEnabled, 99*time.Second)}},
	{"a PUT while the collection is disabled", lt.Config{Overlap: jobs.OverlapBufferOne, Count: 4, Seed: 4},
		[]lt.Event{ev(lt.CollectionDisabled, 31*time.Second), ev(lt.Enable, 45*time.Second), ev(lt.Backfill, 7*time.Second), ev(lt.CollectionEnabled, 91*time.Second)}},
	{"deleted amid a backfill and a long run", lt.Config{Overlap: jobs.OverlapAllowAll, Limit: 2, Seed: 0},
		[]lt.Event{ev(lt.Backfill, 65*time.Second), ev(lt.RunNow, 7*time.Second), ev(lt.Delete, 9*time.Second)}},
	{"disabled by its failures, enabled again", lt.Config{Overlap: jobs.OverlapBufferOne, Seed: 2, Failing: 2, DisableAfter: 2},
		[]lt.Event{ev(lt.Backfill, 95*time.Second), ev(lt.Enable, 149*time.Second), ev(lt.RunNow, 31*time.Second)}},
	{"faulted amid a backfill", lt.Config{Overlap: jobs.OverlapAllowAll, Seed: 5, Failing: 1, MaxFaults: 1},
		[]lt.Event{ev(lt.Backfill, 33*time.Second), ev(lt.CollectionDisabled, 121*time.Second), ev(lt.CollectionEnabled, 41*time.Second)}},
}

func ev(k lt.Kind, after time.Duration) lt.Event { return lt.Event{Kind: k, After: after} }

// Seeds returns the kept sequences' encodings, for FuzzJobModel too.
func encodedSeeds() [][]byte {
	var out [][]byte
	for _, s := range seeds {
		out = append(out, lt.Encode(s.config, s.events...))
	}
	return out
}

// TestModelSeeds runs the kept sequences, each encoded and decoded as a
// fuzz input is, and checks that the first one holds the occurrence the
// invariants are there to catch: 12:01, buffered behind 12:00's run when
// the job is disabled, does not start.
func TestModelSeeds(t *testing.T) {
	for _, s := range seeds {
		t.Run(s.name, func(t *testing.T) {
			c, events := lt.Decode(lt.Encode(s.config, s.events...))
			require.Equal(t, s.config, c, "the seed encodes as Decode reads it")
			require.Equal(t, s.events, events)
			out, err := lt.Simulate(c, events)
			require.NoError(t, err)
			require.NoError(t, out.Check())
		})
	}
	out, _ := lt.Simulate(seeds[0].config, seeds[0].events)
	var ids []string
	for _, s := range out.Starts {
		ids = append(ids, s.ID)
	}
	require.Contains(t, ids, "job:s/rg/c/j@2026-06-01T12:00:00Z")
	require.NotContains(t, ids, "job:s/rg/c/j@2026-06-01T12:01:00Z", "the buffered occurrence is the one a disabled job would start")
}

// FuzzLifecycle runs generated sequences through the machine and checks
// the model's invariants, and that the same sequence gives the same
// outcome twice.
func FuzzLifecycle(f *testing.F) {
	for _, s := range encodedSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, events := lt.Decode(data)
		first, err := lt.Simulate(c, events)
		if err == nil {
			err = first.Check()
		}
		if err != nil {
			t.Fatalf("%v\nconfig %+v, events %v", err, c, events)
		}
		again, _ := lt.Simulate(c, events)
		if !reflect.DeepEqual(first, again) {
			t.Fatalf("the same sequence ran differently:\n%+v\n%+v", first, again)
		}
	})
}
