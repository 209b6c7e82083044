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
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
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

// install runs npm ci of the embedded manifest and lock under the user's
// cache directory unless it ran there already, and returns the
// node_modules directory. The directory is named after the lock's digest
// too: a changed lock installs anew instead of reusing another tree.
func install() (string, error) {
	sum := sha256.Sum256(lock)
	version := Version + "-" + hex.EncodeToString(sum[:6])
	dir, err := filelock.Install("recur-standardwebhooks", version, func(dir string) error {
		for name, data := range map[string][]byte{"package.json": manifest, "package-lock.json": lock} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				return err
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		// --prefer-offline takes what npm's cache holds, checked against
		// the lock's integrity hashes, without asking the registry; the
		// library's tree needs no build step.
		cmd := exec.CommandContext(ctx, "npm", "ci", "--prefix", dir, "--prefer-offline", "--ignore-scripts",
			"--no-audit", "--no-fund", "--no-update-notifier")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("npm ci: %w\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks", "dist", "index.js")); err != nil {
			return fmt.Errorf("npm ci installed no standardwebhooks: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "node_modules"), nil
}
