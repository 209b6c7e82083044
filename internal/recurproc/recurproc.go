// Package recurproc runs the real recur binary for the tools that measure
// it (e2e/soak, e2e/firing, e2e/scale): it builds cmd/recur, starts
// `recur dev`, or a cluster and `recur serve` against it (Deploy), on free
// ports, waits until it is ready, stops it, and reads its CPU time, RSS,
// data directory and log.
package recurproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/recurhq/recur/internal/freeport"
)

// Build compiles cmd/recur into dir and returns the binary's path. It
// builds from the module root, wherever the tool was started.
func Build(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	bin := filepath.Join(dir, "recur")
	started := time.Now()
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/recur")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/recur: %w\n%s", err, out)
	}
	log.Printf("built %s in %s", bin, time.Since(started).Round(time.Second))
	return bin, nil
}

// BinUsage describes a bench tool's -bin flag, which Binary reads.
const BinUsage = "recur `binary` to run; by default this tree's cmd/recur is built"

// Binary returns bin, a recur binary the tool was given to measure, or
// when it is empty one built from this tree into dir.
func Binary(bin, dir string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	return Build(dir)
}

// Process is `recur dev` or `recur serve` running as a child process.
type Process struct {
	cmd      *exec.Cmd
	API      string
	Temporal string // the frontend's host:port
	Pprof    string // the URL of Go's profiles, when started with them
	UI       string // the Web UI's URL
	DataDir  string
	LogPath  string
	logFile  *os.File
	done     chan error
	exited   bool
}

// Start starts `recur dev` on free ports with its output in logPath
// and waits until /readyz answers 200. With profile, the process serves
// Go's profiles at Process.Pprof; extra flags follow recur's own.
func Start(bin, dataDir, logPath string, profile bool, extra ...string) (*Process, error) {
	ports, err := freeport.Pick("127.0.0.1", 3)
	if err != nil {
		return nil, err
	}
	p := &Process{Temporal: "127.0.0.1:" + strconv.Itoa(ports[1]), UI: "http://127.0.0.1:" + strconv.Itoa(ports[2]), DataDir: dataDir}
	args := []string{"dev", "--data-dir", dataDir,
		"--temporal-port", strconv.Itoa(ports[1]), "--ui-port", strconv.Itoa(ports[2]), "--retention", "3d"}
	args = append(args, extra...)
	if err := p.launch(bin, args, ports[0], logPath, profile); err != nil {
		return nil, err
	}
	log.Printf("recur dev (pid %d) ready: API %s, Temporal %s, Web UI %s, log %s", p.cmd.Process.Pid, p.API, p.Temporal, p.UI, logPath)
	return p, nil
}

// StartServe starts `recur serve` against the Temporal frontend at
// address, in namespace, with the encryption keys of keyFile, its API on a
// free port and its output in logPath, and waits until /readyz answers
// 200. With profile, the process serves Go's profiles at Process.Pprof;
// extra flags follow recur's own.
func StartServe(bin, address, namespace, keyFile, logPath string, profile bool, extra ...string) (*Process, error) {
	ports, err := freeport.Pick("127.0.0.1", 1)
	if err != nil {
		return nil, err
	}
	p := &Process{Temporal: address}
	// The measuring tools' HTTP targets listen on loopback, which serve
	// refuses by default (dev allows it); they measure what the cluster
	// takes, not serve's default rate limit per subscription, which
	// Schedules beside them do not meet (dev has none).
	args := []string{"serve", "--temporal-address", address, "--namespace", namespace, "--encryption-key-file", keyFile,
		"--egress-allow-loopback", "--rate-limit", "0"}
	args = append(args, extra...)
	if err := p.launch(bin, args, ports[0], logPath, profile); err != nil {
		return nil, err
	}
	log.Printf("recur serve (pid %d) ready: API %s, Temporal %s namespace %s, log %s", p.cmd.Process.Pid, p.API, address, namespace, logPath)
	return p, nil
}

