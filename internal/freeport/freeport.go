// Package freeport picks TCP ports that nothing listens on, for servers
// that are told their ports before they bind them: the embedded Temporal
// server's internal services and the test cluster's processes.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
)

// Pick returns n distinct ports of host that are free now, chosen at random
// below the kernel's ephemeral port range where it can tell. A port the
// kernel hands out for ":0" is ephemeral: between the pick and the server's
// own bind, an outgoing connection of any process may take it. A random
// choice, rather than fixed offsets, keeps servers started at once by
// parallel tests apart.
func Pick(host string, n int) ([]int, error) {
	ports := make([]int, 0, n)
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	low, high := BelowEphemeral()
	// All are held open together so that no port is picked twice.
	for range n {
		l, err := listenFree(host, low, high)
		if err != nil {
			return nil, fmt.Errorf("pick a free port on %s: %w", host, err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// listenFree listens on a free port of [low, high) chosen at random, or
// on one the kernel picks when the range is empty or full.
func listenFree(host string, low, high int) (net.Listener, error) {
	for i := 0; low < high && i < 64; i++ {
		if l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(low+rand.IntN(high-low)))); err == nil {
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
