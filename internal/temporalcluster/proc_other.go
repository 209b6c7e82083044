//go:build !linux

package temporalcluster

import "syscall"

// sysProcAttr is nil off Linux: children run as this process, and outlive
// it if it dies without its cleanup. Only Linux has a PostgreSQL user to
// switch to (the Debian package's).
func sysProcAttr(*account, syscall.Signal) *syscall.SysProcAttr { return nil }

// alive is true off Linux: without /proc to tell a zombie, a cluster's
// directory is kept rather than removed under a live test.
func alive(int) bool { return true }
