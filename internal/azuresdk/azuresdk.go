// Package azuresdk installs Azure's Node SDK for Scheduler
// (azure-arm-scheduler, with ms-rest and ms-rest-azure) for tests that
// drive recur with it: npm ci of the package-lock.json beside this file
// into the user's cache, once per machine, so that every run drives the
// same code byte for byte.
package azuresdk

import (
	"context"
	_ "embed"
	"os"
	"os/exec"
	"sync"
	"testing"

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

// install installs the embedded manifest and lock (filelock.InstallNPM)
// and returns the node_modules directory.
func install() (string, error) {
	return filelock.InstallNPM("recur-azuresdk", Version, manifest, lock, "azure-arm-scheduler/lib/schedulerManagementClient.js")
}
