//go:build !unix

package filelock

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// Lock takes the lock at path by creating the file, waiting while another
// process holds it; a lock older than staleLock is taken as abandoned.
func Lock(path string) (unlock func(), err error) {
	const staleLock = 15 * time.Minute
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return func() { _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if info, err := os.Stat(path); err == nil && time.Since(info.ModTime()) > staleLock {
			_ = os.Remove(path)
			continue
		}
		time.Sleep(time.Second)
	}
}
