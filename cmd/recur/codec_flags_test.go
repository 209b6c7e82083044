package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/internal/syncbuf"
)

// testKeyFiles are the key files of the tests, by test name.
var testKeyFiles sync.Map

// testKeyFile returns the encryption key file of the test: every recur
// process a test starts gets the same one.
func testKeyFile(t *testing.T) string {
	t.Helper()
	if path, ok := testKeyFiles.Load(t.Name()); ok {
		return path.(string)
	}
	path := filepath.Join(t.TempDir(), "encryption-keys.json")
	_, _, err := codec.LoadOrCreate(path)
	require.NoError(t, err)
	testKeyFiles.Store(t.Name(), path)
	t.Cleanup(func() { testKeyFiles.Delete(t.Name()) })
	return path
}

// TestClusterRolesRefuseToStartWithoutAKeyFile: serve, worker and api
// need --encryption-key-file, or --insecure-no-encryption, and refuse a
// key file others can read; all before connecting to anything.
func TestClusterRolesRefuseToStartWithoutAKeyFile(t *testing.T) {
	t.Setenv("RECUR_ENCRYPTION_KEY_FILE", "")
	t.Setenv("RECUR_INSECURE_NO_ENCRYPTION", "")
	open := filepath.Join(t.TempDir(), "keys.json")
	k, err := codec.Generate()
	require.NoError(t, err)
	require.NoError(t, codec.Create(open, k))
	require.NoError(t, os.Chmod(open, 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"worker"}, "--encryption-key-file (RECUR_ENCRYPTION_KEY_FILE) is required"},
		{[]string{"serve"}, "or pass --insecure-no-encryption"},
		{[]string{"api"}, "recur keygen FILE"},
		{[]string{"worker", "--encryption-key-file", open}, "chmod 600 " + open},
		{[]string{"worker", "--encryption-key-file", filepath.Join(t.TempDir(), "missing.json")}, "no such file"},
		{[]string{"worker", "--encryption-key-file", testKeyFile(t), "--insecure-no-encryption"}, "exclude each other"},
	} {
		var stderr bytes.Buffer
		args := append(tc.args, "--temporal-address", "127.0.0.1:1")
		code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr)
		require.Equal(t, 2, code, "%v: %s", tc.args, stderr.String())
		require.Contains(t, stderr.String(), tc.want, tc.args)
	}
}

// TestInsecureNoEncryptionWarns: --insecure-no-encryption starts (here it
// gets as far as connecting) with a loud warning.
func TestInsecureNoEncryptionWarns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	code := run(ctx, []string{"worker", "--insecure-no-encryption", "--temporal-address", "127.0.0.1:" + strconv.Itoa(freePort(t))}, nil, &bytes.Buffer{}, &stderr)
	require.Equal(t, 1, code, stderr.String())
	require.Contains(t, stderr.String(), "ENCRYPTION IS OFF")
	require.Contains(t, stderr.String(), "connect to Temporal", "it went on to connect")
}

func TestKeygen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys.json")
	keygen := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"keygen"}, args...), nil, &stdout, &stderr)
		return code, strings.TrimSpace(stdout.String()), stderr.String()
	}
	code, first, stderr := keygen(path)
	require.Equal(t, 0, code, stderr)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	k, err := codec.Load(path)
	require.NoError(t, err)
	require.Equal(t, first, k.Current())

	code, _, stderr = keygen(path)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "file exists", "never overwrites a key file")

	code, added, stderr := keygen("--add", path)
	require.Equal(t, 0, code, stderr)
	k, err = codec.Load(path)
	require.NoError(t, err)
	require.Equal(t, first, k.Current(), "--add leaves the current key")
	require.ElementsMatch(t, []string{first, added}, k.IDs())

	code, rotated, stderr := keygen("--rotate", path)
	require.Equal(t, 0, code, stderr)
	k, err = codec.Load(path)
	require.NoError(t, err)
	require.Equal(t, rotated, k.Current(), "--rotate makes the new key current")
	require.ElementsMatch(t, []string{first, added, rotated}, k.IDs(), "old keys stay")

	code, printed, stderr := keygen()
	require.Equal(t, 0, code, stderr)
	k, err = codec.Parse([]byte(printed))
	require.NoError(t, err)
	require.Len(t, k.IDs(), 1)

	code, _, _ = keygen("--rotate")
	require.Equal(t, 2, code, "--rotate needs a file")
}

