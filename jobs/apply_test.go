package jobs

import (
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
	for _, c := range []struct {
		apply   Apply
		defined bool
		same    func() bool
		want    string
	}{
		{ApplyAlways, true, same, "written"},
		{ApplyAlways, false, differs, "written"},
		{ApplyIfChanged, true, same, OutcomeUnchanged},
		{ApplyIfChanged, true, differs, "written"},
		{ApplyIfChanged, false, differs, "written"},
		{ApplyWhatIf, true, same, OutcomeUnchanged},
		{ApplyWhatIf, true, differs, OutcomeUpdated},
		{ApplyWhatIf, false, differs, OutcomeCreated},
	} {
		require.Equal(t, c.want, outcome(c.apply.Refusal(c.defined, c.same)), "%q, defined %v", c.apply, c.defined)
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
}
