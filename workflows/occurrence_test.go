package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

func intp(n int) *int { return &n }

// TestRetryPolicyBecomesTheActivityOptions: a job's retry policy is
// the activity's, and the whole of its attempts and pauses fits in
// its schedule-to-close timeout.
func TestRetryPolicyBecomesTheActivityOptions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy *jobs.RetryPolicy
		want   int32 // attempts in all
		pause  time.Duration
		cap    time.Duration
		factor float64
	}{
		{"none", &jobs.RetryPolicy{RetryType: "None"}, 1, time.Second, time.Second, 1},
		{"default", nil, 5, 30 * time.Second, 30 * time.Second, 1},
		{"fixed", &jobs.RetryPolicy{RetryType: "Fixed", RetryCount: intp(2), RetryInterval: "PT15S"}, 3, 15 * time.Second, 15 * time.Second, 1},
		{"fixed, 20 retries an hour apart", &jobs.RetryPolicy{RetryType: "Fixed", RetryCount: intp(20), RetryInterval: "PT1H"}, 21, time.Hour, time.Hour, 1},
	} {
		spec := jobs.ActionSpec{Type: "Http", RetryPolicy: tc.policy}
		retries, err := spec.RetryPolicy.Resolve("retryPolicy")
		require.NoError(t, err, tc.name)
		opts := activityOptions(spec, retries, "summary")
		p := opts.RetryPolicy
		require.Equal(t, tc.want, p.MaximumAttempts, tc.name)
		require.Equal(t, tc.pause, p.InitialInterval, tc.name)
		require.Equal(t, tc.cap, p.MaximumInterval, tc.name)
		require.Equal(t, tc.factor, p.BackoffCoefficient, tc.name)
		require.Equal(t, spec.AttemptTimeout()+5*time.Second, opts.StartToCloseTimeout, tc.name)
		all := time.Duration(tc.want)*opts.StartToCloseTimeout + time.Duration(tc.want-1)*tc.cap
		require.Greater(t, opts.ScheduleToCloseTimeout, all, tc.name)
		require.Equal(t, "summary", opts.Summary, tc.name)
	}
}
