package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"

	"github.com/recurhq/recur/jobs"
)

// PUT retries while IsNotFound holds: a missing collection must end the
// retries at once, not after RequestTimeout.
func TestIsNotFoundRetriesOnlyWhatMayComeBack(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"ours":                   {jobs.NotFound("job j"), true},
		"a workflow's":           {jobs.NotFound("job j").ToApplicationError(), true},
		"wrapped":                {fmt.Errorf("update: %w", jobs.NotFound("job j")), true},
		"temporal's":             {serviceerror.NewNotFound("no such workflow"), true},
		"temporal's wrapped":     {fmt.Errorf("describe: %w", serviceerror.NewNotFound("gone")), true},
		"the collection missing": {(&jobs.Error{Code: jobs.CodeCollectionMissing}).ToApplicationError(), false},
		"a conflict":             {&jobs.Error{Code: jobs.CodeConflict}, false},
		"anything else":          {errors.New("boom"), false},
		"none":                   {nil, false},
	} {
		require.Equal(t, tc.want, IsNotFound(tc.err), name)
	}
}

func TestViewFoundNamesWhatIsMissing(t *testing.T) {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	boom := errors.New("boom")
	for name, tc := range map[string]struct {
		err     error
		deleted bool
		want    error
	}{
		"found":            {nil, false, nil},
		"deleted":          {nil, true, jobs.NotFound("job j")},
		"no view":          {errNoView, false, jobs.NotFound("job j")},
		"no workflow":      {serviceerror.NewNotFound("no such workflow"), false, jobs.NotFound("job j")},
		"failed otherwise": {boom, false, boom},
	} {
		require.Equal(t, tc.want, viewFound(tc.err, tc.deleted, JobNamed(k)), name)
	}
	require.Equal(t, jobs.NotFound("job collection c"), viewFound(errNoView, false, CollectionNamed(k)))
}
