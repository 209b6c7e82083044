package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/jobs"
)

func basicJob() jobs.Job {
	return jobs.Job{Properties: jobs.Properties{Action: &jobs.Action{ActionSpec: jobs.ActionSpec{Type: "Https",
		Request: &jobs.HTTPRequest{URI: "https://example.com", Method: "GET",
			Authentication: &jobs.Authentication{Type: "Basic", Username: "u", Password: "p4ss"}}}}}}
}

// patchFake is a job whose definition changes under a PATCH: its ETag is
// etags[0] until the first update, which it refuses as based on a
// definition it no longer has, then etags[1].
type patchFake struct {
	client.Client
	etags   []string
	updates []jobs.PatchJobRequest
}

func (f *patchFake) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	job := basicJob().Redacted()
	job.ETag = f.etags[min(len(f.updates), 1)]
	return describedJob(jobs.JobView{Job: job})
}

func (f *patchFake) UpdateWorkflow(_ context.Context, opts client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	req := opts.Args[0].(jobs.PatchJobRequest)
	f.updates = append(f.updates, req)
	if len(f.updates) == 1 {
		return patchAnswer{err: (&jobs.Error{Code: jobs.CodeBaseChanged, Message: "redefined"}).ToApplicationError()}, nil
	}
	job := basicJob().Redacted()
	job.ETag = req.Base + "+1"
	return patchAnswer{job: job}, nil
}

// patchAnswer is the outcome of a PATCH's update.
type patchAnswer struct {
	client.WorkflowUpdateHandle
	job jobs.Job
	err error
}

// RunID is the run that took the update: the fake names none.
func (patchAnswer) RunID() string { return "" }

func (a patchAnswer) Get(_ context.Context, into any) error {
	if a.err != nil {
		return a.err
	}
	*into.(*jobs.PutJobResult) = jobs.PutJobResult{Job: a.job}
	return nil
}

func patchRequest(t *testing.T, h http.Handler, body string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	req := newRequest(http.MethodPatch, badJob+badVersion, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	return rec
}

// TestAPatchOfAJobRedefinedMeanwhileIsMergedAgain: the job's workflow
// refuses a PATCH whose base it no longer has; the API reads the job
// again and sends the patch with the new base, as the same request.
func TestAPatchOfAJobRedefinedMeanwhileIsMergedAgain(t *testing.T) {
	f := &patchFake{etags: []string{"e1", "e2"}}
	rec := patchRequest(t, New(f, Options{Logger: slog.New(slog.DiscardHandler)}), `{"properties":{"state":"Disabled"}}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Len(t, f.updates, 2)
	require.Equal(t, []string{"e1", "e2"}, []string{f.updates[0].Base, f.updates[1].Base})
	require.JSONEq(t, `{"properties":{"state":"Disabled"}}`, string(f.updates[1].Patch), "the patch as given: the workflow merges it")
	require.Equal(t, "e2+1", rec.Header().Get("ETag"))
}

// TestAPatchAimingAWorkflowActionWhereItMayNotGoChangesNothing: the API
// checks the patched definition's Workflow targets before any update.
func TestAPatchAimingAWorkflowActionWhereItMayNotGoChangesNothing(t *testing.T) {
	f := &patchFake{etags: []string{"e1", "e2"}}
	var targets jobs.WorkflowTargets
	require.NoError(t, targets.Add("tenant-ns/*"))
	h := New(f, Options{Logger: slog.New(slog.DiscardHandler), WorkflowTargets: targets})
	rec := patchRequest(t, h, `{"properties":{"action":{"type":"Workflow","request":null,
		"workflow":{"namespace":"temporal-system","workflowType":"w","taskQueue":"q"}}}}`)
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Equal(t, "properties.action.workflow.namespace", armAnswer(t, rec).Target)
	require.Empty(t, f.updates)
}

func (f *patchFake) WorkflowService() workflowservice.WorkflowServiceClient { return idleTaskQueue{} }
