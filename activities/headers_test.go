package activities

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHeadersOfNoteKeepOnlyWhatHistoryNeeds(t *testing.T) {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Location", "https://example.com/reports/42")
	h.Set("Set-Cookie", "session=secret")
	h.Set("Retry-After", "120")
	require.Equal(t, "Content-Type: application/json; Location: https://example.com/reports/42; Retry-After: 120", headersOfNote(h))
	require.Empty(t, headersOfNote(http.Header{"X-Other": {"1"}}))
}
