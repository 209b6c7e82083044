package filelock

import (
	"fmt"
	"os"
	"path/filepath"
)

// Install returns the directory <user cache>/name/version, having run
// install into it unless an earlier run did: a marker file records a
// finished install, and a lock in the directory makes a process that
// arrives during another's install wait for it instead of racing it.
func Install(name, version string, install func(dir string) error) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, name, version)
	marker := filepath.Join(dir, "installed")
	if _, err := os.Stat(marker); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := Lock(filepath.Join(dir, "install.lock"))
	if err != nil {
		return "", fmt.Errorf("lock %s: %w", dir, err)
	}
	defer unlock()
	// Another process may have installed it while this one waited.
	if _, err := os.Stat(marker); err == nil {
		return dir, nil
	}
	if err := install(dir); err != nil {
		return "", err
	}
	return dir, os.WriteFile(marker, []byte(version+"\n"), 0o644)
}