// launch runs bin with args, its API on apiPort, and waits until it is
// ready.
func (p *Process) launch(bin string, args []string, apiPort int, logPath string, profile bool) error {
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	p.API, p.LogPath, p.logFile, p.done = "http://127.0.0.1:"+strconv.Itoa(apiPort), logPath, f, make(chan error, 1)
	args = append(args, "--http-addr", "127.0.0.1:"+strconv.Itoa(apiPort))
	if profile {
		ports, err := freeport.Pick("127.0.0.1", 1)
		if err != nil {
			f.Close()
			return err
		}
		p.Pprof = "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/debug/pprof/"
		args = append(args, "--pprof-addr", "127.0.0.1:"+strconv.Itoa(ports[0]))
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	// Its own process group keeps a terminal's Ctrl-C, which ends the
	// tool's running phase, from stopping recur before the final checks;
	// Pdeathsig stops it if the tool dies without cleaning up.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := p.cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start recur %s: %w", args[0], err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	if err := p.waitReady(90 * time.Second); err != nil {
		p.Kill()
		return fmt.Errorf("%w\n%s", err, p.logTail(30))
	}
	return nil
}

func (p *Process) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.done:
			p.exited = true
			return fmt.Errorf("recur exited before it was ready: %v", err)
		default:
		}
		resp, err := http.Get(p.API + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("recur was not ready within %s", limit)
}

// Alive tells whether the process still runs.
func (p *Process) Alive() bool {
	if p.exited {
		return false
	}
	select {
	case err := <-p.done:
		p.exited = true
		log.Printf("recur exited on its own: %v\n%s", err, p.logTail(30))
		return false
	default:
		return true
	}
}

// Stop sends SIGTERM and waits for a clean exit.
func (p *Process) Stop() error {
	if !p.Alive() {
		return errors.New("recur was no longer running at the end")
	}
	started := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("signal recur: %w", err)
	}
	select {
	case err := <-p.done:
		p.exited = true
		if err != nil {
			return fmt.Errorf("recur did not exit cleanly after SIGTERM: %w\n%s", err, p.logTail(30))
		}
		log.Printf("recur stopped cleanly on SIGTERM in %s", time.Since(started).Round(time.Millisecond))
		return nil
	case <-time.After(60 * time.Second):
		p.Kill()
		return errors.New("recur did not stop within 60s of SIGTERM")
	}
}

// Kill ends the process if it still runs; it is the safety net of stop.
func (p *Process) Kill() {
	if !p.exited {
		_ = p.cmd.Process.Kill()
		<-p.done
		p.exited = true
	}
	p.logFile.Close()
}

// RSS returns recur's resident set size in kB, -1 when it cannot be read.
func (p *Process) RSS() int { return RSSOf(p.cmd.Process.Pid) }

// CPU returns the CPU time recur used so far, -1 when it cannot be read.
func (p *Process) CPU() time.Duration { return CPUOf(p.cmd.Process.Pid) }

// FDs returns the number of file descriptors recur has open, -1 when it
// cannot be read.
func (p *Process) FDs() int { return FDsOf(p.cmd.Process.Pid) }

// Pid returns recur's process ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// FDsOf returns the number of file descriptors process pid has open, from
// /proc, -1 when it cannot be read.
func FDsOf(pid int) int {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(entries)
}

// RSSOf returns the resident set size of process pid in kB from /proc, -1
// when it cannot be read.
func RSSOf(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err == nil {
				return kb
			}
		}
	}
	return -1
}

// CPUOf returns the CPU time (user + system) process pid used so far,
// from /proc/<pid>/stat, counted in the kernel's usual 100 ticks a second;
// -1 when it cannot be read.
func CPUOf(pid int) time.Duration { return statCPU(pid, false) }

