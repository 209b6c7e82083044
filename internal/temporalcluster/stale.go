package temporalcluster

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ownerFile, in a cluster's directory, holds the PID of the process that
// launched the cluster.
const ownerFile = "owner.pid"

// clusterDirPattern names the clusters' directories in os.TempDir().
const clusterDirPattern = "recur-cluster-"

// makeClusterDir creates a cluster's directory, after removing those of
// clusters whose process died without its cleanup (a test binary killed
// by its timeout): their servers died with it (see sysProcAttr), their
// data, tens of megabytes each, did not.
func makeClusterDir() (string, error) {
	removeOrphans()
	dir, err := os.MkdirTemp("", clusterDirPattern)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

func removeOrphans() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), clusterDirPattern+"*"))
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			// Being created, or not ours.
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err == nil && pid > 0 && !alive(pid) {
			_ = os.RemoveAll(dir)
		}
	}
}

// unusedFor is how long a built server binary nobody ran is kept.
const unusedFor = 7 * 24 * time.Hour

// touch records that the binary in dir is in use; removeUnused keeps it.
func touch(dir string) {
	now := time.Now()
	_ = os.Chtimes(filepath.Join(dir, "installed"), now, now)
}

// removeUnused removes the binaries, other than keep's, that no test ran
// for unusedFor: each change to go.sum or the server's main builds a new
// one of 150 MB.
func removeUnused(keep string) {
	dirs, _ := filepath.Glob(filepath.Join(filepath.Dir(keep), "*"))
	for _, dir := range dirs {
		if dir == keep {
			continue
		}
		info, err := os.Stat(filepath.Join(dir, "installed"))
		if err == nil && time.Since(info.ModTime()) > unusedFor {
			_ = os.RemoveAll(dir)
		}
	}
}
