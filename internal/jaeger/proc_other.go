//go:build !linux

package jaeger

import "syscall"

// sysProcAttr is nothing where a child cannot be tied to its parent's
// life.
func sysProcAttr() *syscall.SysProcAttr { return nil }
