package jaeger

import "syscall"

// sysProcAttr kills Jaeger with the process that started it: a test
// binary killed by its timeout leaves no Jaeger behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
