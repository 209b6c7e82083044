package recurtest

import (
	"flag"
	"strconv"
)

// ParallelUnlessGiven has go test run up to n of a package's parallel
// tests at once unless its command line says how many (-parallel): for a
// package whose parallel tests spend their minutes waiting on timers (an
// occurrence falling due, a lease running out, a process restarting), not
// on the CPU: go test's default, one test a core, runs them nearly one
// after another on two cores, and a package of them nears go test's
// timeout. A TestMain calls it before m.Run.
func ParallelUnlessGiven(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
			panic(err)
		}
	}
}
