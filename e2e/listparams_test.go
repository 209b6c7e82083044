package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/http/httpguts"
)

// FuzzListParameters sends any $top, $skip, $filter and $skiptoken to each
// list route of a real API in front of a real Temporal: the collections of
// a subscription and of a resource group, a collection's jobs and a job's
// history. The answer is never a 5xx: it is a list (at most 100 values, a
// nextLink that is a URL of the API whose $skip is a count) or a 4xx in
// ARM's envelope. The seeds hold what once answered 500 with a panic.
func FuzzListParameters(f *testing.F) {
	for _, seed := range []struct{ top, skip, filter, skiptoken string }{
		{"", "9223372036854775707", "", ""},
		{"100", "9223372036854775707", "", ""},
		{"1", "9223372036854775807", "", ""},
		{"", "9223372036854775808", "", ""},
		{"9223372036854775807", "", "", ""},
		{"", "-9223372036854775808", "", ""},
		{"1", "1000000000", "", ""},
		{"1", "1", "", ""},
		{"1", "", "state eq 'Enabled'", ""},
		{"1", "1", "status eq 'Completed'", ""},
		{"", "", "state eq Enabled", "a"},
		{"0", "", "", ""},
		{"101", "", "", ""},
		{" 1", "1 ", "", ""},
		{"1e2", "0x10", "", ""},
		{"", "", strings.Repeat("x", 5000), strings.Repeat("y", 5000)},
		{"", "", "", "../../other"},
		{"", "", "", "\x00"},
	} {
		for route := range uint8(4) {
			f.Add(route, seed.top, seed.skip, seed.filter, seed.skiptoken)
		}
	}

	st := newStack(f)
	target, _ := newTarget(f)
	jobsPath := collectionPath + "/jobs"
	routes := []string{subscriptionPath, rg1Path, jobsPath, jobsPath + "/a/history"}
	status, body := st.do(f, http.MethodPut, collectionPath, map[string]any{"properties": map[string]any{}})
	require.Equal(f, http.StatusCreated, status, body)
	for _, name := range []string{"a", "b", "c"} {
		status, body := st.do(f, http.MethodPut, jobsPath+"/"+name, httpJob(target.URL, map[string]any{"frequency": "Hour"}))
		require.Equal(f, http.StatusCreated, status, "%s: %v", name, body)
	}
	status, body = st.do(f, http.MethodPost, jobsPath+"/a/run", nil)
	require.Equal(f, http.StatusOK, status, body)
	st.listEventually(f, jobsPath, nil, jobNames, []string{"a", "b", "c"})
	st.listEventually(f, rg1Path, nil, listIDs, []string{collectionPath})
	require.Eventually(f, func() bool {
		_, body := st.get(f, jobsPath+"/a/history", nil)
		rows, _ := body["value"].([]any)
		return len(rows) > 0
	}, 20*time.Second, 200*time.Millisecond, "job a's run has a history row")

	f.Fuzz(func(t *testing.T, route uint8, top, skip, filter, skiptoken string) {
		query := url.Values{"api-version": {"2016-03-01"}}
		for name, v := range map[string]string{"$top": top, "$skip": skip, "$filter": filter, "$skiptoken": skiptoken} {
			if v != "" {
				query.Set(name, v)
			}
		}
		routePath := routes[int(route)%len(routes)]
		resp, err := http.Get(st.api.URL + routePath + "?" + query.Encode())
		require.NoError(t, err)
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Less(t, resp.StatusCode, 500, "%s %v: %s", routePath, query, data)
		require.Equal(t, "application/json; charset=utf-8", resp.Header.Get("Content-Type"), "%s %v", routePath, query)
		var answer struct {
			Value    *[]json.RawMessage
			NextLink *string
			Error    *struct{ Code, Message string }
		}
		require.NoError(t, json.Unmarshal(data, &answer), "%s %v: %s", routePath, query, data)
		if resp.StatusCode != http.StatusOK {
			require.GreaterOrEqual(t, resp.StatusCode, 400, "%s %v: %s", routePath, query, data)
			require.NotNil(t, answer.Error, "%s %v: %s", routePath, query, data)
			require.NotEmpty(t, answer.Error.Code, "%s %v: %s", routePath, query, data)
			require.NotEmpty(t, answer.Error.Message, "%s %v: %s", routePath, query, data)
			require.True(t, httpguts.ValidHeaderFieldValue(answer.Error.Message), "%s %v: %s", routePath, query, data)
			return
		}
		require.NotNil(t, answer.Value, "%s %v: %s", routePath, query, data)
		require.LessOrEqual(t, len(*answer.Value), 100, "%s %v", routePath, query)
		if answer.NextLink == nil {
			return
		}
		next, err := url.Parse(*answer.NextLink)
		require.NoError(t, err, "%s %v: %s", routePath, query, data)
		require.Equal(t, st.api.URL+routePath, next.Scheme+"://"+next.Host+next.Path, "%s %v", routePath, query)
		if v := next.Query().Get("$skip"); v != "" {
			n, err := strconv.Atoi(v)
			require.NoError(t, err, "%s %v: nextLink %s", routePath, query, *answer.NextLink)
			require.GreaterOrEqual(t, n, 0, "%s %v: nextLink %s", routePath, query, *answer.NextLink)
		}
	})
}
