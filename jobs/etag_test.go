package jobs_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/jobs"
)

// TestParsePreconditions: the headers reach Check in the one form it
// compares (a strong ETag or *), or are refused; none is ignored. An
// If-None-Match naming the current ETag weakly (W/) must fail as the
// strong one does (RFC 9110's weak comparison); an If-Match naming it
// weakly never matches (strong comparison).
func TestParsePreconditions(t *testing.T) {
	const etag = `"01a2077c68397a01a410-3"`
	for _, tc := range []struct {
		name, ifMatch, ifNoneMatch string
		want                       jobs.Preconditions
		fails                      bool // Check refuses the resource whose ETag is etag
	}{
		{"none", "", "", jobs.Preconditions{}, false},
		{"If-Match current", etag, "", jobs.Preconditions{IfMatch: etag}, false},
		{"If-Match *", "*", "", jobs.Preconditions{IfMatch: "*"}, false},
		{"If-Match stale", `"stale-1"`, "", jobs.Preconditions{IfMatch: `"stale-1"`}, true},
		{"If-Match weak current", "W/" + etag, "", jobs.Preconditions{IfMatch: "W/" + etag}, true},
		{"If-None-Match current", "", etag, jobs.Preconditions{IfNoneMatch: etag}, true},
		{"If-None-Match weak current", "", "W/" + etag, jobs.Preconditions{IfNoneMatch: etag}, true},
		{"If-None-Match *", "", "*", jobs.Preconditions{IfNoneMatch: "*"}, true},
		{"If-None-Match other", "", `"other-1"`, jobs.Preconditions{IfNoneMatch: `"other-1"`}, false},
		{"spaces around", "  " + etag + " ", " * ", jobs.Preconditions{IfMatch: etag, IfNoneMatch: "*"}, true},
	} {
		p, err := jobs.ParsePreconditions(tc.ifMatch, tc.ifNoneMatch)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, p, tc.name)
		assert.Equal(t, tc.fails, p.Check(etag, "job j") != nil, tc.name)
	}

	long := `"` + strings.Repeat("a", 5000) + `"`
	for _, tc := range []struct {
		name, ifMatch, ifNoneMatch, target string
	}{
		{"If-None-Match without quotes", "", strings.Trim(etag, `"`), "If-None-Match"},
		{"If-Match without quotes", strings.Trim(etag, `"`), "", "If-Match"},
		{"If-None-Match list", "", `"other-1", ` + etag, "If-None-Match"},
		{"If-Match list", etag + `, "other-1"`, "", "If-Match"},
		{"* in a list", "", `*, ` + etag, "If-None-Match"},
		{"a quote inside", `"a"b"`, "", "If-Match"},
		{"a space inside", `"a b"`, "", "If-Match"},
		{"lower-case weak", "", "w/" + etag, "If-None-Match"},
		{"5000 characters", long, "", "If-Match"},
		{"5000 characters, If-None-Match", "", long, "If-None-Match"},
	} {
		_, parseErr := jobs.ParsePreconditions(tc.ifMatch, tc.ifNoneMatch)
		var err *jobs.Error
		require.ErrorAs(t, parseErr, &err, tc.name)
		assert.Equal(t, jobs.CodeInvalidRequest, err.Code, tc.name)
		assert.Equal(t, tc.target, err.Target, tc.name)
		assert.Less(t, len(err.Message), 300, "%s: the message does not echo the header: %s", tc.name, err.Message)
	}
}
