// Package freeport picks TCP ports that nothing listens on, for servers
// that are told their ports before they bind them: the embedded Temporal
// server's internal services and the test cluster's processes.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/recurhq/recur/internal/filelock"
)

// Pick returns n distinct ports of host that are free now, chosen at random
// below the kernel's ephemeral port range where it can tell. A port the
// kernel hands out for ":0" is ephemeral: between the pick and the server's
// own bind, an outgoing connection of any process may take it. A random
// choice keeps servers started at once by parallel tests apart, and the
// picks of the last reserveFor, by any of the user's processes, are not
// picked again: a port is free from its pick until its server binds it,
// and another pick in that time (a test's beside it, or a second recur
// dev's) could take it.
func Pick(host string, n int) ([]int, error) {
	// The reservations coordinate; without their file, a pick is still free.
	path, err := picksPath()
	if err == nil {
		if unlock, err := filelock.Lock(path + ".lock"); err == nil {
			defer unlock()
		}
	}
	now := time.Now()
	recent := readPicks(path, now, processRuns)
	ports := make([]int, 0, n)
	// A process this one starts while a probe listens holds a copy of the
	// probe until its exec, and the port stays taken for that moment after
	// Pick returns: no process starts while the probes are open.
	release := holdForks()
	defer release()
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	low, high := BelowEphemeral()
	// All are held open together so that no port is picked twice.
	for range n {
		l, err := listenFree(host, low, high, recent)
		if err != nil {
			return nil, fmt.Errorf("pick a free port on %s: %w", host, err)
		}
		listeners = append(listeners, l)
		port := l.Addr().(*net.TCPAddr).Port
		ports = append(ports, port)
		recent[port] = pick{at: now, pid: os.Getpid()}
	}
	if path != "" {
		writePicks(path, recent)
	}
	return ports, nil
}

// reserveFor is how long a picked port is kept from other picks when its
// process is gone or cannot be seen: longer than a server takes to bind
// the ports it was given, for a server the picker started and left.
const reserveFor = 2 * time.Minute

// holdAtMost bounds how long a live process keeps its picks: a pick whose
// process ended long ago cannot be held forever by another process that
// happens to reuse its ID.
const holdAtMost = time.Hour

// pick is a port's reservation: when it was picked, and by which process.
type pick struct {
	at  time.Time
	pid int
}

// picksPath is the file of the ports the user's processes picked, a
// "port unix-nanoseconds pid" line each: in the user's cache, where no
// other user can plant a link for a write to follow, as in a shared
// temporary directory.
func picksPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "recur")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return filepath.Join(dir, "freeport-picks"), nil
}

// readPicks returns the reservations of the file at path that still hold
// at now: those made within reserveFor and, within holdAtMost, those whose
// process still runs (runs). None when path is "".
func readPicks(path string, now time.Time, runs func(pid int) bool) map[int]pick {
	picks := map[int]pick{}
	if path == "" {
		return picks
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return picks
	}
	seen := map[int]bool{} // runs is asked once a process, which may hold many picks
	runsNow := func(pid int) bool {
		r, ok := seen[pid]
		if !ok {
			r = runs(pid)
			seen[pid] = r
		}
		return r
	}
	for line := range strings.Lines(string(data)) {
		var port, pid int
		var at int64
		// A line of two fields, without its process, holds reserveFor.
		if n, _ := fmt.Sscan(line, &port, &at, &pid); n < 2 {
			continue
		}
		p := pick{at: time.Unix(0, at), pid: pid}
		age := now.Sub(p.at)
		if age < reserveFor || (age < holdAtMost && pid > 0 && runsNow(pid)) {
			picks[port] = p
		}
	}
	return picks
}

// processRuns says whether the process pid runs: on Unix, whether a
// signal could be sent to it. Where it cannot tell, it says no.
func processRuns(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// writePicks replaces the file at path with picks, best effort.
func writePicks(path string, picks map[int]pick) {
	var b strings.Builder
	for port, p := range picks {
		fmt.Fprintf(&b, "%d %d %d\n", port, p.at.UnixNano(), p.pid)
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil && cerr == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
}

// listenFree listens on a free port of [low, high) chosen at random, not
// one of taken, or on one the kernel picks when the range is empty or full.
func listenFree(host string, low, high int, taken map[int]pick) (net.Listener, error) {
	for i := 0; low < high && i < 64; i++ {
		port := low + rand.IntN(high-low)
		if _, ok := taken[port]; ok {
			continue
		}
		if l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port))); err == nil {
			return l, nil
		}
	}
	return net.Listen("tcp", net.JoinHostPort(host, "0"))
}

// BelowEphemeral is the range of ports [low, high) under Linux's ephemeral
// ports, or an empty one when they cannot be read or start too low to
// leave room.
func BelowEphemeral() (low, high int) {
	const floor = 10000
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	var first, last int
	if _, err := fmt.Sscan(string(data), &first, &last); err != nil || first < floor+1000 {
		return 0, 0
	}
	return floor, first
}
