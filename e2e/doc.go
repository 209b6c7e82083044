// Package e2e holds recur's end-to-end tests: a real Temporal server in
// process, the real worker, the real router behind httptest and real HTTP
// targets. It has no non-test code.
package e2e
