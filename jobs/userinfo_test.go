package jobs_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// userinfoURIs hold credentials in their user info, as a password or as
// a token in the user name; none of their secret words is in a host.
var userinfoURIs = []string{
	"https://alice:s3cretpw@example.com/x",
	"https://tok3nvalue@example.com/x?a=1",
	"http://alice:s3cretpw@127.0.0.1:8080/",
	"https://alice:s3cretpw@example.com:badport/",
}

var userinfoWords = []string{"alice", "s3cretpw", "tok3nvalue"}

// TestNewDefinitionsRefuseUserinfoInURIs: a new definition whose action
// or error action URI holds user info is refused at the URI's path, with
// a message that points to the authentication member and quotes none of
// it, whatever else is wrong with the URI; Accept, which replays stored
// definitions, still takes the ones it took.
func TestNewDefinitionsRefuseUserinfoInURIs(t *testing.T) {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, target string
		set          func(*jobs.Job, string)
		stored       bool // Accept takes it
	}{
		{"action", "properties.action.request.uri", func(j *jobs.Job, v string) { j.Properties.Action.Request.URI = v }, true},
		{"error action", "properties.action.errorAction.request.uri", func(j *jobs.Job, v string) { j.Properties.Action.ErrorAction.Request.URI = v }, true},
		{"Https action with an http URI", "properties.action.request.uri", func(j *jobs.Job, v string) {
			j.Properties.Action.Type = "Https"
			j.Properties.Action.Request.URI = "http" + strings.TrimPrefix(v, "https")
		}, false},
	} {
		for _, uri := range userinfoURIs {
			job := func() jobs.Job {
				j := httpJob(nil, nil)
				tc.set(&j, uri)
				return j
			}
			if tc.stored && !strings.Contains(uri, "badport") {
				j := job()
				require.NoError(t, j.AcceptStored(k, created), "%s %s: stored definitions still replay", tc.name, uri)
			}
			j := job()
			var e *jobs.Error
			require.ErrorAs(t, j.Accept(k, created), &e, "%s %s", tc.name, uri)
			require.Equal(t, jobs.CodeInvalidRequest, e.Code)
			require.Equal(t, tc.target, e.Target, "%s %s", tc.name, uri)
			require.Contains(t, e.Message, "authentication", "%s %s", tc.name, uri)
			for _, w := range userinfoWords {
				require.NotContains(t, e.Message, w, "%s %s", tc.name, uri)
			}
		}
	}
	j := httpJob(nil, nil)
	j.Properties.Action.Request.URI = "https://example.com/path@with-at?who=a@b#c@d"
	require.NoError(t, j.Accept(k, created), "an @ past the host is no user info")
}

// TestRedactedDropsUserinfo: a job stored before the refusal shows its
// URIs without their user info in every answer (GET, lists, the memo
// they read), and the job itself keeps it.
func TestRedactedDropsUserinfo(t *testing.T) {
	j := httpJob(nil, nil)
	j.Properties.Action.Request.URI = "https://alice:s3cretpw@example.com/x?a=1"
	j.Properties.Action.ErrorAction.Request.URI = "https://tok3nvalue@example.com/error"
	for name, shown := range map[string]jobs.Job{"Redacted": j.Redacted(), "Public": j.Public()} {
		require.Equal(t, "https://example.com/x?a=1", shown.Properties.Action.Request.URI, name)
		require.Equal(t, "https://example.com/error", shown.Properties.Action.ErrorAction.Request.URI, name)
		data, err := json.Marshal(shown)
		require.NoError(t, err)
		for _, w := range userinfoWords {
			require.NotContains(t, string(data), w, name)
		}
	}
	require.Equal(t, "https://alice:s3cretpw@example.com/x?a=1", j.Properties.Action.Request.URI, "the job keeps its URI")
	require.Equal(t, "https://tok3nvalue@example.com/error", j.Properties.Action.ErrorAction.Request.URI)
}

// TestNewDefinitionsRefusePortsOutOfRange: a port that no connection can
// have is refused at the URI's path, naming the port; the ports at the
// ends of the range are taken.
func TestNewDefinitionsRefusePortsOutOfRange(t *testing.T) {
	k := jobs.Key{Subscription: "s", ResourceGroup: "rg", Collection: "c", Job: "j"}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, uri := range []string{"http://[::1]:99999/j", "https://example.com:0/", "https://example.com:65536/", "http://127.0.0.1:18446744073709551617/"} {
		for _, target := range []string{"properties.action.request.uri", "properties.action.errorAction.request.uri"} {
			j := httpJob(nil, nil)
			if strings.Contains(target, "errorAction") {
				j.Properties.Action.ErrorAction.Request.URI = uri
			} else {
				j.Properties.Action.Request.URI = uri
			}
			var e *jobs.Error
			require.ErrorAs(t, j.Accept(k, created), &e, uri)
			require.Equal(t, target, e.Target, uri)
			require.Contains(t, e.Message, "a port is a number from 1 to 65535", uri)
		}
	}
	for _, uri := range []string{"http://[::1]:65535/j", "https://example.com:1/", "https://example.com/"} {
		j := httpJob(nil, nil)
		j.Properties.Action.Request.URI = uri
		require.NoError(t, j.Accept(k, created), uri)
	}
}
