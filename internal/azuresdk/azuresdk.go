// Package azuresdk installs Azure's Node SDK for Scheduler
// (azure-arm-scheduler, with ms-rest and ms-rest-azure) for tests that
// drive recur with it: npm ci of the package-lock.json beside this file
// into the user's cache, once per machine, so that every run drives the
// same code byte for byte.
package azuresdk

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/recurhq/recur/internal/filelock"
)

// Version is the azure-arm-scheduler release package.json pins: the last
// one published (Azure's later @azure/arm-scheduler never reached npm).
// It sends api-version 2016-03-01, the one recur answers.
const Version = "1.2.0-preview"

// The manifest and lock npm ci installs from; the lock pins every
// package of the tree with its integrity hash.
var (
	//go:embed package.json
	manifest []byte
	//go:embed package-lock.json
	lock []byte
)

// installOnce makes a test binary install (or find) the SDK once; the
// lock file of filelock.Install makes the test binaries of several
// packages do it one at a time.
var installOnce = sync.OnceValues(install)

// Modules returns the node_modules directory that holds the SDK, for
// NODE_PATH, installing it on first use. It skips only under go test
// -short, the quick path that installs nothing: otherwise a test that
// needs the SDK fails when npm cannot install it.
func Modules(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: it needs Azure's Node SDK (npm)")
	}
	dir, err := installOnce()
	if err != nil {
		t.Fatalf("install azure-arm-scheduler %s: %v", Version, err)
	}
	return dir
}

// Command returns node running script with args, able to require the SDK
// (azure-arm-scheduler, ms-rest, ms-rest-azure) from wherever the script
// is; ctx kills it.
func Command(ctx context.Context, t testing.TB, script string, args ...string) *exec.Cmd {
	t.Helper()
	modules := Modules(t)
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	return cmd
}

// install runs npm ci of the embedded manifest and lock under the user's
// cache directory unless it ran there already, and returns the
// node_modules directory. The directory is named after the lock's digest
// too: a changed lock installs anew instead of reusing another tree.
func install() (string, error) {
	sum := sha256.Sum256(lock)
	version := Version + "-" + hex.EncodeToString(sum[:6])
	dir, err := filelock.Install("recur-azuresdk", version, func(dir string) error {
		for name, data := range map[string][]byte{"package.json": manifest, "package-lock.json": lock} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				return err
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		// --prefer-offline takes what npm's cache holds, checked against
		// the lock's integrity hashes, without asking the registry;
		// --ignore-scripts because the SDK's tree needs no build step.
		cmd := exec.CommandContext(ctx, "npm", "ci", "--prefix", dir, "--prefer-offline", "--ignore-scripts",
			"--no-audit", "--no-fund", "--no-update-notifier")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("npm ci: %w\n%s", err, out)
		}
		client := filepath.Join(dir, "node_modules", "azure-arm-scheduler", "lib", "schedulerManagementClient.js")
		if _, err := os.Stat(client); err != nil {
			return fmt.Errorf("npm ci installed no azure-arm-scheduler: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "node_modules"), nil
}
