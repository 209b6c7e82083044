// Package standardwebhooks verifies signed calls with the Standard
// Webhooks specification's reference library (npm standardwebhooks), for
// tests that check recur's signatures against it: npm ci of the
// package-lock.json beside this file into the user's cache, once per
// machine, and a node process that runs the library's Webhook.verify on
// each call a test hands it.
package standardwebhooks

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recurhq/recur/internal/filelock"
)

// Version is the standardwebhooks release package.json pins.
const Version = "1.1.1"

var (
	//go:embed package.json
	manifest []byte
	//go:embed package-lock.json
	lock []byte
	//go:embed verify.js
	script []byte
)

// installOnce makes a test binary install (or find) the library once; the
// lock file of filelock.Install makes the test binaries of several
// packages do it one at a time.
var installOnce = sync.OnceValues(install)

// Verifier is a node process running the library. Its methods may be
// called from several goroutines.
type Verifier struct {
	mu  sync.Mutex
	in  io.Writer
	out *bufio.Scanner
}

// Start installs the library on first use and starts a Verifier that
// lives as long as t. It skips only under go test -short, the quick path
// that installs nothing: otherwise a test that needs the library fails
// when npm cannot install it.
func Start(t testing.TB) *Verifier {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: it needs the standardwebhooks library (npm)")
	}
	modules, err := installOnce()
	if err != nil {
		t.Fatalf("install standardwebhooks %s: %v", Version, err)
	}
	path := filepath.Join(t.TempDir(), "verify.js")
	if err := os.WriteFile(path, script, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", path)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node: %v", err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		cancel()
		_ = cmd.Wait()
	})
	return &Verifier{in: in, out: bufio.NewScanner(out)}
}

// Verify says whether the library verifies a call with header and body,
// arrived at now, with secret: nil when it does, its refusal otherwise.
func (v *Verifier) Verify(secret string, header http.Header, body []byte, now time.Time) error {
	headers := map[string]string{}
	for name := range header {
		headers[strings.ToLower(name)] = header.Get(name)
	}
	line, err := json.Marshal(map[string]any{"secret": secret, "headers": headers, "body": body, "now": now.Unix()})
	if err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, err := v.in.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("the verifier: %w", err)
	}
	if !v.out.Scan() {
		return fmt.Errorf("the verifier stopped: %v", v.out.Err())
	}
	var verdict struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(v.out.Bytes(), &verdict); err != nil {
		return fmt.Errorf("the verifier's answer %q: %w", v.out.Text(), err)
	}
	if !verdict.OK {
		return errors.New(verdict.Error)
	}
	return nil
}

// install installs the embedded manifest and lock (filelock.InstallNPM)
// and returns the node_modules directory.
func install() (string, error) {
	return filelock.InstallNPM("recur-standardwebhooks", Version, manifest, lock, "standardwebhooks/dist/index.js")
}
