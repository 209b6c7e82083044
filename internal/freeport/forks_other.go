//go:build !linux

package freeport

// holdForks does nothing where the net package may take syscall.ForkLock
// itself to create a socket: a read lock held here would deadlock against
// a waiting fork.
func holdForks() (release func()) { return func() {} }
