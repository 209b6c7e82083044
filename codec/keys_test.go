package codec_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/codec"
)

func writeKeyFile(t *testing.T, mode os.FileMode, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.json")
	require.NoError(t, os.WriteFile(path, []byte(body), mode))
	require.NoError(t, os.Chmod(path, mode)) // whatever the umask
	return path
}

func b64(b byte) string {
	return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, codec.KeySize))
}

func TestLoadReadsTheIssuesFormat(t *testing.T) {
	path := writeKeyFile(t, 0o600, fmt.Sprintf(`{"current":"2026-11","keys":{"2026-11":%q,"2026-05":%q}}`, b64(1), b64(2)))
	k, err := codec.Load(path)
	require.NoError(t, err)
	require.Equal(t, "2026-11", k.Current())
	require.Equal(t, []string{"2026-05", "2026-11"}, k.IDs())
	require.NotContains(t, fmt.Sprintf("%v %+v %#v %s %v %+v", k, k, k, k, *k, *k), b64(1), "formatting shows IDs only")
}

func TestLoadNamesWhatIsWrongWithoutKeyMaterial(t *testing.T) {
	long := b64(3)
	for name, tc := range map[string]struct{ body, want string }{
		"not JSON":         {`current: a`, "want {"},
		"unknown field":    {`{"curent":"a","keys":{}}`, "unknown field"},
		"no keys":          {`{"current":"a","keys":{}}`, "no keys"},
		"current missing":  {fmt.Sprintf(`{"current":"b","keys":{"a":%q}}`, long), `current key "b" is not among the keys (["a"])`},
		"short key":        {`{"current":"a","keys":{"a":"c2hvcnQ="}}`, `key "a" is 5 bytes, want 32`},
		"not base64":       {`{"current":"a","keys":{"a":"!!!!"}}`, `key "a" is not standard base64`},
		"ID with a space":  {fmt.Sprintf(`{"current":"a b","keys":{"a b":%q}}`, long), "only letters, digits"},
		"ID too long":      {fmt.Sprintf(`{"current":"%[1]s","keys":{"%[1]s":%[2]q}}`, string(bytes.Repeat([]byte("x"), 65)), long), "1 to 64"},
		"key as a number":  {`{"current":"a","keys":{"a":12345}}`, "want {"},
		"current is empty": {fmt.Sprintf(`{"keys":{"a":%q}}`, long), `current key "" is not among the keys`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := codec.Load(writeKeyFile(t, 0o600, tc.body))
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), long)
		})
	}
	_, err := codec.Load(filepath.Join(t.TempDir(), "missing.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestLoadOrCreateMakesAPrivateFileOnceAndKeepsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "encryption-keys.json")
	k, created, err := codec.LoadOrCreate(path)
	require.NoError(t, err)
	require.True(t, created)
	require.Len(t, k.IDs(), 1)
	info, err := os.Stat(path)
	require.NoError(t, err)
	if runtime.GOOS != "windows" {
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	}

	again, created, err := codec.LoadOrCreate(path)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, k.Current(), again.Current())
	a, _ := k.MarshalJSON()
	b, _ := again.MarshalJSON()
	require.Equal(t, a, b, "the same key, not a new one")

	require.NoError(t, os.Chmod(path, 0o644))
	_, _, err = codec.LoadOrCreate(path)
	require.ErrorContains(t, err, "readable by its owner only", "an unsafe existing file is refused, not replaced")
}

func TestReplaceKeepsOldKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	k, err := codec.Generate()
	require.NoError(t, err)
	require.NoError(t, codec.Create(path, k))
	require.ErrorIs(t, codec.Create(path, k), os.ErrExist)
	rotated, err := k.WithNewKey(true)
	require.NoError(t, err)
	require.NoError(t, codec.Replace(path, rotated))
	got, err := codec.Load(path)
	require.NoError(t, err)
	require.Equal(t, rotated.Current(), got.Current())
	require.Contains(t, got.IDs(), k.Current())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left")
}
