//go:build unix

package codec_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/codec"
)

// Mode bits exist on unix only; Windows has none to check.

func TestLoadRefusesAKeyFileOthersCanRead(t *testing.T) {
	body := fmt.Sprintf(`{"current":"a","keys":{"a":%q}}`, b64(1))
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660, 0o602} {
		path := writeKeyFile(t, mode, body)
		_, err := codec.Load(path)
		require.ErrorContains(t, err, fmt.Sprintf("mode %04o", mode))
		require.ErrorContains(t, err, "chmod 600 "+path)
	}
	for _, mode := range []os.FileMode{0o600, 0o400} {
		_, err := codec.Load(writeKeyFile(t, mode, body))
		require.NoError(t, err, "mode %04o", mode)
	}
	_, err := codec.Load(t.TempDir())
	require.ErrorContains(t, err, "not a regular file")
}
