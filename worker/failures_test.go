package worker

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/recurhq/recur/jobs"
)

func failingAction(context.Context) (jobs.HTTPResponse, error) {
	out := jobs.HTTPResponse{StatusCode: 500, Attempt: 1}
	return out, temporal.NewNonRetryableApplicationError("POST https://example.com/hooks/T0KEN: 500", "HttpStatus", nil, out)
}

// TestFailureMessagesTravelInTheDetails: the message of an action's
// failure, which Temporal would keep in clear in the activity's failure,
// is in its details; the error keeps its type and retry verdict.
func TestFailureMessagesTravelInTheDetails(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.SetWorkerOptions(Options(sdkworker.Options{}))
	env.RegisterActivity(failingAction)
	_, err := env.ExecuteActivity(failingAction)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Equal(t, "HttpStatus", appErr.Type())
	require.Equal(t, "HttpStatus", appErr.Message(), "the message names no target")
	require.True(t, appErr.NonRetryable())
	var resp jobs.HTTPResponse
	require.NoError(t, appErr.Details(&resp))
	require.Equal(t, "POST https://example.com/hooks/T0KEN: 500", resp.Message)
	require.Equal(t, 500, resp.StatusCode)
}

func cancelledAction(context.Context) (jobs.HTTPResponse, error) {
	return jobs.HTTPResponse{}, errCancelled
}

// TestABenignFailureStaysBenign: moving a failure's message keeps its
// category, so that a cancelled attempt is still logged at debug level.
func TestABenignFailureStaysBenign(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.SetWorkerOptions(Options(sdkworker.Options{}))
	env.RegisterActivity(cancelledAction)
	_, err := env.ExecuteActivity(cancelledAction)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Equal(t, temporal.ApplicationErrorCategoryBenign, appErr.Category())
}