// TestDevEncryptsAtRest runs the real binary: recur dev creates its key
// file in the data directory, points its Web UI at the API's codec
// endpoint, and its SQLite database holds no secret of a job in clear.
// The same job with --insecure-no-encryption does show in the database:
// the scan can fail.
func TestDevEncryptsAtRest(t *testing.T) {
	bin := buildRecur(t)
	const password, sas = "dev-pa55word-e1b9", "sig=dev-SAS-s1gnature-4d2f"
	for _, encrypted := range []bool{true, false} {
		dataDir := t.TempDir()
		var extra []string
		if !encrypted {
			extra = append(extra, "--insecure-no-encryption")
		}
		p := launchDev(t, bin, dataDir, extra...)
		coll := "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c"
		status, body := p.do(t, http.MethodPut, coll, map[string]any{"properties": map[string]any{}})
		require.Equal(t, http.StatusCreated, status, body)
		status, body = p.do(t, http.MethodPut, coll+"/jobs/secret", map[string]any{"properties": map[string]any{
			"startTime": time.Now().UTC().Add(time.Hour).Format(time.RFC3339),
			"action": map[string]any{"type": "Http", "request": map[string]any{"uri": "https://example.com/hook?" + sas, "method": "POST",
				"authentication": map[string]any{"type": "Basic", "username": "user1", "password": password}}},
			"recurrence": map[string]any{"frequency": "Hour"},
		}})
		require.Equal(t, http.StatusCreated, status, body)
		status, body = p.do(t, http.MethodGet, coll+"/jobs/secret", nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body["properties"].(map[string]any)["action"].(map[string]any)["request"].(map[string]any)["uri"], sas,
			"the API reads the job back")

		if encrypted {
			checkDevCodec(t, p, dataDir)
		}
		p.stop(t, syscall.SIGTERM)
		found := dataDirContains(t, dataDir, password, sas)
		if encrypted {
			require.Empty(t, found, "secrets in clear in the data directory")
		} else {
			require.Len(t, found, 2, "without encryption both secrets are in the database: the scan works")
			require.NoFileExists(t, filepath.Join(dataDir, devKeyFile))
		}
	}
}

// launchDev starts recur dev on dataDir and free ports with extra flags.
func launchDev(t *testing.T, bin, dataDir string, extra ...string) *devProcess {
	t.Helper()
	apiPort, temporalPort, uiPort := freePort(t), freePort(t), freePort(t)
	p := &devProcess{
		api:    "http://127.0.0.1:" + strconv.Itoa(apiPort),
		ui:     "http://127.0.0.1:" + strconv.Itoa(uiPort),
		output: &syncbuf.Buffer{},
		done:   make(chan error, 1),
	}
	p.start(t, bin, append([]string{"dev", "--data-dir", dataDir, "--http-addr", "127.0.0.1:" + strconv.Itoa(apiPort),
		"--temporal-port", strconv.Itoa(temporalPort), "--ui-port", strconv.Itoa(uiPort)}, extra...)...)
	return p
}

// checkDevCodec checks the key file recur dev made and that its Web UI
// decodes through the API's /codec, which lets the UI's origin in.
func checkDevCodec(t *testing.T, p *devProcess, dataDir string) {
	t.Helper()
	keyFile := filepath.Join(dataDir, devKeyFile)
	info, err := os.Stat(keyFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	require.Contains(t, p.output.String(), "created the encryption key file")
	require.Contains(t, p.output.String(), keyFile)

	resp, err := http.Get(p.ui + "/api/v1/settings")
	require.NoError(t, err)
	var settings struct{ Codec struct{ Endpoint string } }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&settings))
	resp.Body.Close()
	require.Equal(t, p.api+"/codec", settings.Codec.Endpoint)

	req, err := http.NewRequest(http.MethodOptions, settings.Codec.Endpoint+"/decode", nil)
	require.NoError(t, err)
	req.Header.Set("Origin", p.ui)
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.Equal(t, p.ui, resp.Header.Get("Access-Control-Allow-Origin"))
}

// dataDirContains returns which of secrets some file under dir holds.
func dataDirContains(t *testing.T, dir string, secrets ...string) []string {
	t.Helper()
	found := map[string]bool{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				found[s] = true
			}
		}
		return nil
	}))
	var out []string
	for _, s := range secrets {
		if found[s] {
			out = append(out, s)
		}
	}
	return out
}
