package migrate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBudgetBoundsFilesTogether reads files each within its limit until
// they are, together, past the import's: that one is refused, and only
// the files read are recorded.
func TestBudgetBoundsFilesTogether(t *testing.T) {
	dir := t.TempDir()
	b := NewBudget(Limits{TotalBytes: 10})
	for i, content := range []string{"abcd", "efgh", "ijkl"} {
		path := filepath.Join(dir, string(rune('a'+i))+".tf")
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		data, err := b.ReadFile(path, 8, "8 bytes for a file")
		if i < 2 {
			require.NoError(t, err)
			require.Equal(t, content, string(data))
			continue
		}
		require.EqualError(t, err, "the files read, with "+path+", are larger than 10 bytes together: over recur import's limit of 10 bytes for all the files of an import")
	}
	require.Equal(t, []string{filepath.Join(dir, "a.tf"), filepath.Join(dir, "b.tf")}, b.Files())

	_, err := b.Read("pipe", strings.NewReader("0123456789"), 1, "1 byte for a file")
	require.EqualError(t, err, "pipe is larger than 1 byte: over recur import's limit of 1 byte for a file")
}

func TestSizeAndValueSize(t *testing.T) {
	require.Equal(t, "4 MiB", Size(4<<20))
	require.Equal(t, "1.5 MiB", Size(3<<19))
	require.Equal(t, "64 KiB", Size(64<<10))
	require.Equal(t, "100 bytes", Size(100))
	for _, v := range []any{map[string]any{"a": []any{"xy", int64(1), nil, true}}, map[string]string{"k": "v"}, []int64{1, 22, 333}, "s"} {
		data, err := json.Marshal(v)
		require.NoError(t, err)
		require.GreaterOrEqual(t, ValueSize(v, 1000), len(data), "%s: never less than the JSON", data)
	}
	shared := strings.Repeat("x", 1000)
	require.Less(t, ValueSize(make([]any, 1_000_000), 10), 100, "counts no further than past the limit")
	require.Greater(t, ValueSize([]any{shared, shared}, 10000), 2000, "a value shared counts each time")
}
