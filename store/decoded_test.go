package store

import (
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"

	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/jobs"
)

// TestMemoViewsDecodeOncePerPayload: a memo decodes to what its payload
// says, whether its value was decoded before or not; a payload written
// anew, even with the same value, decodes again, and a key's value of
// another type is no answer.
func TestMemoViewsDecodeOncePerPayload(t *testing.T) {
	keys, err := codec.Generate()
	require.NoError(t, err)
	dc := codec.DataConverter(keys)
	s := &Store{converter: dc, decoded: newBounded[any](maxDecoded)}
	memo := func(uri string) *commonpb.Memo {
		t.Helper()
		job := jobs.Job{Name: "c/j", Properties: jobs.Properties{Action: &jobs.Action{
			ActionSpec: jobs.ActionSpec{Type: "Http", Request: &jobs.HTTPRequest{URI: uri, Method: "GET"}}}}}
		p, err := dc.ToPayload(jobs.JobView{Job: job})
		require.NoError(t, err)
		return &commonpb.Memo{Fields: map[string]*commonpb.Payload{jobs.MemoJob: p}}
	}
	uri := func(m *commonpb.Memo) string {
		t.Helper()
		var view jobs.JobView
		require.NoError(t, s.jobMemo(m, &view))
		return view.Job.Properties.Action.Request.URI
	}

	first, second := memo("http://127.0.0.1:1/first"), memo("http://127.0.0.1:1/second")
	require.Equal(t, "http://127.0.0.1:1/first", uri(first))
	require.Equal(t, "http://127.0.0.1:1/second", uri(second))
	require.Equal(t, "http://127.0.0.1:1/first", uri(first), "decoded before")
	require.Equal(t, 2, s.decoded.len())

	again := memo("http://127.0.0.1:1/first") // encrypted anew: other bytes
	require.NotEqual(t, payloadKey(first.Fields[jobs.MemoJob]), payloadKey(again.Fields[jobs.MemoJob]))
	require.Equal(t, "http://127.0.0.1:1/first", uri(again))
	require.Equal(t, 3, s.decoded.len())

	// The same payload's metadata is part of its key.
	p := first.Fields[jobs.MemoJob]
	other := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: p.Data}
	require.NotEqual(t, payloadKey(p), payloadKey(other))

	var names []string
	require.Error(t, decodeMemo(s, p, &names), "a job's view is no list of names")
}
