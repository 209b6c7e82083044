package store

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/internal/syncbuf"
	"github.com/recurhq/recur/jobs"
)

// refusingClient is a Temporal client whose updates its workflow refuses
// with refusal.
type refusingClient struct {
	client.Client
	refusal *jobs.Error
}

func (c refusingClient) UpdateWorkflow(context.Context, client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	return nil, c.refusal.ToApplicationError()
}

// TestAWriteRefusedAsLateBeforeItsDeadlineWarnsOfTheClock: a job that
// refuses a write as taken past its deadline while this process's clock
// says the deadline is 20 s away has a clock (Temporal's) 20 s ahead at
// least, and every write will be refused: the store says so in its log,
// once a minute however many writes are refused. A refusal that comes
// after the deadline says nothing of the clocks.
func TestAWriteRefusedAsLateBeforeItsDeadlineWarnsOfTheClock(t *testing.T) {
	logged := &syncbuf.Buffer{}
	r := newRecordingPriority()
	close(r.release)
	s := &Store{temporal: refusingClient{refusal: jobs.Deadline{NotAfter: time.Unix(1, 0)}.Late(time.Now())},
		log: slog.New(slog.NewTextHandler(logged, nil)), updates: newUpdateSemaphore(), priority: r.writePriority, runs: newRuns(maxRuns)}
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}

	late, cancel := context.WithTimeout(context.Background(), jobs.TakeMargin+time.Second)
	defer cancel()
	err := s.DeleteJob(late, k, jobs.Preconditions{})
	e, ok := jobs.FromApplicationError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, jobs.CodeNotTaken, e.Code)
	assert.Empty(t, logged.String(), "refused with its deadline a second away: nothing said of the clocks")

	for range 3 {
		ahead, cancel := context.WithTimeout(context.Background(), jobs.TakeMargin+20*time.Second)
		defer cancel()
		require.Error(t, s.DeleteJob(ahead, k, jobs.Preconditions{}))
	}
	out := logged.String()
	assert.Equal(t, 1, strings.Count(out, "Temporal server's clock is ahead"), "once a minute:\n%s", out)
	m := regexp.MustCompile(`aheadAtLeast=(\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	ahead, err := time.ParseDuration(m[1])
	require.NoError(t, err)
	assert.True(t, ahead > 19*time.Second && ahead <= 20*time.Second, "by how much at least: %s", ahead)
}
