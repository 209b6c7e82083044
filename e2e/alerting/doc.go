// Package alerting tests the alert rules and the dashboard recur ships
// under docker/ against the real thing: Debian's Prometheus scraping a
// real `recur dev`, built from this tree. It has no non-test code.
package alerting
