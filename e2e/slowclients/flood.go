package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"time"
)

// flood opens slow requests from 127.0.0.1 and notes how recur ends them.
type flood struct {
	addr string

	mu      sync.Mutex
	open    map[net.Conn]time.Time // connections recur has not closed, by when they connected
	closing bool                   // closeAll runs: what readers see now is our doing
	counts
}

// counts are the outcomes of the attempts so far.
type counts struct {
	attempted  int
	dialErrs   map[string]int // by error, port numbers left out
	resetEarly int            // reset while connecting or sending the request
	answered   map[string]int // closed after an answer, by status line
	silent     int            // closed or reset without an answer
	stillOpen  int
	maxOpen    int
	closedIn   []time.Duration // from connecting to recur closing, answered or not
}

func newFlood(addr string) *flood {
	return &flood{addr: addr, open: map[net.Conn]time.Time{},
		counts: counts{dialErrs: map[string]int{}, answered: map[string]int{}}}
}

// run makes n attempts, parallel at a time, and returns when all are made.
func (f *flood) run(ctx context.Context, n, parallel int) {
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		wg.Go(func() {
			defer func() { <-sem }()
			f.attempt()
		})
	}
	wg.Wait()
}

func (f *flood) attempt() {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", f.addr)
	if err == nil {
		_, err = fmt.Fprintf(c, "PUT /subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/slow?api-version=2016-03-01 HTTP/1.1\r\n"+
			"Host: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"p", f.addr)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempted++
	switch {
	case err != nil && errIsReset(err):
		f.resetEarly++
	case err != nil:
		f.dialErrs[dialError(err)]++
	}
	if err != nil {
		if c != nil {
			_ = c.Close()
		}
		return
	}
	f.open[c] = time.Now()
	f.maxOpen = max(f.maxOpen, len(f.open))
	go f.await(c)
}

// await reads c until recur closes it (or closeAll does).
func (f *flood) await(c net.Conn) {
	answer, _ := io.ReadAll(c)
	_ = c.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closing {
		return
	}
	f.closedIn = append(f.closedIn, time.Since(f.open[c]))
	delete(f.open, c)
	if status, _, ok := strings.Cut(string(answer), "\r\n"); ok {
		f.answered[status]++
	} else {
		f.silent++
	}
}

// snapshot returns the counts now.
func (f *flood) snapshot() counts {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.counts
	c.stillOpen = len(f.open)
	c.closedIn = append([]time.Duration(nil), f.closedIn...)
	return c
}

// closeAll closes the connections recur has not closed.
func (f *flood) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closing = true
	for c := range f.open {
		_ = c.Close()
	}
}

// dialError is err without the addresses, so that errors group.
func dialError(err error) string {
	if op, ok := err.(*net.OpError); ok {
		return op.Op + ": " + op.Err.Error()
	}
	return err.Error()
}

// percentiles returns p50, p99 and max of ds, or "-" for none.
func percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	ds = append([]time.Duration(nil), ds...)
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(q float64) time.Duration { return ds[int(q*float64(len(ds)-1))] }
	r := func(d time.Duration) time.Duration {
		if d < time.Second {
			return d.Round(100 * time.Microsecond)
		}
		return d.Round(10 * time.Millisecond)
	}
	return fmt.Sprintf("p50 %s, p99 %s, max %s", r(at(.5)), r(at(.99)), r(ds[len(ds)-1]))
}
