package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/recurtest"
)

func TestHealthFlagsAreTheAPIsFilter(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		flags healthFlags
		want  []string
	}{
		{healthFlags{}, nil},
		{healthFlags{failing: 3}, []string{"consecutiveFailures ge 3"}},
		{healthFlags{noSuccessSince: "24h"}, []string{"lastSuccessTime lt 2026-11-20T12:00:00Z"}},
		{healthFlags{noSuccessSince: "2026-11-01T00:00:00+01:00"}, []string{"lastSuccessTime lt 2026-10-31T23:00:00Z"}},
		{healthFlags{missedSince: "P1D"}, []string{"lastMissedTime ge 2026-11-20T12:00:00Z"}},
		{healthFlags{late: "5m"}, []string{"lastLateness gt duration'PT5M'"}},
		{healthFlags{late: "PT1M30S"}, []string{"lastLateness gt duration'PT1M30S'"}},
		{healthFlags{unhealthy: true, failing: 2}, []string{"consecutiveFailures ge 2", "unhealthy"}},
	} {
		got, err := tc.flags.conditions(now)
		require.NoError(t, err, "%+v", tc.flags)
		assert.Equal(t, tc.want, got, "%+v", tc.flags)
	}
	for _, bad := range []healthFlags{{failing: -1}, {late: "soon"}, {late: "-5m"}, {noSuccessSince: "yesterday"}, {missedSince: "2026-11-21"}} {
		_, err := bad.conditions(now)
		assert.Error(t, err, "%+v", bad)
	}
}

// TestClientListsJobsByHealth: recur jobs list's health flags select the
// jobs the API's $filter does, in a collection or across the
// subscription, with their health in the table.
func TestClientListsJobsByHealth(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it runs the client against a real recur (about 10 s)")
	}
	clearClientEnv(t)
	st, err := recurtest.Start()
	require.NoError(t, err)
	t.Cleanup(st.Stop)
	var failing atomic.Bool
	failing.Store(true)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/flaky") && failing.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(target.Close)
	sub := []string{"--server", st.API.URL, "--subscription", "sub1"}
	in := func(rg string, args ...string) []string { return append(append(args, sub...), "--resource-group", rg) }
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	for _, j := range []struct{ rg, coll, name string }{{"rg1", "ops", "flaky"}, {"rg1", "ops", "fine"}, {"rg2", "billing", "flaky"}} {
		res := recurCLI(t, `{"properties":{}}`, in(j.rg, "collections", "put", j.coll, "-f", "-")...)
		require.Equal(t, 0, res.code, "%s", res)
		res = recurCLI(t, jobJSON(target.URL+"/"+j.name, start), in(j.rg, "jobs", "put", j.name, "--collection", j.coll, "-f", "-")...)
		require.Equal(t, 0, res.code, "%s", res)
		for range 2 {
			res = recurCLI(t, "", in(j.rg, "jobs", "run", j.name, "--collection", j.coll)...)
			require.Equal(t, 0, res.code, "%s", res)
		}
	}

	listed := func(r cliResult, want ...string) bool {
		if r.code != 0 {
			return false
		}
		rows := r.rows(t)
		return fmt.Sprint(names(rows)) == fmt.Sprint(want)
	}
	// Sorted by resource group, collection and name.
	res := eventually(t, func(r cliResult) bool { return listed(r, "ops/flaky", "billing/flaky") }, "",
		append([]string{"jobs", "list", "--failing", "2"}, sub...)...)
	rows := res.rows(t)
	assert.Equal(t, map[string]string{"NAME": "billing/flaky", "RESOURCE GROUP": "rg2", "STATE": "enabled", "FAILING": "2",
		"LAST SUCCESS": "-", "LATENESS": "-", "MISSED": "0", "POSTPONED": "0", "LAST MISSED": "-"}, rows[1])
	res = recurCLI(t, "", append([]string{"jobs", "list", "--failing", "3"}, sub...)...)
	require.True(t, listed(res), "%s", res)
	res = recurCLI(t, "", in("rg1", "jobs", "list", "--collection", "ops", "--failing", "1")...)
	require.True(t, listed(res, "ops/flaky"), "%s", res)
	res = recurCLI(t, "", in("rg1", "jobs", "list", "--unhealthy")...)
	require.True(t, listed(res, "ops/flaky"), "the resource group's: %s", res)
	res = recurCLI(t, "", append([]string{"jobs", "list", "--no-success-since", "1h"}, sub...)...)
	require.True(t, listed(res, "ops/flaky", "billing/flaky"), "%s", res)
	res = recurCLI(t, "", append([]string{"jobs", "list", "--state", "Enabled", "--failing", "1", "-o", "json"}, sub...)...)
	require.Equal(t, 0, res.code, "%s", res)
	require.Len(t, res.json(t)["value"], 2)
	res = recurCLI(t, "", append([]string{"jobs", "list"}, sub...)...)
	require.True(t, listed(res, "ops/fine", "ops/flaky", "billing/flaky"), "every job of the subscription: %s", res)

	// The target recovers: a success ends the streak.
	failing.Store(false)
	res = recurCLI(t, "", in("rg2", "jobs", "run", "flaky", "--collection", "billing")...)
	require.Equal(t, 0, res.code, "%s", res)
	eventually(t, func(r cliResult) bool { return listed(r, "ops/flaky") }, "", append([]string{"jobs", "list", "--unhealthy"}, sub...)...)
	res = recurCLI(t, "", append([]string{"jobs", "list", "--no-success-since", "1h"}, sub...)...)
	require.True(t, listed(res, "ops/flaky"), "%s", res)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"jobs", "list", "--failing", "-1"}, sub...), "--failing -1: want a number of runs"},
		{append([]string{"jobs", "list", "--late", "soon"}, sub...), `--late "soon": want a duration`},
		{append([]string{"jobs", "list", "--missed-since", "monday"}, sub...), `--missed-since "monday": want an RFC 3339 time`},
		{append([]string{"jobs", "list", "--collection", "ops"}, sub...), "no resource group given"},
		{[]string{"jobs", "list", "--server", st.API.URL}, "no subscription given"},
	} {
		res := recurCLI(t, "", tc.args...)
		assert.Equal(t, 2, res.code, "%v: %s", tc.args, res)
		assert.Contains(t, res.stderr, tc.want, "%v", tc.args)
	}
}
