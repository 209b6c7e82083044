package temporalcluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/recurhq/recur/internal/filelock"
)

// serverPackage is the main package of the server process.
const serverPackage = "github.com/recurhq/recur/internal/temporalcluster/temporal-server"

// BuildTimeout bounds one build of the server. Cold (the server's packages
// not in the build cache) it compiles the Temporal server: minutes on two
// busy cores. With the cache warm it links, in seconds; built, the binary
// is reused as long as its inputs are the same.
const BuildTimeout = 20 * time.Minute

var (
	buildMu sync.Mutex
	built   string // the binary, once serverBinary succeeded
)

// serverBinary returns the server built from this module, building it into
// the user's cache unless a build from the same inputs is there. The
// inputs are the toolchain, go.mod, go.sum and the main package's files:
// the main imports nothing of recur's, so nothing else of the module
// changes the binary.
func serverBinary(ctx context.Context) (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	if built != "" {
		return built, nil
	}
	key, err := buildKey(ctx)
	if err != nil {
		return "", fmt.Errorf("hash the server's inputs: %w", err)
	}
	dir, err := filelock.Install("recur-temporal-server", key, func(dir string) error {
		ctx, cancel := context.WithTimeout(ctx, BuildTimeout)
		defer cancel()
		// -s -w drop the symbol table and DWARF: a third of the binary's
		// size, and panics still print their stacks. No -trimpath: it
		// would miss the build cache recur's own builds fill.
		cmd := exec.CommandContext(ctx, "go", "build", "-ldflags=-s -w", "-o", filepath.Join(dir, "temporal-server"), serverPackage)
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w\n%s", serverPackage, err, out)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	touch(dir)
	removeUnused(dir)
	built = filepath.Join(dir, "temporal-server")
	return built, nil
}

// buildKey hashes what the server binary is built from.
func buildKey(ctx context.Context) (string, error) {
	out, err := goCommand(ctx, "list", "-f", "{{.Dir}}\n{{.Module.GoMod}}\n{{join .GoFiles \"\\n\"}}", serverPackage)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 {
		return "", fmt.Errorf("go list %s: unexpected output %q", serverPackage, out)
	}
	dir, gomod := lines[0], lines[1]
	files := []string{gomod, filepath.Join(filepath.Dir(gomod), "go.sum")}
	for _, name := range lines[2:] {
		files = append(files, filepath.Join(dir, name))
	}
	env, err := goCommand(ctx, "env", "GOVERSION", "GOOS", "GOARCH", "GOFLAGS", "CGO_ENABLED")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(env))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func goCommand(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}
