// Package temporalcli tests recur with Temporal's own CLI, `temporal`,
// as an operator would use it: installed with go install on first use
// (minutes, cold), then run against a recur in process. It has no
// non-test code, and is a package of its own so that its test binary has
// go test's whole -timeout for a cold install.
package temporalcli
