package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"

	"github.com/recurhq/recur/jobs"
)

// updateHandle is a client.WorkflowUpdateHandle whose Get answers err
// after delay, or when its context ends, whichever comes first.
type updateHandle struct {
	delay time.Duration
	err   error
}

func (updateHandle) WorkflowID() string { return "collection:s/rg/c" }
func (updateHandle) RunID() string      { return "0a6c4e35-3c54-4a3c-9c8e-9b7b5d2a4e11" }
func (updateHandle) UpdateID() string   { return "4b1f8c1e-7f4a-4b9e-8f39-2d7a0c9e6b52" }
func (h updateHandle) Get(ctx context.Context, _ any) error {
	select {
	case <-time.After(h.delay):
		return h.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestAnOperationPastItsWaitAnswers202: an operation that has not ended
// when the wait runs out answers 202 with its Location, whether the wait's
// own timer ends it or Temporal answers first that the poll's deadline
// (which travels with it) has passed; one that ends in time answers 200,
// and one whose Temporal fails otherwise answers that failure.
func TestAnOperationPastItsWaitAnswers202(t *testing.T) {
	gin.SetMode(gin.TestMode)
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c"}
	const wait = 50 * time.Millisecond
	unavailable := serviceerror.NewUnavailable("down")
	for name, tc := range map[string]struct {
		h      updateHandle
		status int
		err    error
	}{
		"ends in time":                    {updateHandle{delay: time.Millisecond}, http.StatusOK, nil},
		"the wait runs out":               {updateHandle{delay: time.Hour}, http.StatusAccepted, nil},
		"Temporal says the deadline went": {updateHandle{delay: wait - 5*time.Millisecond, err: serviceerror.NewDeadlineExceeded("deadline")}, http.StatusAccepted, nil},
		"Temporal fails":                  {updateHandle{delay: time.Millisecond, err: unavailable}, 0, unavailable},
	} {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(rec)
			c.Request = newRequest(http.MethodPost, "/x", nil)
			err := (&Server{}).answerOperation(context.Background(), c, k, tc.h, wait)
			if tc.err != nil {
				require.True(t, errors.Is(err, tc.err), "%v", err)
				return
			}
			require.NoError(t, err)
			c.Writer.WriteHeaderNow()
			require.Equal(t, tc.status, rec.Code)
			if tc.status == http.StatusAccepted {
				require.Contains(t, rec.Header().Get("Location"), k.CollectionID()+"/operations/")
				require.Equal(t, operationRetryAfter, rec.Header().Get("Retry-After"))
			}
		})
	}
}
