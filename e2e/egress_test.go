package e2e

import (
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/activities"
	"github.com/recurhq/recur/egress"
)

// TestRefusedDestinationIsAFailedAttempt runs jobs whose targets the
// egress policy refuses, on a stack with the policy of `recur serve`
// (loopback and private refused): a loopback target and the cloud
// metadata address. Each run fails at once despite a retry policy, with a
// history row that says the destination was refused by policy and why,
// and the loopback target sees no connection.
func TestRefusedDestinationIsAFailedAttempt(t *testing.T) {
	s := newStack(t, func(a *activities.Activities) { a.Client = egress.Policy{}.Client() })
	var conns atomic.Int32
	target := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	target.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	target.Start()
	t.Cleanup(target.Close)
	status, coll := s.do(t, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(t, http.StatusCreated, status, coll)

	start := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	cases := map[string]struct{ uri, says string }{
		"loopback": {target.URL + "/hook?sig=s3cr3t", "refused by policy: a loopback address (allow it with --egress-allow-loopback)"},
		"metadata": {"http://169.254.169.254/latest/meta-data/?sig=s3cr3t", "destination 169.254.169.254:80 refused by policy: a link-local address"},
	}
	for name, c := range cases {
		status, job := s.do(t, http.MethodPut, collectionPath+"/jobs/"+name, map[string]any{"properties": map[string]any{
			"startTime": start.Format(time.RFC3339),
			"action": map[string]any{
				"type":        "Http",
				"request":     map[string]any{"uri": c.uri, "method": "POST"},
				"retryPolicy": map[string]any{"retryType": "Fixed", "retryCount": 3, "retryInterval": "PT15S"},
			},
		}})
		require.Equal(t, http.StatusCreated, status, job)
	}

	// Well before the first retry would be due: the refusal is final.
	s.requireFaulted(t, slices.Collect(maps.Keys(cases)), 12*time.Second, "every job ends faulted without a retry")

	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			row := mainActionRow(t, s, name)
			require.Equal(t, "Failed", row["status"], "row: %v", row)
			require.EqualValues(t, 0, row["retryCount"], "not retried: row %v", row)
			message, _ := row["message"].(string)
			require.Contains(t, message, c.says)
			require.NotContains(t, message, "s3cr3t", "the URI's query may hold a secret")
			_, job := s.do(t, http.MethodGet, collectionPath+"/jobs/"+name, nil)
			require.EqualValues(t, 1, path(job, "properties", "status", "failureCount"), "one failed attempt")
			require.EqualValues(t, 1, path(job, "properties", "status", "faultedCount"))
		})
	}
	require.Zero(t, conns.Load(), "the target saw nothing")
}
