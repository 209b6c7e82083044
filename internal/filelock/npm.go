package filelock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// InstallNPM runs npm ci of a package.json and its package-lock.json under
// the user's cache directory (Install's name and version) unless it ran
// there already, and returns the node_modules directory; want, a path
// under node_modules, proves the install. The directory is named after
// the lock's digest too: a changed lock installs anew instead of reusing
// another tree.
func InstallNPM(name, version string, manifest, lock []byte, want string) (string, error) {
	sum := sha256.Sum256(lock)
	dir, err := Install(name, version+"-"+hex.EncodeToString(sum[:6]), func(dir string) error {
		for file, data := range map[string][]byte{"package.json": manifest, "package-lock.json": lock} {
			if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
				return err
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		// --prefer-offline takes what npm's cache holds, checked against
		// the lock's integrity hashes, without asking the registry;
		// --ignore-scripts because the trees installed need no build step.
		cmd := exec.CommandContext(ctx, "npm", "ci", "--prefix", dir, "--prefer-offline", "--ignore-scripts",
			"--no-audit", "--no-fund", "--no-update-notifier")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("npm ci: %w\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "node_modules", want)); err != nil {
			return fmt.Errorf("npm ci installed no %s: %w", want, err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "node_modules"), nil
}
