// Command slowclients is a hostile client's probe against one
// `recur dev`: it attempts many connections from 127.0.0.1 that each send
// a PUT announcing 1000 bytes of body and 3 of them, keeps each until
// recur closes it, and meanwhile asks /healthz from 127.0.0.2 (another
// client address) four times a second, from a process of its own so that
// its file descriptors are not the flood's. It reports how recur ended the
// connections, how many were still open 5, 10, 15 and 20 s after the last
// attempt, /healthz's latency and failures, recur's file descriptors, and
// whether recur and its embedded Temporal server came through.
//
// It is a bench command, not a test; run it from the repository root:
//
//	go run ./e2e/slowclients -conns 20000
//	go run ./e2e/slowclients -bin /tmp/recur-old   # a binary of another commit
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/recurhq/recur/internal/recurproc"
)

// holdStep is how often, after the last attempt, the connections still
// open are counted.
const holdStep = 5 * time.Second

// config is what the flags ask for.
type config struct {
	conns    int
	parallel int
	hold     time.Duration
	bin      string
	keep     bool
}

func main() {
	var c config
	flag.IntVar(&c.conns, "conns", 20000, "slow connections to attempt")
	flag.IntVar(&c.parallel, "parallel", 256, "connection attempts under way at once")
	flag.DurationVar(&c.hold, "hold", 20*time.Second, "how long after the last attempt to keep counting the connections still open, every 5s")
	flag.StringVar(&c.bin, "bin", "", recurproc.BinUsage)
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (binary, data, recur.log)")
	healthOf := flag.String("health-of", "", "(the probe's own) ask /healthz of this API `URL` until stdin ends, then print the answers")
	pid := flag.Int("pid", 0, "(the probe's own, with -health-of) recur's process ID, to count its file descriptors")
	flag.Parse()
	if *healthOf != "" {
		if err := reportHealth(*healthOf, *pid); err != nil {
			fmt.Fprintln(os.Stderr, "slowclients -health-of:", err)
			os.Exit(1)
		}
		return
	}
	if c.conns < 1 || c.parallel < 1 || c.hold < holdStep {
		fmt.Fprintln(os.Stderr, "slowclients: -conns and -parallel must be positive, -hold at least 5s")
		os.Exit(2)
	}
	recurproc.Main("slowclients", func(ctx context.Context) error { return run(ctx, c) })
}

func run(ctx context.Context, c config) error {
	work, remove, err := recurproc.WorkDir("recur-slowclients-", c.keep)
	if err != nil {
		return err
	}
	defer remove()
	bin, err := recurproc.Binary(c.bin, work)
	if err != nil {
		return err
	}
	logPath := filepath.Join(work, "recur.log")
	p, err := recurproc.Start(bin, filepath.Join(work, "data"), logPath, false)
	if err != nil {
		return err
	}
	defer p.Kill()
	r := &report{cfg: c, loadStart: recurproc.LoadAverage(), fdsBefore: p.FDs()}
	addr := strings.TrimPrefix(p.API, "http://")

	health, err := startHealth(p.API, p.Pid())
	if err != nil {
		return err
	}
	f := newFlood(addr)
	started := time.Now()
	f.run(ctx, c.conns, c.parallel)
	r.attemptsTook = time.Since(started)
	log.Printf("%d attempts in %s; holding %s", c.conns, r.attemptsTook.Round(time.Millisecond), c.hold)
	last := time.Now()
	for at := holdStep; at <= c.hold && ctx.Err() == nil; at += holdStep {
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(last.Add(at))):
			r.stillOpen = append(r.stillOpen, f.snapshot().stillOpen)
		}
	}
	r.flood = f.snapshot()
	if r.health, err = health.stop(); err != nil {
		return err
	}
	f.closeAll()
	r.alive = p.Alive()
	r.loadEnd = recurproc.LoadAverage()
	r.logLines, r.tooManyFiles = scanLog(logPath)
	r.print()
	if !r.alive {
		return errors.New("recur dev died under the flood")
	}
	return p.Stop()
}

// scanLog returns the WARN and ERROR messages of recur's log with their
// counts, and how many lines say "too many open files".
func scanLog(path string) (lines map[string]int, tooManyFiles int) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, -1
	}
	lines = map[string]int{}
	for line := range strings.Lines(string(data)) {
		if strings.Contains(line, "too many open files") {
			tooManyFiles++
		}
		for _, level := range []string{`"level":"WARN"`, `"level":"ERROR"`} {
			if strings.Contains(line, level) {
				lines[level[9:len(level)-1]+" "+message(line)]++
			}
		}
	}
	return lines, tooManyFiles
}

// message returns the "msg" of a JSON log line.
func message(line string) string {
	_, rest, ok := strings.Cut(line, `"msg":"`)
	if !ok {
		return "?"
	}
	msg, _, _ := strings.Cut(rest, `"`)
	return msg
}

// errIsReset reports whether err is a connection reset or a broken pipe:
// the peer closed the connection at once.
func errIsReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
