package filelock_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/filelock"
)

// TestLockExcludes: a second Lock of the same file waits until the first
// is released.
func TestLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "install.lock")
	unlock, err := filelock.Lock(path)
	require.NoError(t, err)
	second := make(chan func())
	go func() {
		u, err := filelock.Lock(path)
		if err != nil {
			t.Error(err)
			u = func() {}
		}
		second <- u
	}()
	select {
	case <-second:
		t.Fatal("the second Lock did not wait for the first")
	case <-time.After(300 * time.Millisecond):
	}
	unlock()
	select {
	case u := <-second:
		u()
	case <-time.After(10 * time.Second):
		t.Fatal("the second Lock never got the lock")
	}
}
