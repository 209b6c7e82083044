package recurproc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLogLevelsReadJSONAndText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "recur.log")
	require.NoError(t, os.WriteFile(path, []byte(`{"time":"2026-11-21T10:00:00Z","level":"WARN","msg":"slow \"task\"","jobId":"job:s/rg/c/j"}
{"time":"2026-11-21T10:00:01Z","level":"ERROR","msg":"boom"}
{"time":"2026-11-21T10:00:02Z","level":"INFO","msg":"level=WARN in a message"}
time=2026-11-21T10:00:03Z level=WARN msg="slow \"task\"" jobId=job:s/rg/c/j
time=2026-11-21T10:00:04Z level=ERROR msg=boom
time=2026-11-21T10:00:05Z level=INFO msg=fine
not a log line
`), 0o600))
	warn, errs := (&Process{LogPath: path}).LogLevels()
	require.Equal(t, map[string]int{`slow "task"`: 2}, warn)
	require.Equal(t, map[string]int{"boom": 2}, errs)
}
