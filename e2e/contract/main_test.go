package contract

import (
	"flag"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"testing"
)

// pending names the operations of the contract the API does not implement
// yet, with what is missing. An operation listed here must not be covered
// (TestPendingOperationsProbe calls each one, so implementing it makes the
// run fail until it leaves this list and gets a real test); an operation
// not listed must be covered by a conforming answer.
var pending = map[string]string{}

// TestMain runs the tests, stops the shared stack, then checks operation
// coverage over everything the recorder saw in this run. The check runs
// only when every test ran: with -run or -skip some operations are
// legitimately unexercised.
func TestMain(m *testing.M) {
	flag.Parse()
	sp, err := loadSpec(specPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	contractSpec = sp
	rec = &recorder{next: http.DefaultTransport, spec: sp}
	code := m.Run()
	if sharedStack != nil {
		sharedStack.stop()
	}
	if filtered() {
		fmt.Println("contract coverage: not checked (-run, -skip or -list given)")
		os.Exit(code)
	}
	if problems := coverageProblems(contractSpec.ops, rec.covered(), pending); len(problems) > 0 {
		fmt.Println("--- FAIL: contract coverage")
		for _, p := range problems {
			fmt.Println("    " + p)
		}
		fmt.Println("FAIL")
		code = 1
	} else {
		fmt.Printf("contract coverage: %d operations covered, %d pending\n", len(contractSpec.ops)-len(pending), len(pending))
	}
	os.Exit(code)
}

func filtered() bool {
	for _, name := range []string{"test.run", "test.skip", "test.list"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return true
		}
	}
	return false
}

// coverageProblems returns one line for each operation that is neither
// covered nor pending, each pending operation that is covered, and each
// pending name that is no operation of the contract.
func coverageProblems(ops []*operation, covered map[string]bool, pending map[string]string) []string {
	var out []string
	known := map[string]bool{}
	for _, op := range ops {
		known[op.ID] = true
		_, isPending := pending[op.ID]
		switch {
		case covered[op.ID] && isPending:
			out = append(out, fmt.Sprintf("%s: covered now; remove it from pending and give it a real test", op))
		case !covered[op.ID] && !isPending:
			out = append(out, fmt.Sprintf("%s: no conforming 2xx answer in this run and not pending", op))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(pending)) {
		if !known[id] {
			out = append(out, fmt.Sprintf("%s: pending but not an operation of the contract", id))
		}
	}
	return out
}
