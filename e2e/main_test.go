package e2e

import (
	"os"
	"testing"

	"github.com/recurhq/recur/internal/recurtest"
)

// waitBound is how many of the package's parallel tests run at once: they
// wait on timers (recurtest.ParallelUnlessGiven).
const waitBound = 6

func TestMain(m *testing.M) {
	recurtest.ParallelUnlessGiven(waitBound)
	os.Exit(m.Run())
}
