// Package azurite starts Azurite, Microsoft's storage emulator, for tests:
// the queue service only, installed with npm into the user's cache on
// first use and started fresh for every test that asks for it.
package azurite

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/recurhq/recur/internal/filelock"
	"github.com/recurhq/recur/internal/freeport"
	"github.com/recurhq/recur/internal/syncbuf"
)

// Version is the Azurite release tests run: the last one that supports
// Node 20 (later ones need Node 22).
const Version = "3.35.0"

// Account and Key are Azurite's well-known development account, documented
// at https://learn.microsoft.com/azure/storage/common/storage-use-azurite.
const (
	Account = "devstoreaccount1"
	Key     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// startTimeout bounds how long Azurite may take to listen once installed.
const startTimeout = 60 * time.Second

// installOnce makes a test binary install (or find) Azurite once; the lock
// file makes the test binaries of several packages do it one at a time.
var installOnce = sync.OnceValues(install)

// Start runs Azurite's queue service on a free port of 127.0.0.1 with its
// data in a temporary directory, and stops it when t ends. It returns the
// queue endpoint in the form Activities.StorageQueueEndpoint takes
// (http://127.0.0.1:PORT/{account}), the account and its key. It skips
// only under go test -short, the quick path that installs nothing:
// otherwise a test that needs Azurite fails when it cannot have it.
func Start(t testing.TB) (endpoint, account, key string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: it needs Azurite")
	}
	script, err := installOnce()
	if err != nil {
		t.Fatalf("install azurite %s: %v", Version, err)
	}
	ports, err := freeport.Pick("127.0.0.1", 1)
	if err != nil {
		t.Fatalf("azurite: %v", err)
	}
	port := ports[0]
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	out := &syncbuf.Buffer{}
	cmd := exec.Command("node", script,
		"--queueHost", "127.0.0.1", "--queuePort", strconv.Itoa(port),
		"--location", t.TempDir(), "--disableTelemetry", "--skipApiVersionCheck", "--loose",
		// The access log would print request URLs, SAS tokens included.
		"--silent")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start azurite: %v", err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	if err := waitListening(addr, exited, &waitErr); err != nil {
		t.Fatalf("azurite on %s: %v\n%s", addr, err, out.String())
	}
	return "http://" + addr + "/{account}", Account, Key
}

// install installs Azurite under the user's cache directory unless it is
// there already, and returns the path of its queue service's script.
func install() (string, error) {
	queueScript := filepath.Join("node_modules", "azurite", "dist", "src", "queue", "main.js")
	dir, err := filelock.Install("recur-azurite", Version, func(dir string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", dir,
			"--no-audit", "--no-fund", "--no-update-notifier", "azurite@"+Version)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("npm install azurite@%s: %w\n%s", Version, err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, queueScript)); err != nil {
			return fmt.Errorf("npm installed azurite@%s without its queue service: %w", Version, err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, queueScript), nil
}

// waitListening waits until addr accepts connections, the process exits
// (with *waitErr) or startTimeout passes.
func waitListening(addr string, exited <-chan struct{}, waitErr *error) error {
	deadline := time.Now().Add(startTimeout)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return conn.Close()
		}
		select {
		case <-exited:
			return fmt.Errorf("azurite exited before listening: %v", *waitErr)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening after %s", startTimeout)
		}
	}
}
