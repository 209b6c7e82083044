package main

import (
	"context"
	"flag"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recurhq/recur/internal/freeport"
	"github.com/recurhq/recur/internal/jaeger"
	"github.com/recurhq/recur/internal/recurtest"
)

var (
	binDir   string
	buildErr error
	build    sync.Once
)

// waitBound is how many of the package's parallel tests run at once: they
// wait on timers and on the processes they kill and restart
// (recurtest.ParallelUnlessGiven).
const waitBound = 6

func TestMain(m *testing.M) {
	recurtest.ParallelUnlessGiven(waitBound)
	flag.Parse()
	prebuildJaeger()
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// prebuildJaeger starts building Jaeger, which TestTracesReachJaeger runs,
// while the package's other tests run, when that test is to run: cold, the
// build takes minutes, which after the others would outlast go test's
// default timeout on a fresh machine. The test's own jaeger.Start waits for
// it (the install's file lock) and reports its error.
func prebuildJaeger() {
	if testing.Short() {
		return
	}
	if run := flag.Lookup("test.run").Value.String(); run != "" {
		top, _, _ := strings.Cut(run, "/")
		re, err := regexp.Compile(top)
		if err != nil || !re.MatchString("TestTracesReachJaeger") {
			return
		}
	}
	go func() { _, _ = jaeger.Install(context.Background()) }()
}

// buildRecur builds the real binary once per test run and returns its
// path. Under -short, the tests that run the binary are skipped: linking
// it alone takes longer than the quick path's budget.
func buildRecur(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: it builds and runs the recur binary")
	}
	build.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "recur-bin-")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "recur"), ".").CombinedOutput()
		if err != nil {
			buildErr = &buildError{out: string(out), err: err}
		}
	})
	require.NoError(t, buildErr)
	return filepath.Join(binDir, "recur")
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + e.out }

// freePort returns a port of 127.0.0.1 that was free a moment ago, below
// the kernel's ephemeral range: one the kernel hands out for ":0" may be
// taken by any outgoing connection before the process under test binds
// it.
func freePort(t *testing.T) int {
	t.Helper()
	ports, err := freeport.Pick("127.0.0.1", 1)
	require.NoError(t, err)
	return ports[0]
}

func listenOn(port int) (net.Listener, error) {
	return net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
}
