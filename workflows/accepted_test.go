package workflows_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/recurhq/recur/jobs"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
)

// TestAWriteTodaysValidatorRefusesStillReplays: a PUT and a PATCH
// recorded in job.json are changed, in the history, into definitions
// today's validator refuses (an HTTP method that is no token), as if a
// later release had made the validator stricter than the one that took
// them. The history still replays: the handlers take the accepted form
// recorded with the write and never validate again.
func TestAWriteTodaysValidatorRefusesStillReplays(t *testing.T) {
	h := recorded(t, filepath.Join("testdata", "job.json"))
	const badMethod = "NOT A METHOD"
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	changed := map[string]int{}
	var err error
	for _, e := range h.GetEvents() {
		if e.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED {
			continue
		}
		in := e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput()
		p := in.GetArgs().GetPayloads()[0]
		switch in.GetName() {
		case jobs.UpdatePutJob:
			var req jobs.PutJobRequest
			require.NoError(t, json.Unmarshal(p.GetData(), &req))
			req.Job.Properties.Action.Request.Method = badMethod
			refused := req.Job
			require.Error(t, refused.Accept(k, time.Now()), "today's validator refuses the PUT")
			p.Data, err = json.Marshal(req)
		case jobs.UpdatePatchJob:
			var req jobs.PatchJobRequest
			require.NoError(t, json.Unmarshal(p.GetData(), &req))
			req.Patch = json.RawMessage(`{"properties":{"action":{"request":{"method":"` + badMethod + `"}}}}`)
			p.Data, err = json.Marshal(req)
		default:
			continue
		}
		require.NoError(t, err)
		changed[in.GetName()]++
	}
	require.Positive(t, changed[jobs.UpdatePutJob], "job.json holds a PUT")
	require.Positive(t, changed[jobs.UpdatePatchJob], "job.json holds a PATCH")
	require.NoError(t, replay(h))
}
