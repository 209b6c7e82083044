package recurproc

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/activities"
)

// TestSinkRecordsWhatRecurSends: a request to a target is answered 200
// and recorded with its name and recur's headers, the expected time
// parsed; one without the header has a zero nominal time.
func TestSinkRecordsWhatRecurSends(t *testing.T) {
	s, err := StartSink()
	require.NoError(t, err)
	t.Cleanup(s.Close)
	post := func(name string, header map[string]string) {
		req, err := http.NewRequest(http.MethodPost, s.Target(name), strings.NewReader("body"))
		require.NoError(t, err)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	post("recur/job-1", map[string]string{activities.HeaderIdempotencyKey: "job:s/g/c/job-1@2026-11-23T12:00:00Z",
		activities.HeaderJobID: "job-1", activities.HeaderExpectedExecTime: "2026-11-23T13:00:00+01:00"})
	post("7", nil)

	ds := s.Deliveries()
	require.Len(t, ds, 2)
	require.Equal(t, 2, s.Count())
	require.Equal(t, "recur/job-1", ds[0].Name)
	require.Equal(t, "job:s/g/c/job-1@2026-11-23T12:00:00Z", ds[0].Key)
	require.Equal(t, "job-1", ds[0].JobID)
	require.Equal(t, "2026-11-23T13:00:00+01:00", ds[0].Expected)
	require.Equal(t, time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), ds[0].Nominal)
	require.Equal(t, time.UTC, ds[0].Nominal.Location())
	require.False(t, ds[0].Arrived.IsZero())
	require.Equal(t, "7", ds[1].Name)
	require.True(t, ds[1].Nominal.IsZero())
}
