package api

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

// answer runs writeError on err and returns the HTTP status and code.
func answer(t *testing.T, err error) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	c.Request = httptest.NewRequest(http.MethodGet, "/x", nil)
	writeError(c, slog.New(slog.DiscardHandler), err)
	var body armError
	require.NoError(t, decodeJSON(rec.Body.Bytes(), &body))
	return rec.Code, body.Error.Code
}

func TestWriteErrorMapsBusinessErrorsWhereverTheyComeFrom(t *testing.T) {
	notFound := jobs.NotFound("job j")
	viaQuery := serviceerror.NewQueryFailedWithFailure("query failed",
		temporal.GetDefaultFailureConverter().ErrorToFailure(notFound.ToApplicationError()))
	for name, tc := range map[string]struct {
		err    error
		status int
		code   string
	}{
		"direct":                 {notFound, http.StatusNotFound, jobs.CodeNotFound},
		"from an update":         {notFound.ToApplicationError(), http.StatusNotFound, jobs.CodeNotFound},
		"from a failed query":    {queryFailure(viaQuery), http.StatusNotFound, jobs.CodeNotFound},
		"quota":                  {&jobs.Error{Code: jobs.CodeQuotaExceeded}, http.StatusConflict, jobs.CodeQuotaExceeded},
		"bad input":              {&jobs.Error{Code: jobs.CodeInvalidRequest}, http.StatusBadRequest, jobs.CodeInvalidRequest},
		"missing workflow":       {serviceerror.NewNotFound("no such workflow"), http.StatusNotFound, jobs.CodeNotFound},
		"anything else is a 500": {errors.New("boom"), http.StatusInternalServerError, "InternalServerError"},
	} {
		status, code := answer(t, tc.err)
		require.Equal(t, tc.status, status, name)
		require.Equal(t, tc.code, code, name)
	}
}

func decodeJSON(data []byte, v any) error { return json.Unmarshal(data, v) }
