package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/recurhq/recur/internal/recurproc"
)

// memory is recur's memory at one moment.
type memory struct {
	rss       int   // recur's, kB
	serverRSS int   // the Temporal server process's on a cluster, kB
	heapInuse int64 // bytes, go_memstats_heap_inuse_bytes of /metrics (no GC forced); -1 unknown
	heapGC    int64 // bytes, HeapInuse right after the GC of the heap profile; -1 without -profile
}

// sampleMemory reads recur's RSS and heap; with -profile it also saves the
// heap profile as label.heap.pprof (gc=1) and label.heap.txt (its text
// form, which ends with the runtime's MemStats).
func (s *phase) sampleMemory(ctx context.Context, label string) memory {
	m := memory{rss: s.dep.RSS(), serverRSS: -1, heapInuse: -1, heapGC: -1}
	if s.dep.Cluster != nil {
		m.serverRSS = recurproc.RSSOf(s.dep.Cluster.Server.PID())
	}
	if v, err := s.metric(ctx, "go_memstats_heap_inuse_bytes"); err == nil {
		m.heapInuse = v
	} else {
		log.Printf("memory %s: %v", label, err)
	}
	if s.cfg.profile == "" {
		return m
	}
	base := filepath.Join(s.cfg.profile, label+".heap")
	err := s.dep.Profile(ctx, "heap", "gc=1", base+".pprof")
	if err == nil {
		err = s.dep.Profile(ctx, "heap", "gc=1&debug=1", base+".txt")
	}
	if err == nil {
		m.heapGC, err = memStat(base+".txt", "HeapInuse")
	}
	if err != nil {
		log.Printf("memory %s: %v", label, err)
	}
	return m
}

// metric reads one unlabelled series of recur's /metrics.
func (s *phase) metric(ctx context.Context, name string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.dep.API+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := s.api.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("get /metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("get /metrics: %s", resp.Status)
	}
	return scanValue(bufio.NewScanner(resp.Body), name+" ")
}

// memStat reads "# name = value" from a heap profile in text form.
func memStat(path, name string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return scanValue(sc, "# "+name+" = ")
}

// scanValue returns the number after prefix on the first line that
// starts with it.
func scanValue(sc *bufio.Scanner, prefix string) (int64, error) {
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", strings.TrimSpace(prefix), err)
			}
			return int64(v), nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New(strings.TrimSpace(prefix) + " not found")
}

// perJob says (v - base) / n in KiB, or "?" when either is unknown.
func perJob(v, base int64, n int) string {
	if v < 0 || base < 0 || n == 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f KiB", float64(v-base)/1024/float64(n))
}
