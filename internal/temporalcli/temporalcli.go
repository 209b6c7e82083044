// Package temporalcli gives tests Temporal's own command-line tool,
// `temporal`: installed with `go install` into the user's cache on first
// use, one install at a time across test binaries, then run as a
// subprocess against a recur.
package temporalcli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/recurhq/recur/internal/filelock"
)

// Version is the CLI release tests run. Later ones (v1.9.1, the newest on
// the module proxy) cannot be installed with `go install ...@version`:
// their go.mod replaces github.com/temporalio/cli/cliext with a directory
// of the repository, a module that is on no proxy. v1.5.1 needs Go 1.25.
const Version = "v1.5.1"

// Package is what `go install` builds.
const Package = "github.com/temporalio/cli/cmd/temporal"

// InstallTimeout bounds one install. Cold (nothing in the module and build
// caches) it downloads 160 modules and compiles a Temporal server and UI
// server into the CLI: 8 minutes measured on two cores under load. With
// the build cache warm it takes seconds; installed, nothing runs.
const InstallTimeout = 20 * time.Minute

var (
	mu        sync.Mutex
	installed string // the binary, once Install succeeded
)

// Install returns the path of the temporal CLI, installing it first if the
// cache does not have it; ctx bounds the install (and InstallTimeout). It
// never skips: without the CLI it fails. An install cut short loses little:
// the build cache keeps what was compiled.
func Install(ctx context.Context) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if installed != "" {
		return installed, nil
	}
	bin, err := install(ctx)
	if err == nil {
		installed = bin
	}
	return bin, err
}

// install runs `go install Package@Version` with GOBIN in the cache
// directory, under a file lock, unless the binary is there already.
func install(ctx context.Context) (string, error) {
	dir, err := filelock.Install("recur-temporal-cli", Version, func(dir string) error {
		ctx, cancel := context.WithTimeout(ctx, InstallTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "install", Package+"@"+Version)
		// Outside recur's module, with the toolchain at hand: a newer one is
		// never downloaded behind the test's back.
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOBIN="+filepath.Join(dir, "bin"), "GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go install %s@%s: %w\n%s", Package, Version, err, out)
		}
		// `temporal --version` of a go install says 0.0.0-DEV (releases set
		// it with -ldflags); the build information names the module's version.
		bin := filepath.Join(dir, "bin", "temporal")
		out, err := exec.CommandContext(ctx, "go", "version", "-m", bin).CombinedOutput()
		if err != nil {
			return fmt.Errorf("go version -m %s: %w\n%s", bin, err, out)
		}
		if want := "\tgithub.com/temporalio/cli\t" + Version + "\t"; !strings.Contains(string(out), want) {
			return fmt.Errorf("%s is not github.com/temporalio/cli %s:\n%s", bin, Version, out)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "bin", "temporal"), nil
}

// Run runs the CLI with args and returns its stdout; an exit status other
// than 0 is an error carrying stderr.
func Run(ctx context.Context, args ...string) ([]byte, error) {
	bin, err := Install(ctx)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = cleanEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("temporal %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// cleanEnv is the environment without the TEMPORAL_ variables and with an
// empty config file, so that nothing of the machine's user points the CLI
// at another server; tests pass --address and --namespace.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TEMPORAL_") {
			env = append(env, kv)
		}
	}
	return append(env, "TEMPORAL_CONFIG_FILE="+os.DevNull)
}
