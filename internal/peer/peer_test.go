package peer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"

	"github.com/recurhq/recur/internal/recurproc"
)

// TestAScheduleOfThePeerPostsAsRecurDoes: a schedule with the peer's
// action, triggered, starts the peer's workflow, whose activity posts to
// the target with the workflow ID as the idempotency key and the nominal
// time the server appended to it as the expected time: what the bench
// tools' sink reads from recur's jobs.
func TestAScheduleOfThePeerPostsAsRecurDoes(t *testing.T) {
	ts := temporaltest.NewServer()
	t.Cleanup(ts.Stop)
	c, err := Dial(context.Background(), ts.GetFrontendHostPort(), ts.GetDefaultNamespace())
	require.NoError(t, err)
	t.Cleanup(c.Close)
	w, err := StartWorker(c)
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	sink, err := recurproc.StartSink()
	require.NoError(t, err)
	t.Cleanup(sink.Close)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{ID: "sched-1",
		Spec:   client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: 24 * time.Hour}}},
		Action: Action("sched-1", sink.Target("1"))})
	require.NoError(t, err)
	before := time.Now().Truncate(time.Second)
	require.NoError(t, h.Trigger(ctx, client.ScheduleTriggerOptions{}))

	require.Eventually(t, func() bool { return sink.Count() > 0 }, 30*time.Second, 50*time.Millisecond)
	d := sink.Deliveries()[0]
	require.Equal(t, "1", d.Name)
	nominal, ok := strings.CutPrefix(d.Key, "sched-1-")
	require.True(t, ok, "key %q is not the schedule's workflow ID", d.Key)
	require.Equal(t, nominal, d.Nominal.Format(time.RFC3339))
	require.False(t, d.Nominal.Before(before), "nominal %s before the trigger at %s", d.Nominal, before)

	// Deleting is done once, and again is no error.
	require.NoError(t, DeleteSchedule(ctx, c, "sched-1"))
	_, err = h.Describe(ctx)
	require.Error(t, err, "deleted")
	require.NoError(t, DeleteSchedule(ctx, c, "sched-1"))
}