// TreeCPUOf returns the CPU time process pid and its children used so far:
// its own, what its children that ended used (the kernel adds it to
// theirs when they are waited for) and what its live children used, as
// a PostgreSQL server's backends. -1 when it cannot be read.
func TreeCPUOf(pid int) time.Duration {
	total := statCPU(pid, true)
	if total < 0 {
		return -1
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || parentOf(child) != pid {
			continue
		}
		if d := statCPU(child, true); d > 0 {
			total += d
		}
	}
	return total
}

// statFields returns the fields of /proc/<pid>/stat after the command
// name, which may hold spaces.
func statFields(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	_, rest, ok := strings.Cut(string(data), ") ")
	if !ok {
		return nil
	}
	return strings.Fields(rest)
}

// parentOf returns the parent of process pid, -1 when it cannot be read.
func parentOf(pid int) int {
	f := statFields(pid)
	if len(f) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return ppid
}

// statCPU returns user + system time of process pid, with that of its
// waited-for children when children is set; -1 when it cannot be read.
func statCPU(pid int, children bool) time.Duration {
	f := statFields(pid)
	if len(f) < 15 {
		return -1
	}
	fields := f[11:13]
	if children {
		fields = f[11:15]
	}
	var ticks int64
	for _, v := range fields {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return -1
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// LoadAverage returns the machine's 1-minute load average, as text.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	load, _, _ := strings.Cut(string(data), " ")
	return load
}

// DataSize returns the bytes of the data directory (the SQLite database
// and its journal).
func (p *Process) DataSize() int64 { return dirBytes(p.DataDir) }

// dirBytes returns the bytes of the files under dir.
func dirBytes(dir string) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	return total
}

// LogLevels counts the WARN and ERROR lines of recur's log by message, so
// that the report can show what went wrong inside. It reads JSON lines
// (recur's default) and slog's text lines (--log-format text).
func (p *Process) LogLevels() (warn, errs map[string]int) {
	warn, errs = map[string]int{}, map[string]int{}
	f, err := os.Open(p.LogPath)
	if err != nil {
		return warn, errs
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		switch level, msg := logEntry(sc.Text()); level {
		case "WARN":
			warn[msg]++
		case "ERROR":
			errs[msg]++
		}
	}
	return warn, errs
}

// logEntry returns the level and msg of a log line, JSON or slog text;
// a line that is neither has no level and is its own message.
func logEntry(line string) (level, msg string) {
	var entry struct{ Level, Msg string }
	if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &entry) == nil {
		return entry.Level, entry.Msg
	}
	switch {
	case strings.Contains(line, "level=WARN"):
		level = "WARN"
	case strings.Contains(line, "level=ERROR"):
		level = "ERROR"
	}
	return level, logMessage(line)
}

// logMessage returns the msg of a slog text line.
func logMessage(line string) string {
	_, rest, ok := strings.Cut(line, " msg=")
	if !ok {
		return line
	}
	if strings.HasPrefix(rest, `"`) {
		if s, err := strconv.QuotedPrefix(rest); err == nil {
			if u, err := strconv.Unquote(s); err == nil {
				return u
			}
		}
	}
	msg, _, _ := strings.Cut(rest, " ")
	return msg
}

// logTail returns the last n lines of recur's log.
func (p *Process) logTail(n int) string {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Profile saves the profile named (net/http/pprof's "profile", "heap",
// ...) with query (such as "seconds=60") to path; the process must have
// been started with profiles.
func (p *Process) Profile(ctx context.Context, name, query, path string) error {
	if p.Pprof == "" {
		return errors.New("recur was started without --pprof-addr")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.Pprof+name+"?"+query, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile %s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", name, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("profile %s: %w", name, err)
	}
	return f.Close()
}

// Settings lists the RECUR_ variables of this process's environment, which
// the recur dev it starts inherits as its flags' defaults: a measurement
// reports them beside its figures.
func Settings() string {
	var set []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "RECUR_") {
			set = append(set, kv)
		}
	}
	if len(set) == 0 {
		return "none (recur's defaults)"
	}
	return strings.Join(set, " ")
}
