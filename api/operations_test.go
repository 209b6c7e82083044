package api

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// TestAnOperationThatRunsOnAnswers202: an operation that runs on past its
// wait answers 202 with its Location and Retry-After, one that has ended
// 200, and one that failed leaves its error to writeError.
func TestAnOperationThatRunsOnAnswers202(t *testing.T) {
	gin.SetMode(gin.TestMode)
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c"}
	const op = "0a6c4e35-3c54-4a3c-9c8e-9b7b5d2a4e11.4b1f8c1e-7f4a-4b9e-8f39-2d7a0c9e6b52"
	boom := errors.New("boom")
	for name, tc := range map[string]struct {
		running bool
		err     error
		status  int
	}{
		"ended":   {false, nil, http.StatusOK},
		"runs on": {true, nil, http.StatusAccepted},
		"failed":  {false, boom, 0},
	} {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(rec)
			c.Request = newRequest(http.MethodPost, "/x", nil)
			err := answerOperation(c, k, op, tc.running, tc.err)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			c.Writer.WriteHeaderNow()
			require.Equal(t, tc.status, rec.Code)
			if tc.status == http.StatusAccepted {
				require.True(t, strings.HasSuffix(rec.Header().Get("Location"), k.CollectionID()+"/operations/"+op+"?api-version="+APIVersion),
					rec.Header().Get("Location"))
				require.Equal(t, operationRetryAfter, rec.Header().Get("Retry-After"))
			}
		})
	}
}
