package jobs

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestApplyRefusesWhatItKeepsFromWriting(t *testing.T) {
	for _, header := range []string{"", "if-changed", "what-if"} {
		a, err := ParseApply(header)
		require.NoError(t, err)
		require.Equal(t, Apply(header), a)
	}
	for _, header := range []string{"If-Changed", "always", " what-if"} {
		_, err := ParseApply(header)
		require.Error(t, err, header)
	}
	outcome := func(err error) string {
		if err == nil {
			return "written"
		}
		e, ok := FromApplicationError(err)
		require.True(t, ok)
		require.Equal(t, CodeNotWritten, e.Code)
		return e.Target
	}
	same := func() bool { return true }
	differs := func() bool { return false }
	final := errors.New("final")
	writable := func() error { return nil }
	ended := func() error { return final }
	for _, c := range []struct {
		apply    Apply
		defined  bool
		same     func() bool
		writable func() error
		want     string
	}{
		{ApplyAlways, true, same, writable, "written"},
		{ApplyAlways, false, differs, writable, "written"},
		{ApplyAlways, true, same, ended, "final"},
		{ApplyIfChanged, true, same, writable, OutcomeUnchanged},
		{ApplyIfChanged, true, same, ended, OutcomeUnchanged},
		{ApplyIfChanged, true, differs, writable, "written"},
		{ApplyIfChanged, true, differs, ended, "final"},
		{ApplyIfChanged, false, differs, writable, "written"},
		{ApplyWhatIf, true, same, writable, OutcomeUnchanged},
		{ApplyWhatIf, true, same, ended, OutcomeUnchanged},
		{ApplyWhatIf, true, differs, writable, OutcomeUpdated},
		{ApplyWhatIf, true, differs, ended, "final"},
		{ApplyWhatIf, false, differs, writable, OutcomeCreated},
	} {
		err := c.apply.Refusal(c.defined, c.same, c.writable)
		if errors.Is(err, final) {
			require.Equal(t, c.want, "final")
			continue
		}
		require.Equal(t, c.want, outcome(err), "%q, defined %v", c.apply, c.defined)
	}
}

func TestSameJobComparesSecretsNotStatus(t *testing.T) {
	job := func(password string, runs int) Job {
		return Job{ETag: password, Properties: Properties{State: Enabled,
			Action: &Action{ActionSpec: ActionSpec{Type: ActionHTTPS, Request: &HTTPRequest{URI: "https://example.com/", Method: "GET",
				Authentication: &Authentication{Type: "Basic", Username: "u", Password: password}}}},
			Status: &Status{ExecutionCount: runs, NextExecutionTime: &time.Time{}}}}
	}
	require.True(t, SameJob(job("a", 1), job("a", 5)), "the status is the scheduler's, not the definition")
	require.False(t, SameJob(job("a", 1), job("b", 1)), "a secret is part of the definition")
	a, b := job("a", 1), job("a", 1)
	b.Properties.State = Disabled
	require.False(t, SameJob(a, b))
	for _, ended := range []State{Completed, Faulted} {
		stored := job("a", 1)
		stored.Properties.State, stored.Properties.StateReason = ended, "it ran its course"
		require.True(t, SameJob(stored, job("a", 1)), "a %s job holds the definition it was given enabled", ended)
		// recur export writes a faulted job disabled, so that it runs
		// nowhere it is imported; imported back where it came from, it is
		// the job's definition.
		exported := b
		exported.Properties.StateReason = "exported"
		require.True(t, SameJob(stored, exported), "a %s job holds the definition recur export writes disabled", ended)
		given := job("a", 1)
		given.Properties.State = ended
		require.True(t, SameJob(stored, given), "a %s job holds the definition given %s", ended, ended)
		other := job("b", 1)
		other.Properties.State = Disabled
		require.False(t, SameJob(stored, other), "a secret is part of the definition, whatever the state")
	}
	faulted := job("a", 1)
	faulted.Properties.State = Faulted
	completed := job("a", 1)
	completed.Properties.State = Completed
	require.False(t, SameJob(faulted, completed), "a faulted job did not complete")
}
