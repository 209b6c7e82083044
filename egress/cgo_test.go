//go:build cgo

package egress_test

// cgoEnabled says whether the test binary has the cgo (glibc) resolver.
const cgoEnabled = true
