package freeport

import "syscall"

// holdForks keeps this process from starting others until release: Go
// starts a process holding syscall.ForkLock for writing until its exec
// has closed the descriptors marked close-on-exec, which on Linux all of
// the net package's sockets are, created without the lock.
func holdForks() (release func()) {
	syscall.ForkLock.RLock()
	return syscall.ForkLock.RUnlock
}
