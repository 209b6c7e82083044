package lifecycle_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/lifecycle"
	"github.com/recurhq/recur/lifecycle/lifecycletest"
)

var (
	plannerKey = lifecycletest.Key
	t0         = lifecycletest.Start
)

// A job created completed (recur import writes so a one-time job that ran
// where it came from) has nothing to run, whatever its schedule says, even
// in a disabled collection: it is finished, asks its retention and is
// deleted once it passes, as a job that completed here. Once defined, a job
// is never given Completed: completing is the scheduler's doing.
func TestAJobCreatedCompletedRunsNothingAndIsKeptItsRetention(t *testing.T) {
	def := lifecycletest.Definition(lifecycletest.Config{})
	def.Properties.Recurrence = nil // a one-time job whose start, t0, has passed
	def.Properties.State = jobs.Completed
	require.NoError(t, def.Accept(plannerKey, t0.Add(time.Hour)))

	for _, collectionDisabled := range []bool{false, true} {
		st, ok := lifecycle.NewState(plannerKey, def, t0.Add(time.Hour), "origin", collectionDisabled)
		require.True(t, ok, "the API starts its workflow with its state")
		require.Equal(t, jobs.Completed, st.Job.Properties.State, "collection disabled: %v", collectionDisabled)
		require.Nil(t, st.Next)
		require.Nil(t, st.Job.Properties.Status.NextExecutionTime)

		j := lifecycle.New(plannerKey, "origin", t0.Add(time.Hour), st, lifecycle.Direct{})
		now := t0.Add(time.Hour + time.Second)
		out, err := j.Apply(lifecycle.Step{Moment: lifecycle.Moment{Now: now}})
		require.NoError(t, err)
		require.Equal(t, []lifecycle.Effect{lifecycle.AskRetention{}}, out, "it starts nothing")
		out, err = j.Apply(lifecycle.RetentionKnown{Moment: lifecycle.Moment{Now: now}, Keep: time.Hour})
		require.NoError(t, err)
		require.Equal(t, []lifecycle.Effect{lifecycle.Wake{At: now.Add(time.Hour)}}, out)
		_, err = j.Apply(lifecycle.Step{Moment: lifecycle.Moment{Now: now.Add(time.Hour)}})
		require.NoError(t, err)
		require.True(t, j.Deleted(), "deleted once its retention passes")

		enabled := lifecycletest.Definition(lifecycletest.Config{})
		require.NoError(t, enabled.Accept(plannerKey, t0))
		k := lifecycle.New(plannerKey, "origin", t0, nil, lifecycle.Direct{})
		_, err = k.Apply(lifecycle.Defined{Job: enabled, At: t0})
		require.NoError(t, err)
		require.Equal(t, jobs.CodeConflict, k.Takes(def).Code, "a job defined is never given Completed")
		require.Nil(t, k.Takes(enabled))
		require.Nil(t, lifecycle.New(plannerKey, "origin", t0, nil, lifecycle.Direct{}).Takes(def), "a new job is")
	}
}
