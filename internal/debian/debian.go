// Package debian installs the Debian packages tests need (Chromium,
// PostgreSQL, docker-compose) with apt-get, when they are missing and the
// tests run as root: one install at a time across test binaries, with the
// package lists updated when a first try fails (a fresh machine has none).
package debian

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/recurhq/recur/internal/filelock"
)

// Install makes sure Debian's package pkg is installed, as present says:
// it does nothing when present already answers true, and otherwise runs
// apt-get install as root, then asks present again. Without root it fails
// with the command to run.
func Install(ctx context.Context, pkg string, present func() bool) error {
	if present() {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("Debian's %s package is missing and the tests do not run as root, so they cannot install it: "+
			"run `apt-get install -y --no-install-recommends %s` as root", pkg, pkg)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("Debian's %s package is missing and there is no apt-get to install it with", pkg)
	}
	unlock, err := filelock.Lock(filepath.Join(os.TempDir(), "recur-apt-get.lock"))
	if err != nil {
		return fmt.Errorf("lock the install of %s: %w", pkg, err)
	}
	defer unlock()
	// Another test binary may have installed it while this one waited.
	if present() {
		return nil
	}
	install := []string{"install", "-y", "--no-install-recommends", pkg}
	if err := aptGet(ctx, install...); err != nil {
		if uerr := aptGet(ctx, "update"); uerr != nil {
			return fmt.Errorf("%w; then %w", err, uerr)
		}
		if err := aptGet(ctx, install...); err != nil {
			return err
		}
	}
	if !present() {
		return fmt.Errorf("apt-get installed %s, but what the tests need of it is still missing", pkg)
	}
	return nil
}

// aptGet runs apt-get without questions, waiting for a dpkg lock someone
// else's apt-get holds rather than failing at once.
func aptGet(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "apt-get", append([]string{"-q", "-o", "DPkg::Lock::Timeout=600"}, args...)...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Executable reports whether path is an executable file.
func Executable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}
