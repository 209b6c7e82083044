package lifecycle_test

import (
	"reflect"
	"slices"
	"strings"
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
//     faulted (a run now does: it is asked for; a re-run does once the job
//     is completed or faulted, but not while its collection is disabled);
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

// TestModelSeeds runs the kept sequences, each encoded and decoded as a
// fuzz input is, and checks that the first one holds the occurrence the
// invariants are there to catch: 12:01, buffered behind 12:00's run when
// the job is disabled, does not start.
func TestModelSeeds(t *testing.T) {
	for _, s := range lt.Seeds {
		t.Run(s.Name, func(t *testing.T) {
			c, events := lt.Decode(lt.Encode(s.Config, s.Events...))
			require.Equal(t, s.Config, c, "the seed encodes as Decode reads it")
			require.Equal(t, s.Events, events)
			out, err := lt.Simulate(c, events)
			require.NoError(t, err)
			require.NoError(t, out.Check())
		})
	}
	out, _ := lt.Simulate(lt.Seeds[0].Config, lt.Seeds[0].Events)
	var ids []string
	for _, s := range out.Starts {
		ids = append(ids, s.ID)
	}
	require.Contains(t, ids, "job:s/rg/c/j@2026-06-01T12:00:00Z")
	require.NotContains(t, ids, "job:s/rg/c/j@2026-06-01T12:01:00Z", "the buffered occurrence is the one a disabled job would start")
}

// TestAFaultedJobRunsItsFailureAgain: a job faulted by its one failure
// runs it again when asked, at once, and a re-run queued behind that one
// waits while the collection is disabled (Outcome.Check fails a start
// then) and starts once it is enabled; the job stays faulted.
func TestAFaultedJobRunsItsFailureAgain(t *testing.T) {
	i := slices.IndexFunc(lt.Seeds, func(s lt.Seed) bool { return s.Name == "a faulted job's failure run again" })
	require.GreaterOrEqual(t, i, 0)
	s := lt.Seeds[i]
	out, err := lt.Simulate(s.Config, s.Events)
	require.NoError(t, err)
	require.NoError(t, out.Check())
	require.Equal(t, jobs.Faulted, out.State)

	var reruns []lt.RunStart
	for _, r := range out.Starts {
		if strings.Contains(r.ID, "/rerun-") {
			reruns = append(reruns, r)
		}
	}
	require.Len(t, reruns, 2, "both re-runs ran: %+v", out.Starts)
	require.True(t, out.Starts[0].End.Before(reruns[0].At), "the job faulted before its first re-run: %+v", out.Starts)
	// The events after the first re-run's ask: a second ask, the disable,
	// a third ask (refused) and, 149 s later, the enable.
	enabled := reruns[0].At.Add((7 + 7 + 7 + 149) * time.Second)
	require.True(t, reruns[0].End.Before(enabled), "the first re-run ended while the collection was disabled: %+v", reruns)
	require.Equal(t, enabled, reruns[1].At, "the second starts as the collection is enabled")
}

// FuzzLifecycle runs generated sequences through the machine and checks
// the model's invariants, and that the same sequence gives the same
// outcome twice.
func FuzzLifecycle(f *testing.F) {
	for _, s := range lt.EncodedSeeds() {
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
